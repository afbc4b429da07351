"""`RoomClient`: everything the gateway needs from the cluster, and nothing it must remember.

Reads that only need Redis (tokens, the event log, events as they are published) never call an
actor. Everything that changes a room is a call to the room's host actor (commands, presence and
welcomes travel in per-host batches), retried while the host restarts; the room recognises a
retried frame by seat, id and content, and a retried join by its token hash.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import orjson
import ray
import redis.asyncio as aioredis
from ray.exceptions import ActorUnavailableError, RayActorError

from actors.config import Config
from actors.placement import PlacementActor
from actors.room import BadName, RoomData, clean_name, error_frame
from actors.store import Keys, RedisStore, connect

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6
RESTART_PATIENCE = 60.0  # seconds a call keeps retrying while its host actor restarts
BATCH_MAX = 256  # requests per batch call to one host
LANE_CALLS = 8  # batch calls in flight per host per process (~1,450 Ray calls/s at 16 in flight)
HOSTS_REMEMBERED = 50_000  # room -> host entries cached per process


class JoinRefused(Exception):
    code = "join_refused"


class RoomNotFound(JoinRefused, LookupError):
    code = "room_not_found"


class RoomFull(JoinRefused):
    code = "room_full"


class RoomStarted(JoinRefused):
    code = "room_started"


class NameTaken(JoinRefused):
    code = "name_taken"


class HostRetired(Exception):
    """The room's host actor was stopped: all its rooms had ended (see placement.maintain)."""


_REFUSALS = {cls.code: cls for cls in (RoomNotFound, RoomFull, RoomStarted, NameTaken, BadName)}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normal_code(room: str) -> str:
    """The canonical room code, or RoomNotFound for anything that cannot be one."""
    code = room.upper() if isinstance(room, str) else ""
    if len(code) != CODE_LENGTH or not all(c in CODE_ALPHABET for c in code):
        raise RoomNotFound(f"no room {room!r}")
    return code


class RoomClient:
    """Use as `async with RoomClient(config) as rc:` (or `await rc.start()` / `await rc.close()`)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.keys = Keys(config.prefix)
        self.redis: aioredis.Redis | None = None
        self.store: RedisStore | None = None
        self.subscriptions: Subscriptions | None = None
        self._handles: dict[str, ray.actor.ActorHandle] = {}
        self._hosts: OrderedDict[str, str] = OrderedDict()  # room code -> host actor name, LRU
        self._lanes: dict[str, _Lane] = {}  # host actor name -> requests waiting for a batch call
        # (requests, seconds the oldest waited) of every batch call sent: the gateway's metrics.
        self.observe_batch: Callable[[int, float], None] | None = None
        # This process, as the rooms know it in their seats' presence (see `renew_lease`).
        self.gateway_id = secrets.token_hex(8)

    async def start(self) -> None:
        if not ray.is_initialized():
            ray.init(address=self.config.ray_address, namespace=self.config.namespace,
                     log_to_driver=False)
        self.redis = connect(self.config.redis_url)
        self.store = RedisStore(self.redis, self.config.prefix, self.config.finished_ttl)
        placement = PlacementActor.options(
            name=self._placement_name, namespace=self.config.namespace, lifetime="detached",
            get_if_exists=True, max_restarts=-1).remote(self.config)
        self._handles[self._placement_name] = placement
        self.subscriptions = Subscriptions(self.redis, self.keys, self.store.events_after)
        await self.subscriptions.start()
        await self.renew_lease()  # before any presence names this process

    async def close(self) -> None:
        if self.subscriptions is not None:
            await self.subscriptions.close()
        if self.redis is not None:
            try:  # hosts then take this process out of its seats at their next sweep
                await self.redis.delete(self.keys.gateway(self.gateway_id))
            except Exception as e:
                log.warning("could not drop the presence lease (%r); it will lapse", e)
            await self.redis.aclose()

    async def renew_lease(self) -> bool:
        """Keep this process's presence lease for `config.presence_lease` seconds more (call it
        every third of that). True if there was no lease: the first call, or a lapse after which
        hosts may have marked this process's seats disconnected (announce them again)."""
        previous = await self.redis.set(self.keys.gateway(self.gateway_id), b"1",
                                        ex=self.config.presence_lease, get=True)
        return previous is None

    async def __aenter__(self) -> RoomClient:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @property
    def _placement_name(self) -> str:
        return f"{self.config.prefix}-placement"

    # -- rooms -----------------------------------------------------------------------------

    async def create_room(self, name: str) -> dict:
        """Open a room seating `name` as its host: {"room", "seat": 0, "token"}. Raises BadName."""
        name = clean_name(name)
        token = secrets.token_urlsafe(32)
        host = await self._call(self._placement_name, "place")
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if await self.redis.hsetnx(self.keys.room(code), "host", host):
                break
        self._remember(code, host)
        reply = await self._call(host, "create_room", code, name, token_hash(token))
        _raise_refusal(reply)
        return {"room": code, "seat": reply["seat"], "token": token}

    async def join(self, room: str, name: str) -> dict:
        """Seat `name`: {"room", "seat", "token"}. Raises RoomNotFound, RoomFull, RoomStarted,
        NameTaken or BadName."""
        code = normal_code(room)
        name = clean_name(name)
        token = secrets.token_urlsafe(32)
        try:
            reply = await self._call(await self._host_of(code), "join", code, name, token_hash(token))
        except HostRetired:
            raise RoomStarted(f"room {code} has ended") from None
        _raise_refusal(reply)
        return {"room": code, "seat": reply["seat"], "token": token}

    async def lobby(self, room: str) -> dict:
        """Public lobby facts: room, status, host, players, settings, roles_in_play."""
        code = normal_code(room)
        try:
            facts = await self._call(await self._host_of(code), "lobby", code)
        except HostRetired:
            data = await self._stored(code)
            facts = None if data is None else data.lobby()
        if facts is None:
            raise RoomNotFound(f"no room {room!r}")
        return facts

    async def authenticate(self, room: str, token: str) -> int | None:
        """The seat `token` proves in `room`, or None. Redis only."""
        if not isinstance(token, str):
            return None
        try:
            code = normal_code(room)
        except RoomNotFound:
            return None
        seat = await self.redis.hget(self.keys.tokens(code), token_hash(token))
        return None if seat is None else int(seat)

    async def welcome(self, room: str, seat: int) -> dict:
        """{"seq": S, "view": ...}: what `seat` may know, exactly as of event S."""
        code = normal_code(room)
        try:
            welcome = await self._send(await self._host_of(code), ("welcome", code, seat, None))
        except HostRetired:
            data = await self._stored(code)
            welcome = None if data is None else {"seq": data.seq, "view": data.view(seat)}
        if welcome is None:
            raise RoomNotFound(f"no room {room!r}")
        return welcome

    async def command(self, room: str, seat: int, frame: dict) -> dict:
        """Apply an act/chat/settings/start frame: the ack (sent once durable) or error frame."""
        code = normal_code(room)
        try:
            return await self._send(await self._host_of(code), ("command", code, seat, frame))
        except HostRetired:
            return error_frame(frame.get("id") if isinstance(frame, dict) else None, "room_closed",
                               "the room is closed")

    async def presence(self, room: str, seat: int, connected: bool) -> None:
        """This process has its first (connected) or no more (not connected) socket of the seat."""
        code = normal_code(room)
        try:
            await self._send(await self._host_of(code),
                             ("presence", code, seat, (self.gateway_id, connected)))
        except HostRetired:
            pass  # the room has ended; nobody's presence matters any more

    async def events_after(self, room: str, since: int, upto: int | None = None) -> list[dict]:
        """Stored events with since < seq <= upto (to the end if upto is None), in order."""
        return await self.store.events_after(normal_code(room), since, upto)

    def listen(self, room: str, seat: int | None = None):
        """`async with rc.listen(room, seat) as queue:` every event stored from now on that `seat`
        may see (every event if seat is None), in seq order.

        Subscribed once the context is entered, so a welcome fetched inside it misses nothing:
        skip the queued events with seq <= the welcome's seq.
        """
        return self.subscriptions.listen(normal_code(room), seat)

    async def host_stats(self, room: str) -> dict:
        """The room's host actor: its name, process id and room count (for tests and ops)."""
        return await self._call(await self._host_of(normal_code(room)), "stats")

    # -- plumbing --------------------------------------------------------------------------

    async def _host_of(self, code: str) -> str:
        host = self._hosts.get(code)
        if host is None:
            raw = await self.redis.hget(self.keys.room(code), "host")
            if raw is None:
                raise RoomNotFound(f"no room {code!r}")
            host = raw.decode()
        self._remember(code, host)
        return host

    def _remember(self, code: str, host: str) -> None:
        """A room never changes host, but a long-lived gateway sees unboundedly many rooms."""
        self._hosts[code] = host
        self._hosts.move_to_end(code)
        if len(self._hosts) > HOSTS_REMEMBERED:
            self._hosts.popitem(last=False)

    async def _stored(self, code: str) -> RoomData | None:
        raw = await self.store.load(code)
        return None if raw is None else RoomData.from_json(raw)

    async def _handle(self, name: str) -> ray.actor.ActorHandle:
        handle = self._handles.get(name)
        if handle is None:
            try:
                handle = await asyncio.to_thread(ray.get_actor, name, namespace=self.config.namespace)
            except ValueError:  # no such actor (any more)
                if await self._retired(name):
                    raise HostRetired(name) from None
                raise
            self._handles[name] = handle
        return handle

    async def _retired(self, name: str) -> bool:
        """Host actors stay in P:hosts for as long as they live; the placement actor never leaves."""
        return name != self._placement_name and await self.redis.zscore(self.keys.hosts(), name) is None

    def lane_backlog(self) -> int:
        """Requests of this process waiting for a batch call (the gateway's lane-queue metric)."""
        return sum(len(lane.pending) for lane in self._lanes.values())

    async def _send(self, host: str, request: tuple):
        """Queue a request for `host`. Requests travel in `batch` calls, up to LANE_CALLS in flight
        per host, each carrying whatever queued meanwhile (no added delay when idle, few calls
        under load). A room has at most one batch in flight: its requests keep their order (Ray
        does not order an async actor's calls), and a slow room holds back only its own next
        requests, never an unrelated room's."""
        lane = self._lanes.get(host)
        if lane is None:
            lane = self._lanes[host] = _Lane()
        future = asyncio.get_running_loop().create_future()
        lane.pending.append((request, future, time.perf_counter()))
        self._pump(host, lane)
        return await future

    def _pump(self, host: str, lane: _Lane) -> None:
        while lane.calls < LANE_CALLS and lane.pending:
            batch, waiting, rooms = [], [], set()
            for item in lane.pending:
                code = item[0][1]
                if len(batch) < BATCH_MAX and code not in lane.busy:
                    batch.append(item)
                    rooms.add(code)
                else:
                    waiting.append(item)
            if not batch:
                return
            lane.pending = waiting
            lane.busy |= rooms
            lane.calls += 1
            if self.observe_batch is not None:
                self.observe_batch(len(batch), time.perf_counter() - batch[0][2])
            asyncio.create_task(self._call_batch(host, lane, batch, rooms))

    async def _call_batch(self, host: str, lane: _Lane, batch: list, rooms: set[str]) -> None:
        try:
            replies = await self._call(host, "batch", [request for request, _, _ in batch])
        except Exception as e:
            replies = [e] * len(batch)
        finally:
            lane.calls -= 1
            lane.busy -= rooms
        for (_, future, _), reply in zip(batch, replies):
            if future.done():  # its caller gave up waiting
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)
        self._pump(host, lane)

    async def _call(self, actor: str, method: str, *args):
        """Call a named actor; while it restarts, retry (the callee dedupes what already landed)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + RESTART_PATIENCE
        pause = 0.05
        while True:
            handle = await self._handle(actor)
            try:
                return await getattr(handle, method).remote(*args)
            except (RayActorError, ActorUnavailableError) as e:
                if await self._retired(actor):
                    self._handles.pop(actor, None)
                    raise HostRetired(actor) from e
                if loop.time() > give_up:
                    raise
                log.info("%s.%s: actor unavailable (%s); retrying", actor, method, type(e).__name__)
            await asyncio.sleep(pause)  # back off while Ray restarts the process
            pause = min(pause * 2, 1.0)


class _Lane:
    def __init__(self) -> None:
        self.pending: list[tuple[tuple, asyncio.Future, float]] = []  # (request, future, queued at)
        self.busy: set[str] = set()  # rooms with a request in a batch call in flight
        self.calls = 0  # batch calls in flight


def _raise_refusal(reply: dict) -> None:
    if "error" in reply:
        raise _REFUSALS.get(reply["error"], JoinRefused)(reply.get("message", reply["error"]))


class _Channel:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.listeners: dict[asyncio.Queue, int | None] = {}  # queue -> the seat it is for
        self.subscribed = loop.create_future()
        self.last: int | None = None  # last seq delivered, to drop repeats and fill gaps


class Subscriptions:
    """One Redis pub/sub connection per process, subscribed to a room's channel while at least one
    local listener wants it. Each listener gets every stored event once, in seq order: a gap (a
    message lost while the connection was being re-established) is filled from the log."""

    def __init__(self, redis: aioredis.Redis, keys: Keys, events_after) -> None:
        self._pubsub = redis.pubsub()
        self._keys = keys
        self._events_after = events_after
        self._channels: dict[str, _Channel] = {}
        self._reader: asyncio.Task | None = None

    async def start(self) -> None:
        # A channel nobody publishes to keeps the connection subscribed while no room is.
        await self._pubsub.subscribe(f"{self._keys.prefix}:mux")
        self._reader = asyncio.create_task(self._read(), name="pubsub reader")

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self._pubsub.aclose()

    @asynccontextmanager
    async def listen(self, code: str, seat: int | None = None) -> AsyncIterator[asyncio.Queue]:
        queue: asyncio.Queue = asyncio.Queue()
        channel = self._channels.get(code)
        if channel is None:
            channel = self._channels[code] = _Channel(asyncio.get_running_loop())
            await self._pubsub.subscribe(self._keys.room(code))
        channel.listeners[queue] = seat
        try:
            await asyncio.wait_for(asyncio.shield(channel.subscribed), 10)
            yield queue
        finally:
            channel.listeners.pop(queue, None)
            if not channel.listeners and self._channels.get(code) is channel:
                del self._channels[code]
                await self._pubsub.unsubscribe(self._keys.room(code))

    async def _read(self) -> None:
        """The one reader of the connection; it must outlive any failure, or every listener stalls."""
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)
                if message is not None:
                    await self._handle(message)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # Redis went away: redis-py reconnects and resubscribes
                log.warning("pubsub read failed (%r); retrying", e)
                await asyncio.sleep(0.5)

    async def _handle(self, message: dict) -> None:
        code = message["channel"].decode().removeprefix(self._keys.room(""))
        channel = self._channels.get(code)
        if channel is None:
            return
        if message["type"] == "subscribe" and not channel.subscribed.done():
            channel.subscribed.set_result(None)
        elif message["type"] == "message":
            await self._deliver(code, channel, orjson.loads(message["data"]))

    async def _deliver(self, code: str, channel: _Channel, event: dict) -> None:
        seq = event["seq"]
        if channel.last is not None and seq <= channel.last:
            return
        events = [event]
        if channel.last is not None and seq > channel.last + 1:
            events = await self._events_after(code, channel.last, seq)
        channel.last = seq
        for item in events:
            to = item["to"]
            for queue, seat in channel.listeners.items():  # a private event wakes only its audience
                if to is None or seat is None or seat in to:
                    queue.put_nowait(item)
