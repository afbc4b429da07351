"""Hosting rooms: `RoomHost` (plain Python, up to `games_per_actor` rooms) and `GameHost`, the
async Ray actor that is only a shell around one RoomHost.

A host is named and detached (a gateway is only a driver; it dying must not end games) and
restartable (`max_restarts=-1`). On every (re)start it loads the rooms listed in
`P:host:{name}:rooms`, each taking a new epoch, and their timers re-arm from the stored deadlines.
A room it does not hold yet but the directory says it owns is loaded on first use.

Commands, joins, presence changes, welcomes and lobby reads reach a host through its Redis inbox,
not as Ray calls: a Ray call costs ~0.7 ms of the caller's CPU (docs/architecture.md), and at a
human pace nearly every call would carry a single request. The host takes whatever its inbox
holds, answers each request as soon as it is done (never waiting for its neighbours), and
publishes the replies to each gateway's reply channel, the replies completed in one turn of the
loop in one message. A command from a gateway that listens to the room (its request says so) is
answered in the message that carries the write's events instead, when the write has events: one
SPUBLISH fewer per command, and one message fewer for the gateway to read. The request and its
reply, both ends, are `actors.inbox`'s.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets

import ray

from actors.clock import Clock, RealClock
from actors.heap import freeze_startup_heap
from actors.config import Config
from actors.metrics import HostMetrics, export_gauges, watch_loop_lag
from actors.inbox import Outbox, Request, Rider, RoomUnavailable, read_request
from actors.lobby import LobbyTiming
from actors.names import BadName, clean_name
from actors.room import Room
from actors.room_data import RoomData, error_frame
from actors.redis_connect import connect
from actors.store import RedisStore, Store, patiently
from actors.tables import Kind, NoSuchKind

INBOX_WAIT = 1.0  # seconds one inbox read blocks (a Redis blocking pop) before trying again

log = logging.getLogger(__name__)


class RoomHost:
    def __init__(self, name: str, config: Config, store: Store, clock: Clock,
                 metrics: HostMetrics | None = None) -> None:
        self.name = name
        self.rooms: dict[str, Room] = {}
        self.metrics = metrics = metrics or HostMetrics()
        metrics.rooms.set_function(lambda: len(self.rooms))
        metrics.players.set_function(
            lambda: sum(len(room.data.players) for room in self.rooms.values()))
        metrics.mailbox.set_function(lambda: sum(room.backlog for room in self.rooms.values()))
        metrics.mailbox_max.set_function(
            lambda: max((room.backlog for room in self.rooms.values()), default=0))
        self._store = store
        self._clock = clock
        self._settings = config.room_settings()
        self._durations = dict(config.durations)
        self._room_options = {
            "on_close": self._forget, "idle_close": config.idle_close * 1000,
            "lobby_idle_close": (config.lobby_idle_close or config.idle_close) * 1000,
            "on_persist": self.metrics.observe_persist,
            "timing": LobbyTiming(config.public_countdown * 1000, config.lobby_away * 1000,
                                  config.lobby_max_age * 1000 or None,
                                  config.game_idle_close * 1000 or None,
                                  config.max_game_age * 1000 or None,
                                  config.vote_settled * 1000)}
        self._sweep_every = config.presence_lease * 1000 // 3
        self._loading: dict[str, asyncio.Task] = {}
        self._sweeper: asyncio.Task | None = None
        self._inbox: asyncio.Task | None = None
        # Changes when the process restarts: a gateway that sees it change re-sends what it had
        # queued for this host and never heard back about (the old process may have taken it).
        self.incarnation = secrets.token_hex(8)
        self._answering: set[asyncio.Task] = set()
        self._outbox = Outbox(name, lambda gateway, message: self._store.reply(gateway, message),
                              self._keep)

    async def start(self) -> None:
        """Take over every room this host owned before a restart (re-arming their timers)."""
        codes = await patiently(lambda: self._store.host_rooms(self.name), f"host {self.name}")
        results = await asyncio.gather(
            *(patiently(functools.partial(self._room, code), f"room {code}") for code in codes),
            return_exceptions=True)
        for code, result in zip(codes, results):
            if isinstance(result, Exception):  # not an outage (those are retried): a bad snapshot
                log.error("host %s: could not load room %s: %r", self.name, code, result)
            elif result is None:  # over, or never written: its release may not have landed
                await patiently(functools.partial(self._store.release, self.name, code),
                                f"releasing room {code}")
        log.info("host %s started with %d rooms", self.name, len(self.rooms))
        self._sweeper = asyncio.create_task(self._sweep_forever(),
                                            name=f"host {self.name} presence")
        self._inbox = asyncio.create_task(self.serve_inbox(), name=f"host {self.name} inbox")

    async def stop(self) -> None:
        """Stop serving: the inbox, the sweeper and the replies in progress (tests; a real host
        ends with its process)."""
        tasks = [t for t in (self._inbox, self._sweeper, *self._answering) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def serve_inbox(self) -> None:
        """Forever: take the inbox's requests (actors.inbox) in order and answer each one as
        soon as it is done."""
        while True:
            try:
                raws = await self._store.take_requests(self.name, INBOX_WAIT)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # Redis unreachable: the requests wait in the inbox
                log.warning("host %s: inbox read failed (%r); retrying", self.name, e)
                await asyncio.sleep(0.5)
                continue
            if raws:
                self.metrics.inbox_requests.observe(len(raws))
            for raw in raws:  # tasks start in this order: a room's requests reach it in order
                try:
                    request = read_request(raw)
                except (TypeError, ValueError):
                    log.error("host %s: unreadable request %r dropped", self.name, raw[:200])
                    continue
                self._keep(asyncio.create_task(self._answer(request)))

    async def _answer(self, request: Request) -> None:
        reply = await self.request(request.kind, request.code, request.seat, request.arg)
        self._outbox.put(request.gateway, request.number, reply)

    def _keep(self, task: asyncio.Task) -> None:
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def sweep_presence(self) -> None:
        """Take the gateway processes whose presence lease lapsed out of every seat here."""
        held = {code: room.gateways() for code, room in self.rooms.items()}
        ids = sorted(set().union(*held.values()))
        if not ids:
            return
        gone = set(ids) - await self._store.live_gateways(ids)
        await asyncio.gather(*(self.rooms[code].gateways_gone(frozenset(gateways & gone))
                               for code, gateways in held.items()
                               if gateways & gone and code in self.rooms))

    async def _sweep_forever(self) -> None:
        while True:
            await self._clock.sleep_until(self._clock.now() + self._sweep_every)
            try:
                await self.sweep_presence()
            except Exception as e:  # Redis unreachable: the next sweep will tell
                log.warning("host %s: presence sweep failed (%r)", self.name, e)

    async def create_room(self, code: str, name: str, token_hash: str,
                          table: tuple[str, str] | None = None, address: str = "") -> dict:
        """Open room `code` here and seat its creator: {"seat": 0} or {"error", "message"}.
        `table`: (preset, language) of a public table; None: a private one; `address`: the
        creator's mark (`actors.client.address_mark`)."""
        try:
            clean_name(name)
            kind = None if table is None else Kind(*table)
        except (BadName, NoSuchKind) as e:
            return {"error": e.code, "message": str(e)}
        room = self.rooms.get(code)
        if room is None:  # else a retried create that already happened: join dedupes by token
            settings = self._settings if kind is None else kind.settings(self._durations)
            room = await Room.create(code, settings=settings, host=self.name, store=self._store,
                                     clock=self._clock, kind=kind, **self._room_options)
            self.rooms[code] = room
        return await room.join(name, token_hash, address=address)

    async def join(self, code: str, name: str, token_hash: str, promised: bool = False,
                   address: str = "") -> dict:
        room = await self._room(code)
        if room is None:
            known = await self._store.load(code) is not None
            return {"error": "room_started" if known else "room_not_found", "message": "not open"}
        return await room.join(name, token_hash, promised, address)

    async def request(self, kind: str, code: str, seat: int, arg):
        """One request of a gateway: ("command", code, seat, (frame, received ms or None, proof[,
        rider])) -> ack/error frame, or RODE (proof: the start of the seat's token hash, or None;
        rider: an `actors.inbox.Rider`, `Room.command`'s);
        ("presence", code, seat, (gateway, connected)) -> None; ("watch", code, None,
        (gateway, count)) -> None (spectator sockets); ("welcome", code, seat, proof)
        -> welcome, {"moved": True} or None; ("join", code, None, (name, token hash, promised,
        address mark)) -> {"seat"} or a refusal;
        ("lobby", code, None, None) -> lobby facts or None; RoomUnavailable (returned) when the
        room could not be loaded."""
        try:
            if kind == "command":
                return await self.command(code, seat, *arg)
            if kind == "welcome":
                return await self.welcome(code, seat, arg)
            if kind == "join":
                return await self.join(code, *arg)
            if kind == "lobby":
                return await self.lobby(code)
            if kind == "watch":
                await self.watch(code, *arg)
                return None
            await self.presence(code, seat, *arg)
        except Exception:  # e.g. the room could not be loaded: this request fails, no other
            log.exception("host %s: %s for room %s failed", self.name, kind, code)
            if kind == "command":
                frame = arg[0] if isinstance(arg, (list, tuple)) and arg else None
                return error_frame(frame.get("id") if isinstance(frame, dict) else None, "internal",
                                   "the room is unavailable, retry")
            if kind in ("welcome", "join", "lobby"):
                # returned, not raised: the client raises it for this caller only
                return RoomUnavailable(f"room {code} is unavailable, retry")
        return None

    async def command(self, code: str, seat: int, frame: dict, received: int | None = None,
                      proof: str | None = None, rider: Rider | None = None):
        room = await self._room(code)
        if room is None:
            frame_id = frame.get("id") if isinstance(frame, dict) else None
            return error_frame(frame_id, "room_closed", "the room is closed")
        return await room.command(seat, frame, received, proof, rider)

    async def presence(self, code: str, seat: int, gateway: str, connected: bool) -> None:
        room = await self._room(code)
        if room is not None:
            await room.presence(seat, gateway, connected)

    async def watch(self, code: str, gateway: str, count: int) -> None:
        room = await self._room(code)
        if room is not None:  # a finished room counts nobody any more
            await room.watch(gateway, count)

    async def welcome(self, code: str, seat: int, proof: str | None = None) -> dict | None:
        room = await self._room(code)
        if room is not None:
            return room.welcome(seat, proof)
        data = await self._stored(code)  # finished or broken: served from its snapshot
        return None if data is None else data.welcome(seat)

    async def lobby(self, code: str) -> dict | None:
        room = await self._room(code)
        data = await room.durable() if room is not None else await self._stored(code)
        return None if data is None else data.lobby()

    def stats(self) -> dict:
        return {"name": self.name, "pid": os.getpid(), "rooms": len(self.rooms)}

    async def _stored(self, code: str) -> RoomData | None:
        stored = await self._store.load(code)
        return None if stored is None else RoomData.from_stored(stored)

    async def _room(self, code: str) -> Room | None:
        room = self.rooms.get(code)
        if room is not None:
            return room
        task = self._loading.get(code)
        if task is None:  # one load per room however many callers are waiting for it
            task = self._loading[code] = asyncio.create_task(self._load(code))
            task.add_done_callback(lambda _: self._loading.pop(code, None))
        return await asyncio.shield(task)

    async def _load(self, code: str) -> Room | None:
        if (await self._store.status(code)).get("host") != self.name:
            return None
        room = await Room.load(code, host=self.name, store=self._store, clock=self._clock,
                               **self._room_options)
        if room is not None:
            self.rooms[code] = room
        return room

    def _forget(self, room: Room) -> None:
        """A closed room leaves; not a newer Room of the same code that replaced it."""
        if self.rooms.get(room.code) is room:
            del self.rooms[room.code]


@ray.remote(num_cpus=0)
class GameHost:
    """The Ray shell. Options (name, detached, max_restarts) are set where it is created."""

    # Ray awaits it
    async def __init__(self, name: str, config: Config) -> None:  # type: ignore[misc]
        logging.basicConfig(level=logging.INFO)
        self._redis = connect(config.redis_url)
        store = RedisStore(self._redis, config.prefix, config.finished_ttl, config.redis_wait)
        self._host = RoomHost(name, config, store, RealClock())
        metrics = self._host.metrics
        if ray.get_runtime_context().was_current_actor_reconstructed:
            metrics.restarts.inc()
        metrics.export_to_ray(name)
        await self._host.start()
        self._lag = asyncio.create_task(watch_loop_lag(metrics.observe_lag))
        self._export = asyncio.create_task(export_gauges(metrics))
        freeze_startup_heap()

    async def create_room(self, code: str, name: str, token_hash: str,
                          table: tuple[str, str] | None = None, address: str = "") -> dict:
        return await self._host.create_room(code, name, token_hash, table, address)

    def incarnation(self) -> str:
        """Changes with every (re)start of this actor's process."""
        return self._host.incarnation

    def stats(self) -> dict:
        """Name, process id (the crash test kills it) and rooms held."""
        return self._host.stats()

    def metrics(self) -> str:
        """This host's metrics, Prometheus text format (loop lag, mailboxes, persists, batches)."""
        return self._host.metrics.text()
