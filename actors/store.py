"""Room persistence: the Redis layout of docs/architecture.md (its in-memory twin for tests:
actors.memory_store; connecting to Redis: actors.redis_connect).

One `persist` is atomic (one Lua script on the room's slot): check the writer's epoch is still the
room's, check the log (and the chat list) is exactly as long as the writer thinks, SET the
snapshot (unless the write changed nothing the log and the chat list do not carry), RPUSH the new
chat lines and the events, SPUBLISH the events (and the replies riding them: acks to the gateways
that listen to the room) as one message, and, when the room reaches a final status, give its
keys a TTL; its release from its host follows (another slot). A room acknowledges a command only
after `persist` returned; with `wait_replicas`, only after `WAIT` saw that many replicas take the
write (and only then are its events published, so no socket sees an event that a failover could
still take back).

Every script call touches one slot (`Keys`), and events and replies go out on sharded pub/sub
(SPUBLISH, Redis 7), which on a cluster stays in the channel's shard instead of reaching every
node.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

import orjson

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import (ConnectionError as RedisConnectionError, NoScriptError,
                              TimeoutError as RedisTimeoutError)

from actors.inbox import Rider, events_message, riders_item
from actors.tables import MemoryTableIndex, TableIndex

log = logging.getLogger(__name__)
T = TypeVar("T")

FINAL = ("finished", "broken")

INBOX_TAKE = 512  # requests a host takes from its inbox at once
WAIT_TIMEOUT_MS = 1000  # how long a persist waits for its replicas before it counts as failed
CODE_CLAIM_TTL = 600  # seconds a reserved room code waits for its room's first write


class NotReplicated(Exception):
    """WAIT saw fewer replicas take a write than asked: it may not survive a failover."""


class StorageUnavailable(Exception):
    """Redis stayed unreachable for as long as the caller could wait (`patiently`'s `until`)."""


# What an unreachable Redis raises: refused or lost connections, no primary known to the
# sentinels, a demoted primary (redis-py turns its READONLY into a ConnectionError), LOADING.
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)


async def patiently(op: Callable[[], Awaitable[T]], what: str, until: float | None = None,
                    retry_on: tuple[type[BaseException], ...] = REDIS_DOWN) -> T:
    """Run `op`, retrying while Redis is unreachable: for ever (actor constructors: an actor
    whose constructor raised would not be restarted, and its rooms would stop), or until the event
    loop's clock reaches `until`, then StorageUnavailable (a client's request, which must answer:
    a Sentinel failover takes 2-3 s, a longer outage gets a 503)."""
    loop = asyncio.get_running_loop()
    pause = 0.1
    while True:
        try:
            return await op()
        except retry_on as e:
            if until is not None and loop.time() + pause > until:
                raise StorageUnavailable(f"{what}: {e!r}") from e
            log.warning("%s: %r; retrying in %.1f s", what, e, pause)
        await asyncio.sleep(pause)
        # A request looks again every second at most, so it goes on as soon as Redis is back.
        pause = min(pause * 2, 5.0 if until is None else 1.0)


class Stored(NamedTuple):
    """A room as stored: its snapshot, and its game's chat lines, kept apart because they are
    the one part that grows all game long: a snapshot stays a few KB instead of carrying every
    line so far (87 KB at 600 lines). `tail`: the log's events after the snapshot's seq, stored
    by writes that changed nothing but the log, the chat and the acks the events carry (a chat
    line's write: `Room` leaves the snapshot as it was)."""
    snapshot: bytes
    chat: list[bytes]
    tail: Sequence[bytes] = ()


class StaleEpoch(Exception):
    """A newer epoch owns the room: this writer is a leftover and must stop."""


class OutOfSync(Exception):
    """The stored log is not where this writer expected: reload the room before writing again."""


class Store(Protocol):
    @property
    def tables(self) -> TableIndex | MemoryTableIndex:
        """The public tables' index (actors.tables)."""

    async def claim(self, code: str, host: str) -> int:
        """Make `host` the room's owner with a new epoch (which fences every older writer)."""

    async def load(self, code: str) -> Stored | None: ...

    async def status(self, code: str) -> dict[str, str]: ...

    async def host_rooms(self, host: str) -> list[str]: ...

    async def release(self, host: str, code: str) -> None:
        """The room holds no slot of `host` any more (idempotent)."""

    async def live_gateways(self, ids: list[str]) -> set[str]: ...

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes | None,
                      status: str, first_seq: int, events: list[bytes], tokens: dict[str, int],
                      chat_from: int | None, chat: list[bytes], untokens: Sequence[str] = (),
                      riders: Sequence[tuple[Rider, Any]] = ()) -> None:
        """`snapshot`: None keeps the stored one (`Stored.tail` brings it up to date);
        `tokens`: token hashes seated (or moved) -> seat; `untokens`: those of removed seats;
        `riders`: replies (`actors.inbox.Rider`, reply) that go out in the events' message, so
        a gateway listening to the room needs no message of its own for them (only with events:
        a write without events publishes nothing)."""

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
    """Every key of a room carries the room's hash tag `{CODE}`, a host's keys `{HOST}`, so a
    room's script call touches one Redis Cluster slot; the global keys (hosts, hostseq, stack,
    limits) each live in a slot of their own and no room script touches them."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def room(self, code: str) -> str:  # directory hash, and the room's (sharded) channel
        return f"{self.prefix}:room:{{{code}}}"

    def code_of(self, channel: str) -> str:
        """The room code of a room's channel."""
        return channel.removeprefix(f"{self.prefix}:room:{{").removesuffix("}")

    def state(self, code: str) -> str:
        return f"{self.room(code)}:state"

    def log(self, code: str) -> str:
        return f"{self.room(code)}:log"

    def tokens(self, code: str) -> str:
        return f"{self.room(code)}:tokens"

    def chat(self, code: str) -> str:  # list: the chat lines of the room's current game
        return f"{self.room(code)}:chat"

    def host_rooms(self, host: str) -> str:
        return f"{self.prefix}:host:{{{host}}}:rooms"

    def hosts(self) -> str:  # sorted set: host actor name -> rooms placed on it
        return f"{self.prefix}:hosts"

    def host_seq(self) -> str:
        return f"{self.prefix}:hostseq"

    def gateway(self, gateway_id: str) -> str:  # a gateway process's presence lease (a TTL key)
        return f"{self.prefix}:gateway:{{{gateway_id}}}"

    def inbox(self, host: str) -> str:  # list: requests for a host actor, oldest first
        return f"{self.prefix}:host:{{{host}}}:inbox"

    def replies(self, gateway_id: str) -> str:  # sharded channel: replies to a gateway process
        return f"{self.prefix}:replies:{{{gateway_id}}}"

    def limit(self, what: str, address: str, window: int) -> str:  # counter, TTL: one window
        return f"{self.prefix}:limit:{what}:{address}:{window}"

    def again(self, code: str) -> str:  # string, TTL: the click opening a table's next game
        return f"{self.room(code)}:again"

    def reports(self, code: str) -> str:  # hash: "reporter>reported" seats -> the report (JSON)
        return f"{self.room(code)}:reports"

    def reported(self) -> str:  # sorted set: "CODE reporter>reported" -> when it was filed (ms)
        return f"{self.prefix}:reported"

    def held(self, what: str, group: str) -> str:  # sorted set: what an address holds now
        return f"{self.prefix}:held:{what}:{{{group}}}"

    def press(self, press: str) -> str:  # a press's outcome, for its retries (TTL); by the hash
        # of its id, address and name (RoomClient.quick_play)
        return f"{self.prefix}:press:{{{press}}}"

    def stack(self) -> str:  # the Ray session that owns this prefix (a lease, see actors.ownership)
        return f"{self.prefix}:stack"


# A new room's code, reserved on its host (KEYS: room; ARGV: host, ttl). The reservation lapses
# unless the room's first write lands (_PERSIST makes it permanent): a creation that never got
# that far (its gateway gave up or died) leaves no code taken for ever.
_CLAIM_CODE = """
if redis.call('HSETNX', KEYS[1], 'host', ARGV[1]) == 0 then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""

# A creation given up, its room's part (KEYS: room): its code back, unless the host holds the
# room (it claimed an epoch): that lobby, never entered, closes by itself and gives its slot back
# then. 1: the host slot may be given back too (the caller's ZINCRBY, on the global key's slot).
_GIVE_BACK_CODE = """
if redis.call('HEXISTS', KEYS[1], 'epoch') == 1 then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

_CLAIM = """
local epoch = redis.call('HINCRBY', KEYS[1], 'epoch', 1)
redis.call('HSET', KEYS[1], 'host', ARGV[1])
return epoch
"""

# KEYS: room, state, log, tokens, chat, reports (one slot: the room's)
# ARGV: epoch, snapshot ('': unchanged), status, first_seq, channel, ttl, chat_from, nchat, ntokens,
#       nuntokens, riders, (hash, seat)*, removed seats' hashes*, chat lines*, events*
# chat_from: the chat lines already stored ('': none, the chat list starts again, e.g. a new game).
# Each call inside counts as a Redis command. The lists are appended first and checked by the
# lengths RPUSH returns: a writer that is out of step with them (a failover lost its last writes)
# takes its lines back and changes nothing (-2); a write without events measures the log instead.
# The events go out as one message (a JSON array, `events_message`) whatever their number, the
# riders (replies, `actors.inbox.riders_item`, or '') as its last element. The
# status is written, and the code made the room's, only when the status changes. A final status
# releases the room from its host after the script (`RedisStore.release`); the chat of a reported
# room is kept as long as its reports, which point into it (`actors.reports`).
_PERSIST = """
local room = redis.call('HMGET', KEYS[1], 'epoch', 'status')
if room[1] ~= ARGV[1] then return -1 end
local first, nchat = tonumber(ARGV[4]), tonumber(ARGV[8])
local ntokens, nuntokens = tonumber(ARGV[9]), tonumber(ARGV[10])
local i = 12 + 2 * ntokens + nuntokens  -- the first chat line
local e = i + nchat  -- the first event
local nevents = #ARGV - e + 1
if nevents > 0 then
  local stored = redis.call('RPUSH', KEYS[3], unpack(ARGV, e, #ARGV))
  if stored ~= first - 1 + nevents then
    redis.call('LTRIM', KEYS[3], 0, -nevents - 1)
    return -2
  end
elseif redis.call('LLEN', KEYS[3]) ~= first - 1 then
  return -2
end
if ARGV[7] == '' then
  redis.call('DEL', KEYS[5])
  if nchat > 0 then redis.call('RPUSH', KEYS[5], unpack(ARGV, i, e - 1)) end
elseif nchat > 0 then
  if redis.call('RPUSH', KEYS[5], unpack(ARGV, i, e - 1)) ~= tonumber(ARGV[7]) + nchat then
    redis.call('LTRIM', KEYS[5], 0, -nchat - 1)
    if nevents > 0 then redis.call('LTRIM', KEYS[3], 0, -nevents - 1) end
    return -2
  end
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2]) end  -- '': the log carries the change
if ntokens > 0 then redis.call('HSET', KEYS[4], unpack(ARGV, 12, 11 + 2 * ntokens)) end
if nuntokens > 0 then redis.call('HDEL', KEYS[4], unpack(ARGV, 12 + 2 * ntokens, i - 1)) end
if nevents > 0 and ARGV[5] ~= '' then
  local riders = ARGV[11] == '' and '' or (',' .. ARGV[11])
  redis.call('SPUBLISH', ARGV[5], '[' .. table.concat(ARGV, ',', e, #ARGV) .. riders .. ']')
end
local changed = room[2] ~= ARGV[3]
if changed then redis.call('HSET', KEYS[1], 'status', ARGV[3]) end
if ARGV[3] == 'finished' or ARGV[3] == 'broken' then
  for k = 1, 5 do redis.call('EXPIRE', KEYS[k], ARGV[6]) end
  local reported = redis.call('TTL', KEYS[6])
  if reported > tonumber(ARGV[6]) then redis.call('EXPIRE', KEYS[5], reported) end
elseif changed then
  redis.call('PERSIST', KEYS[1])  -- the code reserved by _CLAIM_CODE is the room's now
end
return 1
"""


class Coalescer:
    """Writes issued in one turn of the event loop reach Redis as one pipeline: eight writes at
    once cost the caller 47 µs of CPU each as their own redis-py calls (pool, retry, timeouts,
    syscalls), 30 µs coalesced (`python -m loadtest.callcost`), and a host persisting and answering
    for hundreds of rooms pays that on every command. On a Redis Cluster the pipeline is split by
    node (one round trip each, in parallel) and a durable write's WAIT goes to the node that took
    it, after it on the same connection."""

    def __init__(self, redis: aioredis.Redis | RedisCluster, wait_replicas: int = 0) -> None:
        self._redis = redis
        self._wait = wait_replicas
        self._cluster = isinstance(redis, RedisCluster)
        self._pending: list[tuple[str, Callable, asyncio.Future, bool]] = []
        self._flushing: set[asyncio.Task] = set()

    def submit(self, key: str, add: Callable, durable: bool = False) -> asyncio.Future:
        """`add(pipeline)` queues one command on `key` (its slot routes it on a cluster); the
        future gets its reply (or its error)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.append((key, add, future, durable))
        if len(self._pending) == 1:  # the first of this turn: flush once the turn is over
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.create_task(self._execute(batch))
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    def _node(self, key: str) -> str:
        return self._redis.get_node_from_key(key).name if self._cluster else ""

    async def _execute(self, batch: list[tuple[str, Callable, asyncio.Future, bool]]) -> None:
        pipe = self._redis.pipeline(transaction=False)
        nodes: list[str] = []  # the node each write is sent to, as the slot map says now
        waits: list[str] = []  # each node that took a durable write, in the order of its WAIT
        try:
            if self._cluster:
                await self._redis.initialize()  # the slot map, once (a no-op after)
            for key, add, _, durable in batch:
                add(pipe)
                nodes.append(self._node(key))
                if durable and self._wait and nodes[-1] not in waits:
                    waits.append(nodes[-1])
            for node in waits:
                target = ({"target_nodes": self._redis.get_node(node_name=node)}
                          if self._cluster else {})
                pipe.execute_command("WAIT", self._wait, WAIT_TIMEOUT_MS, **target)
            results = await pipe.execute(raise_on_error=False)
        except Exception as e:
            # the connection failed (or no slot map yet): none is known to have landed
            results = [e] * (len(batch) + len(waits))
        replicas = dict(zip(waits, results[len(batch):]))
        for i, ((key, _, future, durable), result) in enumerate(zip(batch, results)):
            if future.done():
                continue
            if durable and not isinstance(result, Exception):
                took = replicas[nodes[i]]
                if self._node(key) != nodes[i]:
                    # MOVED or ASK: redis-py sent it again to another node, after that WAIT
                    result = NotReplicated(f"the write moved off {nodes[i]} (a slot moved)")
                elif isinstance(took, Exception) or took < self._wait:
                    result = NotReplicated(f"{took} of {self._wait} replicas took the write")
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)


class RedisStore:
    def __init__(self, redis: aioredis.Redis | RedisCluster, prefix: str, finished_ttl: int,
                 wait_replicas: int = 0) -> None:
        self.redis = redis
        self.keys = Keys(prefix)
        self.finished_ttl = finished_ttl
        self.wait_replicas = wait_replicas
        self._claim = redis.register_script(_CLAIM)
        self._claim_code = redis.register_script(_CLAIM_CODE)
        self._give_back_code = redis.register_script(_GIVE_BACK_CODE)
        self._persist = redis.register_script(_PERSIST)
        self._writes = Coalescer(redis, wait_replicas)
        self.tables = TableIndex(redis, prefix)
        self._releasing: set[asyncio.Task] = set()  # releases retried until Redis answers

    async def claim(self, code: str, host: str) -> int:
        """Listed on the host first: a host restarted between the two finds the room and takes
        it again (or releases it, if it is not live)."""
        await self.redis.sadd(self.keys.host_rooms(host), code)
        return int(await self._claim(keys=[self.keys.room(code)], args=[host]))

    async def claim_code(self, code: str, host: str) -> bool:
        """Reserve room code `code` on `host`; False if a room has it (see _CLAIM_CODE)."""
        return bool(await self._claim_code(keys=[self.keys.room(code)],
                                           args=[host, CODE_CLAIM_TTL]))

    async def give_back(self, host: str, code: str | None) -> None:
        """Undo a creation given up after its host slot (and code, if any) was reserved."""
        if code is None or await self._give_back_code(keys=[self.keys.room(code)]):
            await self.redis.zincrby(self.keys.hosts(), -1, host)

    async def release(self, host: str, code: str) -> None:
        """The room no longer holds a slot of `host` (finished, broken, or never written): once,
        however often it is called (the SREM that removes it is the one that counts)."""
        if await self.redis.srem(self.keys.host_rooms(host), code):
            await self.redis.zincrby(self.keys.hosts(), -1, host)

    async def load(self, code: str) -> Stored | None:
        pipe = self.redis.pipeline(transaction=True)  # all as of one moment (one slot)
        pipe.get(self.keys.state(code))
        pipe.lrange(self.keys.chat(code), 0, -1)
        pipe.llen(self.keys.log(code))
        snapshot, chat, logged = await pipe.execute()
        if snapshot is None:
            return None
        seq = snapshot_seq(snapshot)
        # A write landing between the two reads makes the tail longer than the chat list read:
        # the room's next write then finds the chat list out of step (OutOfSync) and reloads.
        tail = await self.redis.lrange(self.keys.log(code), seq, -1) if logged > seq else []
        return Stored(snapshot, chat, tail)

    async def status(self, code: str) -> dict[str, str]:
        raw = await self.redis.hgetall(self.keys.room(code))
        return {key.decode(): value.decode() for key, value in raw.items()}

    async def host_rooms(self, host: str) -> list[str]:
        return sorted(code.decode()
                      for code in await self.redis.smembers(self.keys.host_rooms(host)))

    async def live_gateways(self, ids: list[str]) -> set[str]:
        """The gateway processes among `ids` whose presence lease has not lapsed (one GET each:
        the leases lie in as many slots)."""
        pipe = self.redis.pipeline(transaction=False)
        for i in ids:
            pipe.exists(self.keys.gateway(i))
        return {i for i, live in zip(ids, await pipe.execute()) if live}

    async def events_after(self, code: str, since: int, upto: int | None = None) -> list[dict]:
        """Stored events with since < seq <= upto (to the end if upto is None), in order."""
        if upto is not None and upto <= since:
            return []
        raw = await self.redis.lrange(self.keys.log(code), max(since, 0),
                                      -1 if upto is None else upto - 1)
        return [orjson.loads(item) for item in raw]

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes | None,
                      status: str, first_seq: int, events: list[bytes], tokens: dict[str, int],
                      chat_from: int | None, chat: list[bytes], untokens: Sequence[str] = (),
                      riders: Sequence[tuple[Rider, Any]] = ()) -> None:
        k, item = self.keys, riders_item(riders)
        args: list = [epoch, snapshot or b"", status, first_seq, k.room(code), self.finished_ttl,
                      "" if chat_from is None else chat_from, len(chat), len(tokens), len(untokens),
                      item]
        for token_hash, seat in tokens.items():
            args += [token_hash, seat]
        args += untokens
        args += chat
        args += events
        keys = [k.room(code), k.state(code), k.log(code), k.tokens(code), k.chat(code),
                 k.reports(code)]
        if self.wait_replicas:
            # The script publishes nothing (empty channel): the events go out once the replicas
            # have them, in order (a room persists one group at a time).
            args[4] = ""
        sha = self._persist.sha
        durable = bool(self.wait_replicas)
        try:
            result = await self._writes.submit(
                keys[0], lambda pipe: pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args),
                durable=durable)
        except NoScriptError:  # Redis restarted or flushed its scripts; nothing ran: load and retry
            await self.redis.script_load(_PERSIST)
            result = await self._writes.submit(
                keys[0], lambda pipe: pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args),
                durable=durable)
        _check(result)
        if durable and events:
            await self._publish(code, events, item)
        if status in FINAL:
            try:
                await self.release(host, code)
            except REDIS_DOWN as e:  # stored all the same: released once Redis answers again
                log.warning("room %s: release from %s failed (%r); retrying", code, host, e)
                task = asyncio.create_task(patiently(lambda: self.release(host, code),
                                                     f"releasing room {code}"))
                self._releasing.add(task)
                task.add_done_callback(self._releasing.discard)

    async def _publish(self, code: str, events: list[bytes], riders: bytes = b"") -> None:
        if not events:
            return
        channel, message = self.keys.room(code), events_message(events, riders)
        await self._writes.submit(channel, lambda pipe: pipe.spublish(channel, message))

    async def take_requests(self, host: str, wait: float) -> list[bytes]:
        """What the inbox holds (up to INBOX_TAKE), else what arrives first within `wait`: one
        BLMPOP either way (an LPOP and then a BLPOP were two calls per request at human pace)."""
        inbox = self.keys.inbox(host)
        command = ("BLMPOP", wait, 1, inbox, "LEFT", "COUNT", INBOX_TAKE)
        if isinstance(self.redis, RedisCluster):
            # Its keys' place depends on numkeys: unrouted, redis-py asks COMMAND GETKEYS first.
            taken = await self.redis.execute_command(
                *command, target_nodes=self.redis.get_node_from_key(inbox))
        else:
            taken = await self.redis.execute_command(*command)
        return [] if taken is None else taken[1]

    async def reply(self, gateway: str, message: bytes) -> None:
        channel = self.keys.replies(gateway)
        await self._writes.submit(channel, lambda pipe: pipe.spublish(channel, message))

    async def publish_stored(self, code: str, after_seq: int) -> None:
        if not self.wait_replicas:
            return  # the persist script published them with the write, atomically
        # A no-op write, durable: its WAIT confirms every earlier write of the room too
        # (replication is in order).
        room = self.keys.room(code)
        await self._writes.submit(room, lambda pipe: pipe.hincrby(room, "confirmed", 0),
                                  durable=True)
        await self._publish(code, await self.redis.lrange(self.keys.log(code), after_seq, -1))


def snapshot_seq(snapshot: bytes) -> int:
    """The last event's seq a snapshot includes (0 if it names none)."""
    return orjson.loads(snapshot).get("seq") or 0


def _check(result: int) -> None:
    if result == -1:
        raise StaleEpoch()
    if result == -2:
        raise OutOfSync()
