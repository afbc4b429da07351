"""Per-address abuse limits, counted in Redis so that every gateway replica shares them.

A fixed window per address (WW_LIMIT_WINDOW seconds, 10 minutes by default):
`P:limit:{what}:{address}:{window}` is INCRemented and expires with its window. The address is the
client's IP as uvicorn reports it (behind a proxy, set uvicorn's FORWARDED_ALLOW_IPS so
X-Forwarded-For is believed); an IPv6 client counts by its /64, since one host usually holds the
whole /64.
"""
from __future__ import annotations

import asyncio
import ipaddress
import time

import redis.asyncio as aioredis

from actors.store import Keys, patiently


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


class AddressLimits:
    def __init__(self, redis: aioredis.Redis, keys: Keys, patience: float, window: int) -> None:
        self._redis = redis
        self._keys = keys
        self._patience = patience  # seconds a count retries while Redis is unreachable
        self._window = window

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
