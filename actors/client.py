"""`RoomClient`: everything the gateway needs from the cluster, and nothing it must remember.

Reads that only need Redis (tokens, the event log, events as they are published) never call an
actor. Everything else goes to the room's host: a room's creation as a Ray call, every other
request (commands, joins, presence, welcomes, lobby reads) through the host's Redis inbox; both
are retried while the host restarts, and the room recognises a retried frame by seat, id and
content, and a retried join by its token hash.
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import itertools
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

import orjson
import ray
import redis.asyncio as aioredis
from ray.exceptions import ActorUnavailableError, RayActorError

from actors import ownership
from actors.config import Config
from actors.inbox import RoomUnavailable, settle, write_request
from actors.placement import PlacementActor
from actors.names import BadName, clean_name
from actors.redis_connect import connect
from actors.refusals import (AgainRefused, ConfigMismatch, HostRetired, JoinRefused, NameTaken,
                              ROOM_MOVED, RoomFull, RoomNotFound, RoomStarted, ServerFull)
from actors.reports import Filed, Refused as ReportRefused, Reports
from actors.room_data import RoomData, error_frame
from actors.store import REDIS_DOWN, Keys, RedisStore, StorageUnavailable, patiently
from actors.subscriptions import Subscriptions
from actors.tables import Kind

log = logging.getLogger(__name__)

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L
CODE_LENGTH = 6
RESTART_PATIENCE = 60.0  # seconds a call keeps retrying while its host actor restarts
REPLY_PATIENCE = 2.0  # seconds without a reply before asking whether the host restarted
RESEND_AFTER = 10.0  # seconds without a reply before a request is sent again anyway (a lost reply)
MOVED_RETRIES = 3  # a command answered ROOM_MOVED is sent again, this many times in all
HOSTS_REMEMBERED = 50_000  # room -> host entries cached per process
MAKING_POLL = 0.025  # seconds a quick-play press waits while another one opens its table
PRESS_TTL = 600  # seconds a quick-play press's outcome is kept for its retries
AGAIN_LEASE = 60  # seconds the first click of "play again" has to open the next game

_REFUSALS: dict[str, type[Exception]] = {
    cls.code: cls for cls in (RoomNotFound, RoomFull, RoomStarted, NameTaken, BadName)}
_REFUSALS["internal"] = RoomUnavailable  # the room could not write (Redis unreachable): retry
_REFUSALS["room_closed"] = RoomStarted  # it ended meanwhile
# What a request retries for a while: an unreachable Redis, here or behind a host's answer.
RETRIED = (*REDIS_DOWN, RoomUnavailable)


def time_ms() -> int:
    return time.time_ns() // 1_000_000


def token_hash(token: str) -> str:
    # surrogatepass: a token with a lone surrogate (JSON can carry one) is a wrong token, not a 500
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def address_mark(code: str, address: str) -> str:
    """What room `code` keeps of a seat's address, to refuse it once voted out: a hash salted by
    the room (no address in the clear, and no mark that follows a player from table to table);
    "" for none."""
    if not address:
        return ""
    return hashlib.sha256(f"{code}\0{address}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


def normal_code(room: str) -> str:
    """The canonical room code, or RoomNotFound for anything that cannot be one."""
    code = room.upper() if isinstance(room, str) else ""
    if len(code) != CODE_LENGTH or not all(c in CODE_ALPHABET for c in code):
        raise RoomNotFound(f"no room {room!r}")
    return code


class RoomClient:
    """Use as `async with RoomClient(config) as rc:` (or `await rc.start()` /
    `await rc.close()`)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.keys = Keys(config.prefix)
        self.redis: aioredis.Redis | None = None
        self.store: RedisStore | None = None
        self.subscriptions: Subscriptions | None = None
        self._handles: dict[str, ray.actor.ActorHandle] = {}
        self._hosts: OrderedDict[str, str] = OrderedDict()  # room code -> host actor name, LRU
        self._numbers = itertools.count(1)  # this process's request numbers
        self._waiting: dict[int, asyncio.Future] = {}  # request number -> its reply
        self._outgoing: dict[str, list[tuple[int, bytes]]] = {}  # host -> requests to push now
        self._pushing = False
        self._flushes: set[asyncio.Task] = set()
        self._incarnations: dict[str, str] = {}  # host -> its process's incarnation, as last asked
        self._fetching: dict[tuple, asyncio.Task] = {}  # lookups in progress (see _shared)
        # creations given up, undone once Redis is back
        self._giving_back: set[asyncio.Task] = set()
        # Requests in each pipeline of inbox pushes: the gateway's metric.
        self.observe_push: Callable[[int], None] | None = None
        # This process: the sender of its requests, the name of its reply channel.
        self.gateway_id = secrets.token_hex(8)
        # This process as the rooms know it in their seats' presence; a new one after each lapse
        # of its lease (see `renew_lease`).
        self.presence_id = self.gateway_id
        self._lapses = itertools.count(1)
        self._leased = False

    async def start(self) -> None:
        if not ray.is_initialized():
            ray.init(address=self.config.ray_address, namespace=self.config.namespace,
                     log_to_driver=False)
        self.redis = connect(self.config.redis_url)
        self.store = RedisStore(self.redis, self.config.prefix, self.config.finished_ttl)
        # This Ray cluster owns the prefix, or this gateway must not serve it (PrefixTaken).
        await ownership.claim(self.redis, self.config.prefix,
                              ray.get_runtime_context().get_session_name())
        placement = PlacementActor.options(  # type: ignore[attr-defined]  # made by @ray.remote
            name=self._placement_name, namespace=self.config.namespace, lifetime="detached",
            get_if_exists=True, max_restarts=-1).remote(self.config)
        self._handles[self._placement_name] = placement
        # A setting the placement actor and the hosts read is the cluster's: given another value
        # here it would be silently ignored, so this gateway refuses to start instead.
        differences = self.config.cluster_differences(await placement.config.remote())
        if differences:
            raise ConfigMismatch(
                f"this gateway's settings differ from those cluster prefix {self.config.prefix!r} "
                f"runs with: {'; '.join(differences)}. Start it with the cluster's values, or "
                "restart the whole cluster to change them.")
        self.subscriptions = Subscriptions(self.redis, self.keys, self.store.events_after,
                                           catch_up=not self.config.redis_wait)
        await self.subscriptions.start(self.keys.replies(self.gateway_id), self._on_replies,
                                       me=self.gateway_id)
        await self.renew_lease()  # before any presence names this process

    async def close(self) -> None:
        for task in self._giving_back:  # not done while Redis was away: the slots stay taken
            task.cancel()
        if self.subscriptions is not None:
            await self.subscriptions.close()
        if self.redis is not None:
            try:  # hosts then take this process out of its seats at their next sweep
                await self.redis.delete(self.keys.gateway(self.presence_id))
            except Exception as e:
                log.warning("could not drop the presence lease (%r); it will lapse", e)
            await self.redis.aclose()

    async def renew_lease(self) -> bool:
        """Keep this process's presence lease for `config.presence_lease` seconds more (call it
        every third of that). True if its seats must be announced again: the first call, or after
        a lapse. A lapse may already have been read by a host's sweep whose removal of this
        process from its seats reaches the rooms after they are announced again (a soak saw 423
        of 451 playing rooms count nobody connected, and close as idle under their players); so
        after a lapse this process takes a new presence id and its seats are announced under that:
        sweeping out the old one then removes nothing still held."""
        lease = self.config.presence_lease
        if await self.redis.set(self.keys.gateway(self.presence_id), b"1", ex=lease, xx=True):
            return False
        if self._leased:  # it lapsed
            self.presence_id = f"{self.gateway_id}.{next(self._lapses)}"
        self._leased = True
        await self.redis.set(self.keys.gateway(self.presence_id), b"1", ex=lease)
        return True

    async def __aenter__(self) -> RoomClient:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @property
    def _placement_name(self) -> str:
        return f"{self.config.prefix}-placement"

    # -- rooms -----------------------------------------------------------------------------

    async def create_room(self, name: str, table: Kind | None = None, address: str = "") -> dict:
        """Open a room seating `name` as its host: {"room", "seat": 0, "token"}; `table`: a
        public table of that kind, else a private one. Raises BadName, ServerFull, or
        StorageUnavailable (Redis unreachable for `config.request_patience` s)."""
        name = clean_name(name)
        token = secrets.token_urlsafe(32)
        _, code = await self._open_room(self._deadline(), name, token_hash(token), table,
                                        address)
        return {"room": code, "seat": 0, "token": token}

    async def quick_play(self, name: str, kind: Kind, press: str | None = None,
                         address: str = "",
                         admit: Callable[[], Awaitable[None]] | None = None) -> dict:
        """Seat `name` at the fullest public table of `kind` not started yet, or at a new one:
        {"room", "seat", "token"}. The index (actors.tables) promises the seat atomically, so
        concurrent presses on any gateways never overfill a table, and open a new one only when
        none has a seat left. `press`: the client's id of this press; a retry of it from the
        same `address` with the same name gets the same seat (a press is seated once), the same
        id from elsewhere or with another name is another press (the id is no credential: the
        first press's seat and token never go to another). `admit` is awaited just before the
        press opens a new table (not when it joins one): what it raises refuses the press. Raises
        BadName, ServerFull, StorageUnavailable."""
        name = clean_name(name)
        until = self._deadline()
        if press is None:
            return await self._press(name, kind, until, address, admit)
        bound = "\0".join((press, address, name)).encode("utf-8", "surrogatepass")
        key = self.keys.press(hashlib.sha256(bound).hexdigest())
        while not await patiently(lambda: self.redis.set(key, b"", nx=True, ex=PRESS_TTL),
                                  "quick play", until):
            done = await patiently(lambda: self.redis.get(key), "quick play", until)
            if done:
                return orjson.loads(done)
            if asyncio.get_running_loop().time() > until:
                raise StorageUnavailable("quick play: the same press is still being seated")
            await asyncio.sleep(MAKING_POLL)  # the same press, in progress elsewhere
        try:
            seated = await self._press(name, kind, until, address, admit)
        except BaseException:
            await self.redis.delete(key)
            raise
        await patiently(lambda: self.redis.set(key, orjson.dumps(seated), ex=PRESS_TTL),
                        "quick play", until)
        return seated

    async def _press(self, name: str, kind: Kind, until: float, address: str,
                     admit: Callable[[], Awaitable[None]] | None) -> dict:
        tables, size, tried = self.store.tables, kind.size(), list[str]()
        while True:
            verdict, code = await patiently(lambda: tables.claim(kind, size, tried),
                                            "quick play", until)
            if verdict == "create":
                try:
                    if admit is not None:
                        await admit()
                    return await self.create_room(name, kind, address)
                finally:
                    await patiently(lambda: tables.made(kind), "quick play")
            if verdict == "wait":
                if asyncio.get_running_loop().time() > until:
                    raise ServerFull("no table of this kind could be opened in time")
                await asyncio.sleep(MAKING_POLL)
                continue
            tried.append(code)
            try:
                return await self.join(code, name, promised=True, address=address)
            except (NameTaken, RoomFull):
                await patiently(lambda: tables.seated(kind, code, -1), "quick play", until)
            except (RoomStarted, RoomNotFound):  # the index lagged its room: drop the entry
                await patiently(lambda: tables.ended(kind, code), "quick play", until)
            except Exception:
                await patiently(lambda: tables.seated(kind, code, -1), "quick play")
                raise

    async def public_tables(self, kind: Kind, state: str) -> list[dict]:
        """The kind's listed tables: "open" lobbies (fullest first) or "running" games."""
        tables = self.store.tables
        fetch = tables.open_tables if state == "open" else tables.running_games
        return await patiently(lambda: fetch(kind), "listing tables", self._deadline())

    def _deadline(self) -> float:
        """Until when a request retries while Redis is unreachable (`patiently`'s `until`)."""
        return asyncio.get_running_loop().time() + self.config.request_patience

    async def _open_room(self, until: float, name: str, hashed: str,
                         table: Kind | None = None, address: str = "") -> tuple[str, str]:
        """Reserve a slot on a host, a free code there, and have the host open the room with its
        creator (`name`, token hash `hashed`) seated: (host, code). Each step is retried while
        Redis is unreachable, until `until`; every step can be retried (the host recognises a
        room it holds and a seat by its token hash). A creation that fails after the slot was
        reserved gives slot and code back (as soon as Redis answers), so nothing is left half
        made."""
        host = await patiently(self._place, "placing a room", until, RETRIED)
        code = None

        async def seat_creator() -> None:
            _raise_refusal(await self._call(host, "create_room", code, name, hashed,
                                            None if table is None
                                            else (table.preset, table.language),
                                            address_mark(code, address)))
        try:
            code = await patiently(lambda: self._claim_code(host), "reserving a room code", until,
                                   RETRIED)
            await patiently(seat_creator, f"opening room {code}", until, RETRIED)
        except Exception:
            task = asyncio.create_task(patiently(lambda: self.store.give_back(host, code),
                                                 f"giving back a slot of {host}"))
            self._giving_back.add(task)
            task.add_done_callback(self._giving_back.discard)
            raise
        self._remember(code, host)
        return host, code

    async def _place(self) -> str:
        host = await self._call(self._placement_name, "place")
        if host is None:
            raise ServerFull("every host slot is taken")
        return host

    async def _claim_code(self, host: str) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if await self.store.claim_code(code, host):
                return code

    async def again(self, room: str, token: str,
                    admit: Callable[[], Awaitable[None]] | None = None) -> dict:
        """The next game of a finished room, opened by its host (seat 0): a new room seating the
        same players in the same seats, with the same tokens and settings, in its lobby: the
        host starts it once the table is ready (a player may leave, the host may change the
        settings first). The old room's lobby facts then name it (`next`), so each seat enters
        it with the token it has. {"room", "seat": 0, "token"}; raises RoomNotFound, AgainRefused,
        ServerFull or StorageUnavailable. `admit` is awaited just before a new room is opened (not
        for a retried click): the caller's limit on new rooms, which refuses by raising."""
        code = normal_code(room)
        until = self._deadline()

        async def finished_table() -> tuple[dict, dict[int, str]]:
            seat = await self.authenticate(code, token)
            if seat is None:
                raise AgainRefused("not_authenticated", "no seat of this room has that token")
            if seat != 0:
                raise AgainRefused("not_host", "only the host may start the next game")
            facts = await self._lobby(code)
            hashes = {int(s): h.decode()
                      for h, s in (await self.redis.hgetall(self.keys.tokens(code))).items()}
            return facts, hashes
        facts, hashes = await patiently(finished_table, f"reading room {code}", until, RETRIED)
        if facts["next"] is not None:  # a retried click
            return {"room": facts["next"], "seat": 0, "token": token}
        if facts["status"] != "finished":
            raise AgainRefused("not_your_turn", "the game is not over")
        # One next game per table: clicks arriving together wait for the first one's room
        # (each used to open a room of its own, orphaned with the table's tokens).
        lease = self.keys.again(code)
        if not await patiently(lambda: self.redis.set(lease, b"1", nx=True, ex=AGAIN_LEASE),
                               f"opening the next game of {code}", until):
            while (following := await self.redis.hget(self.keys.room(code), "next")) is None:
                if asyncio.get_running_loop().time() > until or not await self.redis.exists(lease):
                    raise StorageUnavailable(f"the next game of {code} was not opened, retry")
                await asyncio.sleep(MAKING_POLL)
            return {"room": following.decode(), "seat": 0, "token": token}
        try:
            return await self._open_next(code, token, facts, hashes, until, admit)
        except BaseException:
            await self.redis.delete(lease)  # the next click may try again at once
            raise

    async def _open_next(self, code: str, token: str, facts: dict, hashes: dict[int, str],
                         until: float, admit: Callable[[], Awaitable[None]] | None) -> dict:
        if admit is not None:
            await admit()
        names = [p["name"] for p in facts["players"]]
        host, new = await self._open_room(until, names[0], hashes[0])

        async def seat_the_table() -> None:  # each step recognised if it already happened
            for s, name in enumerate(names[1:], start=1):
                _raise_refusal(await self._send(host, ("join", new, None, (name, hashes[s]))))
            reply = await self.command(new, 0, {"type": "settings", "id": "again-settings",
                                                **facts["settings"]})
            if reply["type"] == "error":
                if reply["code"] == "internal":
                    raise RoomUnavailable(reply["message"])
                raise AgainRefused(reply["code"], reply["message"])

        async def name_it() -> str:
            # Named only once every seat is in, so a page that follows the name is let in. A
            # click whose lease lapsed meanwhile may race another: the first to name wins (the
            # other room, unattended, closes idle).
            if await self.redis.hsetnx(self.keys.room(code), "next", new):
                return new
            return (await self.redis.hget(self.keys.room(code), "next")).decode()
        await patiently(seat_the_table, f"seating room {new}", until, RETRIED)
        return {"room": await patiently(name_it, f"naming room {new}", until, RETRIED),
                "seat": 0, "token": token}

    async def join(self, room: str, name: str, promised: bool = False, address: str = "") -> dict:
        """Seat `name`: {"room", "seat", "token"}. Raises RoomNotFound, RoomFull, RoomStarted,
        NameTaken, BadName or StorageUnavailable. Retried while Redis is unreachable: the room
        recognises a retried join by its token hash. `promised`: the table index already counts
        this seat (quick play); `address`: the joiner's (a table that voted it out refuses it)."""
        code = normal_code(room)
        name = clean_name(name)
        token = secrets.token_urlsafe(32)

        async def seat() -> dict:
            try:
                reply = await self._send(await self._host_of(code),
                                         ("join", code, None, (name, token_hash(token), promised,
                                                               address_mark(code, address))))
            except HostRetired:
                raise RoomStarted(f"room {code} has ended") from None
            _raise_refusal(reply)
            return reply
        reply = await patiently(seat, f"joining room {code}", self._deadline(), RETRIED)
        return {"room": code, "seat": reply["seat"], "token": token}

    async def lobby(self, room: str) -> dict:
        """Public lobby facts: room, status, host, players, settings, roles_in_play, next (the
        room of the next game at this table, once a finished room's host has opened it)."""
        code = normal_code(room)
        return await patiently(lambda: self._lobby(code), f"reading room {code}",
                               self._deadline(), RETRIED)

    async def _lobby(self, code: str) -> dict:
        try:
            facts = await self._send(await self._host_of(code), ("lobby", code, None, None))
        except HostRetired:
            data = await self._stored(code)
            facts = None if data is None else data.lobby()
        if facts is None:
            raise RoomNotFound(f"no room {code!r}")
        following = (await self.redis.hget(self.keys.room(code), "next")
                     if facts["status"] == "finished" else None)
        return {**facts, "next": following and following.decode()}

    async def report(self, room: str, token: str, seat: int, reason: str, text: str) -> bool:
        """File the report of seat `seat` by the seat `token` proves, kept for `config.report_ttl`
        (who, whom, when, why, and where the reported seat's chat lines are: actors.reports;
        only operators read them). False if this seat had reported that one already. Raises
        AgainRefused (not_authenticated: no such seat; illegal_target: itself or no seat;
        too_many_reports: past `config.reports_per_seat` or `reports_per_room`)."""
        code = normal_code(room)
        reporter = await self.authenticate(code, token)
        if reporter is None:
            raise AgainRefused("not_authenticated", "no seat of this room has that token")
        if seat == reporter:
            raise AgainRefused("illegal_target", "a report names another seat of the room")
        try:
            if not await self._reports.admissible(code, reporter, seat):
                return False
            facts = await self.lobby(code)  # the seats' names, from the room's host
            players = {p["seat"]: p["name"] for p in facts["players"]}
            if seat not in players:
                raise AgainRefused("illegal_target", "a report names another seat of the room")
            return await self._reports.file(Filed(code, (reporter, players[reporter]),
                                                  (seat, players[seat]), reason, text, time_ms()))
        except ReportRefused as e:
            raise AgainRefused(e.code, str(e)) from None

    async def reports(self, limit: int, cursor: str | None = None) -> dict:
        """The operators' view, a page: actors.reports.Reports.page."""
        return await self._reports.page(limit, cursor)

    @functools.cached_property
    def _reports(self) -> Reports:
        config = self.config
        return Reports(self.redis, self.keys, ttl=config.report_ttl,
                       per_seat=config.reports_per_seat, per_room=config.reports_per_room)

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

    async def welcome(self, room: str, seat: int, proof: str | None = None) -> dict:
        """{"seq": S, "view": ...}: what `seat` may know, exactly as of event S (the end of the
        chat: `RoomData.welcome`); {"moved": True}
        if `proof` (the start of the seat's token hash) is another seat's now (a lobby seat was
        removed and this one moved: authenticate again)."""
        code = normal_code(room)
        try:
            welcome = await self._send(await self._host_of(code), ("welcome", code, seat, proof))
        except HostRetired:
            data = await self._stored(code)
            welcome = None if data is None else data.welcome(seat)
        if welcome is None:
            raise RoomNotFound(f"no room {room!r}")
        return welcome

    async def command(self, room: str, seat: int, frame: dict, received: int | None = None,
                      proof: str | None = None) -> dict:
        """Apply a command frame: the ack (sent once durable) or error frame. `received`: when
        the client's frame was read (wall clock ms), for the room's rate limit; `proof`: the
        start of the seat's token hash, so a seat that moved meanwhile is refused."""
        code = normal_code(room)
        # Listening to the room (a seat's socket is, for as long as its commands run), this
        # process reads the room's events anyway: the reply may come with them.
        listening = self.subscriptions.listening(code)
        for _ in range(MOVED_RETRIES):
            try:
                reply = await self._send(await self._host_of(code), (
                    "command", code, seat, (frame, received, proof, listening)))
            except HostRetired:
                return error_frame(frame.get("id") if isinstance(frame, dict) else None,
                                   "room_closed", "the room is closed")
            # Fenced before it applied the command: the room goes on under its newer owner.
            if not (isinstance(reply, dict) and reply.get("code") == "internal"
                    and reply.get("message") == ROOM_MOVED):
                break
        return reply

    async def presence(self, room: str, seat: int, connected: bool) -> None:
        """This process has its first (connected) or no more (not connected) socket of the seat."""
        code = normal_code(room)
        try:
            await self._send(await self._host_of(code),
                             ("presence", code, seat, (self.presence_id, connected)))
        except HostRetired:
            pass  # the room has ended; nobody's presence matters any more

    async def watch(self, room: str, count: int) -> None:
        """This process now holds `count` spectator sockets of `room` (the lobby counts them)."""
        code = normal_code(room)
        try:
            await self._send(await self._host_of(code),
                             ("watch", code, None, (self.presence_id, count)))
        except HostRetired:
            pass  # the room has ended

    async def events_after(self, room: str, since: int, upto: int | None = None) -> list[dict]:
        """Stored events with since < seq <= upto (to the end if upto is None), in order."""
        return await self.store.events_after(normal_code(room), since, upto)

    def listen(self, room: str, seat: int | None = None, queue: asyncio.Queue | None = None):
        """`async with rc.listen(room, seat) as queue:` a `Since(n)`, then every event after n
        that `seat` may see (every event if seat is None), in seq order, put into `queue` (a new one
        if None).

        Subscribed once the context is entered: with a welcome at seq S fetched inside it, read the
        events S < seq <= n from the log (`events_after`) and skip the queued ones with seq <= S.
        """
        return self.subscriptions.listen(normal_code(room), seat, queue)

    async def host_stats(self, room: str) -> dict:
        """The room's host actor: its name, process id and room count (for tests and ops)."""
        return await self._call(await self._host_of(normal_code(room)), "stats")

    # -- plumbing --------------------------------------------------------------------------

    async def _host_of(self, code: str) -> str:
        host = self._hosts.get(code)
        if host is None:
            host = await self._shared(("host", code), self._look_up_host, code)
        self._remember(code, host)
        return host

    async def _look_up_host(self, code: str) -> str:
        raw = await self.redis.hget(self.keys.room(code), "host")
        if raw is None:
            raise RoomNotFound(f"no room {code!r}")
        return raw.decode()

    async def _shared(self, key: tuple, fetch, *args):
        """One fetch for all the callers that need it at once; they resume in the order they
        asked, so requests of one room reach its host in the order they were made."""
        task = self._fetching.get(key)
        if task is None:
            task = self._fetching[key] = asyncio.create_task(fetch(*args))
            task.add_done_callback(lambda _: self._fetching.pop(key, None))
        return await asyncio.shield(task)

    def _remember(self, code: str, host: str) -> None:
        """A room never changes host, but a long-lived gateway sees unboundedly many rooms."""
        self._hosts[code] = host
        self._hosts.move_to_end(code)
        if len(self._hosts) > HOSTS_REMEMBERED:
            self._hosts.popitem(last=False)

    async def _stored(self, code: str) -> RoomData | None:
        stored = await self.store.load(code)
        return None if stored is None else RoomData.from_stored(stored)

    async def _handle(self, name: str) -> ray.actor.ActorHandle:
        handle = self._handles.get(name)
        if handle is None:
            try:
                handle = await asyncio.to_thread(ray.get_actor, name,
                                                 namespace=self.config.namespace)
            except ValueError:  # no such actor (any more)
                if await self._retired(name):
                    raise HostRetired(name) from None
                raise
            self._handles[name] = handle
        return handle

    async def _retired(self, name: str) -> bool:
        """Host actors stay in P:hosts for as long as they live; the placement actor never
        leaves."""
        return (name != self._placement_name
                and await self.redis.zscore(self.keys.hosts(), name) is None)

    def pending_requests(self) -> int:
        """Requests of this process waiting for their reply (the gateway's metric)."""
        return len(self._waiting)

    async def _send(self, host: str, request: tuple):
        """Put a request in `host`'s Redis inbox and wait for its reply on this process's reply
        channel. Everything queued in one turn of the loop goes out in one pipeline (an RPUSH per
        host). No reply for a while: if the host's process restarted meanwhile (its incarnation
        changed) or it is very late, send it again (the room dedupes what already landed)."""
        incarnation = await self._incarnation(host)
        number = next(self._numbers)
        raw = write_request(self.gateway_id, number, *request)
        future = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        try:
            self._push(host, number, raw)
            waited = 0.0
            while True:
                try:
                    return await asyncio.wait_for(asyncio.shield(future), REPLY_PATIENCE)
                except asyncio.TimeoutError:
                    waited += REPLY_PATIENCE
                # One question per host for every request waiting on it: under load thousands
                # wait at once, and a Ray call each made the gateway slower than the host.
                current = await self._shared(("incarnation", host), self._call, host,
                                             "incarnation")  # HostRetired once it is stopped
                self._incarnations[host] = current
                if current != incarnation or waited >= RESEND_AFTER:
                    log.info("no reply from %s in %.0f s (%s); sending again", host, waited,
                             "restarted" if current != incarnation else "late")
                    incarnation, waited = current, 0.0
                    self._push(host, number, raw)
        finally:
            self._waiting.pop(number, None)

    async def _incarnation(self, host: str) -> str:
        incarnation = self._incarnations.get(host)
        if incarnation is None:
            incarnation = await self._shared(("incarnation", host), self._call, host, "incarnation")
            self._incarnations[host] = incarnation
        return incarnation

    def _push(self, host: str, number: int, raw: bytes) -> None:
        self._outgoing.setdefault(host, []).append((number, raw))
        if not self._pushing:
            self._pushing = True
            asyncio.get_running_loop().call_soon(self._start_flush)

    def _start_flush(self) -> None:
        task = asyncio.create_task(self._flush_pushes())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush_pushes(self) -> None:
        outgoing, self._outgoing, self._pushing = self._outgoing, {}, False
        if self.observe_push is not None:
            self.observe_push(sum(map(len, outgoing.values())))
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for host, items in outgoing.items():
                    inbox = self.keys.inbox(host)
                    pipe.rpush(inbox, *(raw for _, raw in items))
                await pipe.execute()
        except Exception as e:  # Redis unreachable: these requests fail, their callers retry
            for items in outgoing.values():
                for number, _ in items:
                    future = self._waiting.get(number)
                    if future is not None and not future.done():
                        future.set_exception(e)

    def _on_replies(self, replies: list) -> None:
        """A host's replies to this process's requests (actors.inbox: from its reply message,
        or riding a room's events)."""
        settle(self._waiting, replies)

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


def _raise_refusal(reply: dict) -> None:
    if "error" in reply:
        raise _REFUSALS.get(reply["error"], JoinRefused)(reply.get("message", reply["error"]))
