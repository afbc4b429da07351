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
from collections import OrderedDict
from collections.abc import AsyncIterator
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


class AgainRefused(Exception):
    """`again` refused; `.code`: not_authenticated, not_host or not_your_turn (not over yet)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


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
        code = await self._claim_code(host)
        reply = await self._call(host, "create_room", code, name, token_hash(token))
        _raise_refusal(reply)
        return {"room": code, "seat": reply["seat"], "token": token}

    async def _claim_code(self, host: str) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if await self.redis.hsetnx(self.keys.room(code), "host", host):
                self._remember(code, host)
                return code

    async def again(self, room: str, token: str) -> dict:
        """The next game of a finished room, opened by its host (seat 0): a new room seating the
        same players in the same seats, with the same tokens and settings, already started. The
        old room's lobby facts then name it (`next`), so each seat enters it with the token it
        has. {"room", "seat": 0, "token"}; raises RoomNotFound or AgainRefused."""
        code = normal_code(room)
        seat = await self.authenticate(code, token)
        if seat is None:
            raise AgainRefused("not_authenticated", "no seat of this room has that token")
        if seat != 0:
            raise AgainRefused("not_host", "only the host may start the next game")
        facts = await self.lobby(code)
        if facts["next"] is not None:  # a retried click
            return {"room": facts["next"], "seat": 0, "token": token}
        if facts["status"] != "finished":
            raise AgainRefused("not_your_turn", "the game is not over")
        hashes = {int(s): h.decode() for h, s in (await self.redis.hgetall(self.keys.tokens(code))).items()}
        names = [p["name"] for p in facts["players"]]
        host = await self._call(self._placement_name, "place")
        new = await self._claim_code(host)
        _raise_refusal(await self._call(host, "create_room", new, names[0], hashes[0]))
        for s, name in enumerate(names[1:], start=1):
            _raise_refusal(await self._call(host, "join", new, name, hashes[s]))
        for frame in ({"type": "settings", "id": "again-settings", **facts["settings"]},
                      {"type": "start", "id": "again-start"}):
            reply = await self.command(new, 0, frame)
            if reply["type"] == "error":
                raise AgainRefused(reply["code"], reply["message"])
        # Named only once every seat is in, so a page that follows the name is let in. Two clicks
        # at once: the first to name its room wins (the other room, unattended, closes idle).
        if not await self.redis.hsetnx(self.keys.room(code), "next", new):
            new = (await self.redis.hget(self.keys.room(code), "next")).decode()
        return {"room": new, "seat": 0, "token": token}

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
        """Public lobby facts: room, status, host, players, settings, roles_in_play, next (the
        room of the next game at this table, once a finished room's host has opened it)."""
        code = normal_code(room)
        try:
            facts = await self._call(await self._host_of(code), "lobby", code)
        except HostRetired:
            data = await self._stored(code)
            facts = None if data is None else data.lobby()
        if facts is None:
            raise RoomNotFound(f"no room {room!r}")
        following = await self.redis.hget(self.keys.room(code), "next") if facts["status"] == "finished" else None
        return {**facts, "next": following and following.decode()}

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

    def listen(self, room: str):
        """`async with rc.listen(room) as queue:` every event stored from now on, in seq order.

        Subscribed once the context is entered, so a welcome fetched inside it misses nothing:
        skip the queued events with seq <= the welcome's seq.
        """
        return self.subscriptions.listen(normal_code(room))

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

    async def _send(self, host: str, request: tuple):
        """Queue a request for `host`. One `batch` call per host is in flight; whatever arrives
        meanwhile goes in the next one, so a busy gateway makes few Ray calls and an idle one
        adds no delay. Requests for one room keep their order."""
        lane = self._lanes.get(host)
        if lane is None:
            lane = self._lanes[host] = _Lane()
        future = asyncio.get_running_loop().create_future()
        lane.pending.append((request, future))
        if lane.sender is None:
            lane.sender = asyncio.create_task(self._drain(host, lane))
        return await future

    async def _drain(self, host: str, lane: _Lane) -> None:
        try:
            while lane.pending:
                batch, lane.pending = lane.pending[:BATCH_MAX], lane.pending[BATCH_MAX:]
                try:
                    replies = await self._call(host, "batch", [request for request, _ in batch])
                except Exception as e:
                    replies = [e] * len(batch)
                for (_, future), reply in zip(batch, replies):
                    if future.done():  # its caller gave up waiting
                        continue
                    if isinstance(reply, Exception):
                        future.set_exception(reply)
                    else:
                        future.set_result(reply)
        finally:
            lane.sender = None

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
        self.pending: list[tuple[tuple, asyncio.Future]] = []
        self.sender: asyncio.Task | None = None


def _raise_refusal(reply: dict) -> None:
    if "error" in reply:
        raise _REFUSALS.get(reply["error"], JoinRefused)(reply.get("message", reply["error"]))


class _Channel:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.listeners: set[asyncio.Queue] = set()
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
    async def listen(self, code: str) -> AsyncIterator[asyncio.Queue]:
        queue: asyncio.Queue = asyncio.Queue()
        channel = self._channels.get(code)
        if channel is None:
            channel = self._channels[code] = _Channel(asyncio.get_running_loop())
            await self._pubsub.subscribe(self._keys.room(code))
        channel.listeners.add(queue)
        try:
            await asyncio.wait_for(asyncio.shield(channel.subscribed), 10)
            yield queue
        finally:
            channel.listeners.discard(queue)
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
        for queue in channel.listeners:
            for item in events:
                queue.put_nowait(item)
