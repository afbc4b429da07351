"""Which cluster owns a key prefix: `P:stack`, a lease holding the owner's Ray session name.

Two stacks on one Redis with one prefix would share rooms, hosts and host names: the second
one's placement would restart the first one's hosts in its own Ray and take their rooms over.
So a gateway claims the prefix for its Ray cluster before it creates the placement actor, the
placement actor renews the claim every third of STACK_LEASE while its cluster lives, and a
gateway of another cluster is refused while the lease is held (`PrefixTaken`). A stack that stops
cleanly releases the lease (`werewolf serve` does); one that was killed frees it STACK_LEASE
seconds later.
"""
from __future__ import annotations

import redis.asyncio as aioredis

from actors.store import Keys

STACK_LEASE = 20  # seconds

# Take or renew the lease if it is free or ours; else return the owner.
_CLAIM = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return owner end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class PrefixTaken(RuntimeError):
    def __init__(self, prefix: str, owner: str, ttl: int) -> None:
        super().__init__(
            f"WW_PREFIX {prefix!r} is in use on this Redis by another live cluster (Ray session "
            f"{owner}; its lease, renewed while that cluster runs, has {ttl} s left). Give this "
            f"stack a prefix of its own (WW_PREFIX or --prefix), or stop the other one.")
        self.prefix, self.owner = prefix, owner


async def claim(redis: aioredis.Redis, prefix: str, session: str) -> None:
    """Take or renew `prefix` for the Ray session `session`; PrefixTaken if another one holds it."""
    key = Keys(prefix).stack()
    owner = await redis.eval(_CLAIM, 1, key, session, STACK_LEASE)
    if owner is not None:
        raise PrefixTaken(prefix, owner.decode(), max(0, await redis.ttl(key)))


async def owner(redis: aioredis.Redis, prefix: str) -> str | None:
    raw = await redis.get(Keys(prefix).stack())
    return None if raw is None else raw.decode()


async def release(redis: aioredis.Redis, prefix: str, session: str) -> bool:
    return bool(await redis.eval(_RELEASE, 1, Keys(prefix).stack(), session))
