"""What an address holds (gateway/limits.py) on the shared Redis, under a prefix of its own: rooms
and seats count while their room is a lobby or a running game (issue 34: a started game left every
cap, and 80 of them from one IPv6 /56 held the server). A process's bursts, on a fake clock."""
import asyncio
import secrets
import time

import pytest

from actors.redis_connect import connect
from actors.store import Keys
from gateway.limits import RESERVATION_SECONDS, SITE_SHARE, SWEEP_AT, AddressLimits, Bursts


@pytest.fixture
async def held(redis_url):
    redis = connect(redis_url)
    keys = Keys("t" + secrets.token_hex(5))
    yield redis, keys, AddressLimits(redis, keys, patience=1.0, window=600)
    stale = [key async for key in redis.scan_iter(f"{keys.prefix}:*")]
    if stale:
        await redis.delete(*stale)
    await redis.aclose()


async def room(redis, keys, code: str, status: str) -> str:
    await redis.hset(keys.room(code), "status", status)
    return code


async def holds_too_much(limits: AddressLimits, what: str, address: str, limit: int) -> bool:
    """Whether one more `what` of `address` is refused (one that is not, is let go again)."""
    reservation = await limits.reserve(what, address, limit)
    if reservation is not None:
        await limits.unreserve(what, address, reservation)
    return reservation is None


async def test_a_running_game_is_held_like_a_lobby_and_a_finished_one_is_not(held):
    redis, keys, limits = held
    address = "198.51.100.7"
    for code, status in (("LOBBY1", "lobby"), ("GAME01", "running"), ("OVER01", "finished")):
        await limits.hold("lobbies", address, await room(redis, keys, code, status), code)
        await limits.hold("seats", address, code, f"{code}:3")
    for what in ("lobbies", "seats"):
        assert await holds_too_much(limits, what, address, 2)  # the lobby and the game
        assert not await holds_too_much(limits, what, address, 3)  # the finished one let go


async def test_running_games_fill_an_ipv6_site_s_share(held):
    """Each /64 of a /56 under its own cap, their running games together fill the site's."""
    redis, keys, limits = held
    site = [f"2001:db8:0:1{i:02x}::" for i in range(SITE_SHARE)]
    for i, address in enumerate(site):
        code = await room(redis, keys, f"GAME{i:02d}", "running")
        await limits.hold("lobbies", address, code, code)
        assert not await holds_too_much(limits, "lobbies", address, 2)
    newcomer = "2001:db8:0:1ff::"  # another /64 of the same /56, holding nothing itself
    assert await holds_too_much(limits, "lobbies", newcomer, 1)
    assert not await holds_too_much(limits, "lobbies", "2001:db8:0:200::", 1)  # another /56


async def test_concurrent_requests_never_reserve_past_the_cap_and_a_reservation_counts(held):
    """Reserved first, counted after: 40 requests at once, a cap of 5, at most 5 reserved (each
    counting, then holding, let 106 presses at once past a cap of 40); a reservation counts as
    held until it is let go, and one whose gateway died counts RESERVATION_SECONDS at most."""
    redis, keys, limits = held
    address = "198.51.100.8"
    reservations = await asyncio.gather(*(limits.reserve("seats", address, 5) for _ in range(40)))
    kept = [r for r in reservations if r is not None]
    assert len(kept) == 5  # the first five Redis took
    for reservation in kept[1:]:
        await limits.unreserve("seats", address, reservation)
    assert await holds_too_much(limits, "seats", address, 1)  # the one left counts
    # A reservation left behind (its gateway died) is counted until it is stale.
    await redis.zadd(keys.held("seats", address),
                     {kept[0]: time.time() - RESERVATION_SECONDS - 1})
    assert not await holds_too_much(limits, "seats", address, 1)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_pace_per_address_and_kind():
    clock = Clock()
    bursts = Bursts({"quickplay": (3, 2.0), "reports": (0, 1.0)}, clock)
    assert [bursts.wait("quickplay", "a") for _ in range(3)] == [0, 0, 0]
    assert bursts.wait("quickplay", "a") == pytest.approx(2.0)  # refused: counted nothing
    assert bursts.wait("quickplay", "a") == pytest.approx(2.0)
    assert bursts.wait("quickplay", "b") == 0  # another address has its own
    clock.now += 1.5
    assert bursts.wait("quickplay", "a") == pytest.approx(0.5)
    clock.now += 0.5
    assert bursts.wait("quickplay", "a") == 0  # one more at the pace...
    assert bursts.wait("quickplay", "a") == pytest.approx(2.0)  # ...and only one
    clock.now += 60
    assert [bursts.wait("quickplay", "a") for _ in range(4)][-1] > 0  # the burst whole, no more
    assert all(bursts.wait("reports", "a") == 0 for _ in range(100))  # burst 0: off
    assert bursts.wait("review", "a") == 0  # a kind with no burst


def test_the_addresses_whose_burst_is_whole_are_forgotten():
    clock = Clock()
    bursts = Bursts({"quickplay": (2, 1.0)}, clock)
    for i in range(SWEEP_AT * 4):
        bursts.wait("quickplay", f"10.0.{i // 256}.{i % 256}")
        clock.now += 0.01  # each address whole again 1 s after its request
    assert len(bursts._due) < SWEEP_AT  # noqa: SLF001 (what the process keeps)
