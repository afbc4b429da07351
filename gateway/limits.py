"""Per-address abuse limits, counted in Redis so that every gateway replica shares them.

A fixed window per address (WW_LIMIT_WINDOW seconds, 10 minutes by default):
`P:limit:{what}:{address}:{window}` is INCRemented and expires with its window. Besides the rates,
what an address holds now: the rooms it opened (by link or by a quick-play press that opened a
table) and the seats it took (`P:held:{what}:{address}`, a sorted set by time), each counted while
its room is a lobby or a running game (a started game held by one socket held its host slot out of
every cap: issue 34), until it ends or passes a room's maximum age, per address and, for IPv6, per
/56 too. The address is the
client's IP as uvicorn reports it (behind a proxy, set uvicorn's FORWARDED_ALLOW_IPS so
X-Forwarded-For is believed); an IPv6 client counts by its /64, since one host usually holds the
whole /64.

A burst (`Bursts`) is counted in each gateway process instead: how many requests of a kind an
address may make at once, then at what pace. What it spares is that process's event loop, which
every socket it serves waits on.
"""
from __future__ import annotations

import asyncio
import ipaddress
import secrets
import time

import redis.asyncio as aioredis

from actors import Keys, patiently


def client_address(host: str | None) -> str:
    try:
        ip = ipaddress.ip_address(host or "")
    except ValueError:
        return host or "unknown"
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
    return str(ip)


def address_groups(address: str) -> list[tuple[str, int]]:
    """The groups an address counts in for what it holds, with how many of the per-address cap
    each may hold: the address itself, and for IPv6 its /56 (a site often holds a /56 of /64s)."""
    try:
        network = ipaddress.ip_network(f"{address}/56", strict=False) if ":" in address else None
    except ValueError:
        network = None
    return [(address, 1)] + ([(f"{network.network_address}/56", SITE_SHARE)] if network else [])


SITE_SHARE = 4  # an IPv6 /56 holds this many times what one /64 may hold
HELD_STATUSES = (b"lobby", b"running")  # a room holds its host slot until it is over
# A place reserved for a request in progress (`reserve`), counted until the request settles it
# (`hold` and `unreserve`), or RESERVATION_SECONDS at most if its gateway died meanwhile.
RESERVED = "+"
RESERVATION_SECONDS = 60
# Adds reservation ARGV[1] to KEYS[1] (expiring in ARGV[2] s) at Redis's own time: the
# reservations of one key are in the order Redis took them, whichever gateway made them.
_RESERVE = """
local now = redis.call('TIME')
redis.call('ZADD', KEYS[1], now[1] .. '.' .. string.format('%06d', now[2]), ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
"""


class AddressLimits:
    def __init__(self, redis: aioredis.Redis, keys: Keys, patience: float, window: int,
                 room_max_age: int = 0) -> None:
        self._redis = redis
        self._keys = keys
        self._patience = patience  # seconds a count retries while Redis is unreachable
        self._window = window
        self._max_age = room_max_age  # seconds a room lives at most, lobby and game (0: no limit)
        self._reserve = redis.register_script(_RESERVE)

    def _key(self, what: str, address: str) -> str:
        return self._keys.limit(what, address, int(time.time() // self._window))

    async def spent(self, what: str, address: str) -> int:
        """How much `address` used of `what` in the current window. Both calls retry while
        Redis is unreachable, then raise StorageUnavailable (a 503)."""
        key = self._key(what, address)
        used = await patiently(lambda: self._redis.get(key), f"limit {what}", self._deadline())
        return int(used or 0)

    async def spend(self, what: str, address: str) -> int:
        """Count one more; returns the count in the current window, this one included."""
        key = self._key(what, address)

        async def count() -> int:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, self._window)
                counted, _ = await pipe.execute()
            return counted
        return await patiently(count, f"limit {what}", self._deadline())

    def _deadline(self) -> float:
        return asyncio.get_running_loop().time() + self._patience

    def retry_after(self) -> int:
        """Seconds until the current window ends."""
        return self._window - int(time.time()) % self._window

    async def reserve(self, what: str, address: str, limit: int) -> str | None:
        """Reserve one more `what` ("lobbies": a room it opens, "seats": a seat it takes) for
        `address` before the request takes it, counting only rooms not over (lobbies and running
        games): the reservation (returned, to `unreserve` once the request is settled), or None
        if `address` (or its IPv6 /56) would hold more than `limit` (> 0). Reserved first, counted
        after with the reservations made before it, so concurrent requests never hold more than
        `limit` between them (120 presses at once were seated 106 times against a cap of 40 when
        each counted, then held), and the first of them are not refused for the later ones."""
        item = RESERVED + secrets.token_hex(8)
        groups = address_groups(address)
        for group, _ in groups:
            key = self._keys.held(what, group)
            await patiently(lambda: self._reserve(keys=[key], args=[item, self._ttl()]),
                            f"held {what}", self._deadline())
        for group, share in groups:
            if await patiently(lambda: self._held(what, group, item), f"held {what}",
                               self._deadline()) > limit * share:
                await self.unreserve(what, address, item)
                return None
        return item

    async def unreserve(self, what: str, address: str, item: str) -> None:
        """Let go of a reservation of `reserve` (its request settled: held, or refused)."""
        for group, _ in address_groups(address):
            key = self._keys.held(what, group)
            await patiently(lambda: self._redis.zrem(key, item), f"held {what}",
                            self._deadline())

    async def hold(self, what: str, address: str, code: str, item: str) -> None:
        """`address` now holds `item` of room `code` (a lobby: its code; a seat: code:seat)."""
        now = time.time()
        for group, _ in address_groups(address):
            key = self._keys.held(what, group)

            async def add() -> None:
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.zadd(key, {item: now})
                    pipe.expire(key, self._ttl())
                    await pipe.execute()
            await patiently(add, f"held {what}", self._deadline())

    def _ttl(self) -> int:
        return self._max_age or 86400

    async def _held(self, what: str, group: str, mine: str) -> int:
        """What `group` holds of `what`: its rooms not over, and its live reservations up to
        `mine` in the order Redis took them."""
        key = self._keys.held(what, group)
        if self._max_age:
            await self._redis.zremrangebyscore(key, 0, time.time() - self._max_age)
        fresh = time.time() - RESERVATION_SECONDS
        items = [(item.decode(), when)
                 for item, when in await self._redis.zrange(key, 0, -1, withscores=True)]
        codes = sorted({item.partition(":")[0] for item, _ in items
                        if not item.startswith(RESERVED)})
        statuses = {}
        if codes:
            pipe = self._redis.pipeline(transaction=False)  # one slot each on a cluster
            for code in codes:
                pipe.hget(self._keys.room(code), "status")
            statuses = dict(zip(codes, await pipe.execute()))
        gone = [item for item, when in items if (when < fresh if item.startswith(RESERVED)
                else statuses[item.partition(":")[0]] not in HELD_STATUSES)]
        if gone:
            await self._redis.zrem(key, *gone)
        mine_at = next(((when, item) for item, when in items if item == mine), None)
        later = [item for item, when in items if item.startswith(RESERVED) and mine_at
                 and (when, item) > mine_at and item not in gone]
        return len(items) - len(gone) - len(later)


class Bursts:
    """Per-address bursts of this process: of `what`, `burst` requests at once, then one every
    `pace` seconds (the generic cell rate algorithm: an address's time is when its next request
    is due if it keeps the pace; a full burst is no entry at all). 120 quick-play presses at once
    from one address cost the gateway 0.5 s of CPU, each counted in Redis against its limits, and
    held the honest tables' commands up to 228 ms (issue 34); past its burst a request is refused
    before the app reads it."""

    def __init__(self, rates: dict[str, tuple[int, float]], clock=time.monotonic) -> None:
        self._rates = {what: rate for what, rate in rates.items() if rate[0] > 0}
        self._clock = clock
        self._due: dict[tuple[str, str], float] = {}
        self._swept_at = SWEEP_AT

    def wait(self, what: str, address: str) -> float:
        """0 and the request counted, or the seconds until `address` may make one more `what`."""
        rate = self._rates.get(what)
        if rate is None:
            return 0.0
        burst, pace = rate
        now, key = self._clock(), (what, address)
        due = max(self._due.get(key, now), now)
        early = due - now - (burst - 1) * pace  # > 0: the burst is spent
        if early > 0:
            return early
        self._due[key] = due + pace
        if len(self._due) >= self._swept_at:
            self._sweep(now)
        return 0.0

    def _sweep(self, now: float) -> None:
        """Forget the addresses whose burst is whole again; sweep again at twice what is left,
        so that the sweeps cost O(1) a request however many addresses come."""
        self._due = {key: due for key, due in self._due.items() if due > now}
        self._swept_at = max(SWEEP_AT, 2 * len(self._due))


SWEEP_AT = 1024  # addresses tracked before the first sweep of the whole ones
