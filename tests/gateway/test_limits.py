"""What an address holds (gateway/limits.py) on the shared Redis, under a prefix of its own: rooms
and seats count while their room is a lobby or a running game (issue 34: a started game left every
cap, and 80 of them from one IPv6 /56 held the server)."""
import secrets

import pytest

from actors.redis_connect import connect
from actors.store import Keys
from gateway.limits import SITE_SHARE, AddressLimits


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


async def test_a_running_game_is_held_like_a_lobby_and_a_finished_one_is_not(held):
    redis, keys, limits = held
    address = "198.51.100.7"
    for code, status in (("LOBBY1", "lobby"), ("GAME01", "running"), ("OVER01", "finished")):
        await limits.hold("lobbies", address, await room(redis, keys, code, status), code)
        await limits.hold("seats", address, code, f"{code}:3")
    for what in ("lobbies", "seats"):
        assert await limits.holds_too_much(what, address, 2)  # the lobby and the game
        assert not await limits.holds_too_much(what, address, 3)  # the finished one let go


async def test_running_games_fill_an_ipv6_site_s_share(held):
    """Each /64 of a /56 under its own cap, their running games together fill the site's."""
    redis, keys, limits = held
    site = [f"2001:db8:0:1{i:02x}::" for i in range(SITE_SHARE)]
    for i, address in enumerate(site):
        code = await room(redis, keys, f"GAME{i:02d}", "running")
        await limits.hold("lobbies", address, code, code)
        assert not await limits.holds_too_much("lobbies", address, 2)
    newcomer = "2001:db8:0:1ff::"  # another /64 of the same /56, holding nothing itself
    assert await limits.holds_too_much("lobbies", newcomer, 1)
    assert not await limits.holds_too_much("lobbies", "2001:db8:0:200::", 1)  # another /56
