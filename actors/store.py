"""Room persistence: the Redis layout of docs/architecture.md, and an in-memory twin for tests.

One `persist` is atomic (one Lua script on Redis): check the writer's epoch is still the room's,
check the log is exactly as long as the writer thinks, SET the snapshot, RPUSH the events, PUBLISH
each one, and, when the room reaches a final status, release it from its host and give its keys a
TTL. A room acknowledges a command only after `persist` returned; with `wait_replicas`, only
after `WAIT` saw that many replicas take the write (and only then are its events published, so no
socket sees an event that a failover could still take back).

`connect` takes a plain `redis://` URL or a Sentinel one, `redis+sentinel://h1:p1,h2:p2/SERVICE[/DB]`
(every user of Redis in the project connects through it, so all follow a failover).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import orjson
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError, TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)
T = TypeVar("T")

FINAL = ("finished", "broken")


REDIS_CONNECTIONS = 64  # per process; more concurrent commands wait for a free connection
INBOX_TAKE = 512  # requests a host takes from its inbox at once
WAIT_TIMEOUT_MS = 1000  # how long a persist waits for its replicas before it counts as failed
SENTINEL_SCHEME = "redis+sentinel"


class _BlockingSentinelPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """Sentinel's pool (asks the sentinels where the primary is at each new connection) that
    waits for a free connection like `connect`'s plain pool."""


def connect(url: str) -> aioredis.Redis:
    """A client whose pool makes callers wait for a connection instead of failing: redis-py's
    default pool raises MaxConnectionsError past 100 concurrent commands, which a busy host or
    gateway reaches. A `redis+sentinel://` URL gives a client of the service's current primary."""
    if urlsplit(url).scheme == SENTINEL_SCHEME:
        sentinels, service, options = parse_sentinel_url(url)
        sentinel = Sentinel(sentinels, socket_timeout=1.0, password=options.get("password"))
        return sentinel.master_for(service, connection_pool_class=_BlockingSentinelPool,
                                   max_connections=REDIS_CONNECTIONS, timeout=30,
                                   socket_timeout=None, **options)
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=REDIS_CONNECTIONS, timeout=30)
    return aioredis.Redis.from_pool(pool)


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], str, dict]:
    """`redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]` -> (sentinels, service,
    keyword options of the primary's connections)."""
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    sentinels = []
    for item in hosts.split(","):
        host, _, port = item.rpartition(":")
        sentinels.append((host or item, int(port) if host else 26379))
    service, _, db = parts.path.strip("/").partition("/")
    if not service:
        raise ValueError(f"{url}: no Sentinel service name (redis+sentinel://HOST:PORT/SERVICE)")
    options: dict = {"db": int(db or 0)}
    if credentials:
        options["password"] = unquote(credentials.partition(":")[2])
    return sentinels, service, options


async def persistence(redis: aioredis.Redis) -> str | None:
    """None if this Redis keeps its writes on disk (an append-only file), else what it keeps."""
    info = await redis.info("persistence")
    if info.get("aof_enabled"):
        return None
    try:
        save = (await redis.config_get("save")).get("save", "")
    except Exception:  # CONFIG refused (a managed Redis): only INFO can tell
        save = ""
    if save:
        return f"RDB snapshots only (save {save!r}): a restart loses every write since the last one"
    return "nothing on disk (no append-only file, no snapshots): a restart loses every room"


class NotReplicated(Exception):
    """WAIT saw fewer replicas take a write than asked: it may not survive a failover."""


async def patiently(op: Callable[[], Awaitable[T]], what: str) -> T:
    """Run `op`, retrying while Redis is unreachable. Actor constructors use it: an actor whose
    constructor raised would not be restarted, and its rooms would stop."""
    pause = 0.1
    while True:
        try:
            return await op()
        except (RedisConnectionError, RedisTimeoutError, OSError) as e:
            log.warning("%s: %r; retrying in %.1f s", what, e, pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, 5.0)


class StaleEpoch(Exception):
    """A newer epoch owns the room: this writer is a leftover and must stop."""


class OutOfSync(Exception):
    """The stored log is not where this writer expected: reload the room before writing again."""


class Store(Protocol):
    async def claim(self, code: str, host: str) -> int:
        """Make `host` the room's owner with a new epoch (which fences every older writer)."""

    async def load(self, code: str) -> bytes | None: ...

    async def status(self, code: str) -> dict[str, str]: ...

    async def host_rooms(self, host: str) -> list[str]: ...

    async def live_gateways(self, ids: list[str]) -> set[str]: ...

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes, status: str,
                      first_seq: int, events: list[bytes], tokens: dict[str, int]) -> None: ...

    async def take_requests(self, host: str, wait: float) -> list[bytes]:
        """The requests waiting in the host's inbox, in order (waits up to `wait` s for one)."""

    async def publish_stored(self, code: str, after_seq: int) -> None:
        """Make sure the stored events after `after_seq` reached the room's channel: a persist
        whose outcome the writer never learnt (a lost reply, or too few replicas in time) may
        have stored events nobody was told about. Raises NotReplicated if they still are not
        on `wait_replicas` replicas (then they must not be shown yet)."""

    async def reply(self, gateway: str, message: bytes) -> None:
        """Deliver `message` (replies to requests of that gateway process) to the gateway."""


class Keys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def room(self, code: str) -> str:  # directory hash, and the room's pub/sub channel
        return f"{self.prefix}:room:{code}"

    def state(self, code: str) -> str:
        return f"{self.prefix}:room:{code}:state"

    def log(self, code: str) -> str:
        return f"{self.prefix}:room:{code}:log"

    def tokens(self, code: str) -> str:
        return f"{self.prefix}:room:{code}:tokens"

    def host_rooms(self, host: str) -> str:
        return f"{self.prefix}:host:{host}:rooms"

    def hosts(self) -> str:  # sorted set: host actor name -> rooms placed on it
        return f"{self.prefix}:hosts"

    def host_seq(self) -> str:
        return f"{self.prefix}:hostseq"

    def gateway(self, gateway_id: str) -> str:  # a gateway process's presence lease (a TTL key)
        return f"{self.prefix}:gateway:{gateway_id}"

    def inbox(self, host: str) -> str:  # list: requests for a host actor, oldest first
        return f"{self.prefix}:host:{host}:inbox"

    def replies(self, gateway_id: str) -> str:  # pub/sub channel: replies to a gateway process
        return f"{self.prefix}:replies:{gateway_id}"


_CLAIM = """
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'host', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return epoch
"""

# KEYS: room, state, log, tokens, host_rooms, hosts
# ARGV: epoch, snapshot, status, first_seq, channel, ttl, host, code, ntokens, (hash, seat)*, events*
_PERSIST = """
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[4]) - 1 then return -2 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'status', ARGV[3])
local ntokens = tonumber(ARGV[9])
local i = 10
for _ = 1, ntokens do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  i = i + 2
end
for j = i, #ARGV do
  redis.call('RPUSH', KEYS[3], ARGV[j])
  if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], ARGV[j]) end
end
if ARGV[3] == 'finished' or ARGV[3] == 'broken' then
  redis.call('SREM', KEYS[5], ARGV[8])
  redis.call('ZINCRBY', KEYS[6], -1, ARGV[7])
  for k = 1, 4 do redis.call('EXPIRE', KEYS[k], ARGV[6]) end
end
return 1
"""


class RedisStore:
    def __init__(self, redis: aioredis.Redis, prefix: str, finished_ttl: int,
                 wait_replicas: int = 0) -> None:
        self.redis = redis
        self.keys = Keys(prefix)
        self.finished_ttl = finished_ttl
        self.wait_replicas = wait_replicas
        self._claim = redis.register_script(_CLAIM)
        self._persist = redis.register_script(_PERSIST)

    async def claim(self, code: str, host: str) -> int:
        k = self.keys
        return int(await self._claim(keys=[k.room(code), k.host_rooms(host)], args=[host, code]))

    async def load(self, code: str) -> bytes | None:
        return await self.redis.get(self.keys.state(code))

    async def status(self, code: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self.keys.room(code))
        return {key.decode(): value.decode() for key, value in raw.items()}

    async def host_rooms(self, host: str) -> list[str]:
        return sorted(code.decode() for code in await self.redis.smembers(self.keys.host_rooms(host)))

    async def live_gateways(self, ids: list[str]) -> set[str]:
        """The gateway processes among `ids` whose presence lease has not lapsed."""
        leases = await self.redis.mget([self.keys.gateway(i) for i in ids])
        return {i for i, lease in zip(ids, leases) if lease is not None}

    async def events_after(self, code: str, since: int, upto: int | None = None) -> list[dict]:
        """Stored events with since < seq <= upto (to the end if upto is None), in order."""
        if upto is not None and upto <= since:
            return []
        raw = await self.redis.lrange(self.keys.log(code), max(since, 0), -1 if upto is None else upto - 1)
        return [orjson.loads(item) for item in raw]

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes, status: str,
                      first_seq: int, events: list[bytes], tokens: dict[str, int]) -> None:
        k = self.keys
        args: list = [epoch, snapshot, status, first_seq, k.room(code), self.finished_ttl, host, code,
                      len(tokens)]
        for token_hash, seat in tokens.items():
            args += [token_hash, seat]
        args += events
        keys = [k.room(code), k.state(code), k.log(code), k.tokens(code), k.host_rooms(host), k.hosts()]
        if not self.wait_replicas:
            _check(await self._persist(keys=keys, args=args))
            return
        # WAIT counts the replicas that have this connection's writes: script and WAIT share
        # one connection (a pipeline). The script publishes nothing (empty channel); the events
        # go out once replicated, in order (a room persists one group at a time).
        args[4] = ""
        async with self.redis.pipeline(transaction=False) as pipe:
            await self._persist(keys=keys, args=args, client=pipe)
            pipe.execute_command("WAIT", self.wait_replicas, WAIT_TIMEOUT_MS)
            result, replicas = await pipe.execute()
        _check(result)
        if replicas < self.wait_replicas:
            raise NotReplicated(f"{replicas} of {self.wait_replicas} replicas took the write")
        if events:
            async with self.redis.pipeline(transaction=False) as pipe:
                for event in events:
                    pipe.publish(k.room(code), event)
                await pipe.execute()

    async def take_requests(self, host: str, wait: float) -> list[bytes]:
        inbox = self.keys.inbox(host)
        first = await self.redis.blpop([inbox], timeout=wait)
        if first is None:
            return []
        rest = await self.redis.lpop(inbox, INBOX_TAKE - 1)
        return [first[1], *(rest or [])]

    async def reply(self, gateway: str, message: bytes) -> None:
        await self.redis.publish(self.keys.replies(gateway), message)

    async def publish_stored(self, code: str, after_seq: int) -> None:
        if not self.wait_replicas:
            return  # the persist script published them with the write, atomically
        # A write on this connection (a no-op increment) and WAIT for it: replication is in
        # order, so once the replicas have it they have every earlier write of the room too.
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hincrby(self.keys.room(code), "confirmed", 0)
            pipe.execute_command("WAIT", self.wait_replicas, WAIT_TIMEOUT_MS)
            pipe.lrange(self.keys.log(code), after_seq, -1)
            _, replicas, events = await pipe.execute()
        if replicas < self.wait_replicas:
            raise NotReplicated(f"{replicas} of {self.wait_replicas} replicas have room {code}")
        if events:
            async with self.redis.pipeline(transaction=False) as pipe:
                for event in events:
                    pipe.publish(self.keys.room(code), event)
                await pipe.execute()


def _check(result: int) -> None:
    if result == -1:
        raise StaleEpoch()
    if result == -2:
        raise OutOfSync()


class MemoryStore:
    """The same contract in memory, for tests of Room and RoomHost without Redis.

    `fail` makes persists raise (a storage outage) until cleared; `gate`, when not None, holds every
    persist until the event is set (`held` tells the test one is waiting), so a test can see that
    nothing is acknowledged before it is stored.
    """

    def __init__(self) -> None:
        self.rooms: dict[str, dict[str, str]] = {}
        self.snapshots: dict[str, bytes] = {}
        self.logs: dict[str, list[bytes]] = {}
        self.tokens: dict[str, dict[str, int]] = {}
        self.hosted: dict[str, set[str]] = {}
        self.gateways: set[str] = set()  # the gateway processes whose lease is live
        self.fail: Exception | None = None
        self.gate: asyncio.Event | None = None
        self.held = asyncio.Event()  # set once a persist is waiting at the gate
        self._changed = asyncio.Condition()
        self.inboxes: dict[str, asyncio.Queue] = {}
        self.replies: dict[str, list[bytes]] = {}  # gateway -> reply messages, in order

    def _inbox(self, host: str) -> asyncio.Queue:
        return self.inboxes.setdefault(host, asyncio.Queue())

    def send_request(self, host: str, raw: bytes) -> None:
        """What a gateway's RPUSH does."""
        self._inbox(host).put_nowait(raw)

    async def take_requests(self, host: str, wait: float) -> list[bytes]:
        inbox = self._inbox(host)
        try:
            first = await asyncio.wait_for(inbox.get(), wait)
        except asyncio.TimeoutError:
            return []
        rest = []
        while not inbox.empty():
            rest.append(inbox.get_nowait())
        return [first, *rest]

    async def publish_stored(self, code: str, after_seq: int) -> None:
        """Nothing to do: a persist here is atomic, so nothing is stored unannounced."""

    async def reply(self, gateway: str, message: bytes) -> None:
        self.replies.setdefault(gateway, []).append(message)
        async with self._changed:
            self._changed.notify_all()

    async def claim(self, code: str, host: str) -> int:
        room = self.rooms.setdefault(code, {"epoch": "0"})
        room["epoch"] = str(int(room["epoch"]) + 1)
        room["host"] = host
        self.hosted.setdefault(host, set()).add(code)
        return int(room["epoch"])

    async def load(self, code: str) -> bytes | None:
        return self.snapshots.get(code)

    async def status(self, code: str) -> dict[str, str]:
        return dict(self.rooms.get(code, {}))

    async def host_rooms(self, host: str) -> list[str]:
        return sorted(self.hosted.get(host, ()))

    async def live_gateways(self, ids: list[str]) -> set[str]:
        return self.gateways.intersection(ids)

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes, status: str,
                      first_seq: int, events: list[bytes], tokens: dict[str, int]) -> None:
        if self.gate is not None:
            self.held.set()
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        room = self.rooms.get(code, {})
        log = self.logs.setdefault(code, [])
        if room.get("epoch") != str(epoch):
            raise StaleEpoch()
        if len(log) != first_seq - 1:
            raise OutOfSync()
        self.snapshots[code] = snapshot
        room["status"] = status
        self.tokens.setdefault(code, {}).update(tokens)
        log.extend(events)
        if status in FINAL:
            self.hosted.get(host, set()).discard(code)
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until a persist makes `predicate()` true (the test's way to wait for an event)."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    def kinds(self, code: str) -> list[str]:
        """The event kinds stored for a room, in order."""
        return [orjson.loads(orjson.loads(raw)["frame"])["kind"] for raw in self.logs.get(code, ())]

