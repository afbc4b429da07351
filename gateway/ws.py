"""The WebSocket session: `GET /ws/{room}` (see docs/protocol.md).

Order of delivery: subscribe to the room first (live events buffer in the socket's queue), take the
actor's `welcome` at seq S, replay the stored events `since < seq <= S`, then forward the buffered
and live events with `seq > S`: nothing is sent twice and nothing is reordered. The queue starts
with `Since(n)`: with n > S (the welcome lagged a write already published, or the connection
dropped before the room's first message), the events `S < seq <= n` are read from the log first.
Each event goes to the socket only if its seat is in the event's audience (`to`), as the stored
frame text.

A socket that does not read what it is sent is dropped (close 1013; it resyncs with `since`): when
it is SEND_QUEUE_FRAMES behind, when its unsent bytes (its queue's and its connection's write
buffer's) pass `ws_unsent_bytes`, or when its connection has not drained for `ws_drain_seconds`,
its welcome and replay included. The welcome's view carries the last WELCOME_CHAT_LINES
(actors.room_data) of each chat channel (`chat_omitted` counts the others), so that no frame of a
welcome is large.
"""
from __future__ import annotations

import asyncio
import logging
import time
from time import monotonic
from dataclasses import dataclass
from urllib.parse import urlsplit

import orjson
from fastapi import Depends, WebSocket, WebSocketDisconnect, status
from pydantic import ValidationError
from starlette.websockets import WebSocketState

from actors import (PROOF_CHARS, RATE_LIMITS, WATCHER, RoomClient, RoomNotFound, Since, TokenBucket,
                    Unseated, token_hash)
from gateway import frames
from gateway.frames import MAX_ID_CHARS
from gateway.framing import FRAMED_SEND, WRITES, text_frame
from gateway.limits import client_address
from gateway.state import GatewayState, gateway_state
from gateway.welcome import forbidding, forbids_spectators, shared_welcome

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 4096
HELLO_TIMEOUT = 5.0
# Frames the gateway refuses in a row (bad frames, commands and pings past the socket's limits, a
# spectator's commands, a guest's host commands: the room's `not_host`) that close the socket (1008
# `refused`). The room's other errors neither count nor break a run (a host's form may well meet
# the room's settings limit); an acked command breaks it.
MAX_REFUSED_IN_A_ROW = 20
# A socket refused past one of its limits is not read again until that limit has a token back (its
# next frames wait in the network, at no CPU of ours), nor for longer than this: the slowest limits
# give one a 10 s, and a client's pings, past them, must still be answered within its dead-link
# rule (2.5 s, gateway/static/js/conn.js).
MAX_HOLD_SECONDS = 1.0
SEND_QUEUE_FRAMES = 512  # a socket this far behind is dropped; it resyncs with `since`
REPLAY_PAGE = 256  # stored events a replay reads from the log at once
# How often a socket still taking its welcome and replay is checked for having stopped reading.
# A reader can pause for seconds and still be reading (a phone, a loaded client): at 2 s the soak's
# generator, starved of CPU, had 11 re-reads of a finished game's log dropped.
REPLAY_STALL_SECONDS = 5.0
WATCHERS_PER_ROOM = 100  # spectator sockets of one room on one gateway process
CLOSE_TIMEOUT = 5.0  # a socket that reads nothing cannot take a close frame either
# Commands of one socket awaiting their reply. The receive loop reads on while they travel (a seat's
# next frame never waits for the previous reply); past this, it stops reading that socket. A socket
# whose last answer was not an ack (or that has had none yet) has one at a time: a flood from the
# first frame reaches its room once before the refusal spends the socket's copy of the limit, not
# COMMANDS_IN_FLIGHT times for each of its sockets (36 flooding sockets sent ~38 commands each to
# the rooms before their limits were spent, all at once: loadtest/README.md, "A flooding socket").
# It waits for its command's answer ONE_AT_A_TIME_SECONDS at most, then reads on: while the socket
# is not read its pings wait too, and the client's dead-link rule is 2.5 s (static/js/conn.js).
COMMANDS_IN_FLIGHT = 8
ONE_AT_A_TIME_SECONDS = 1.0
PING_BURST, PING_RATE = 10, 2.0  # per socket: a client pings to see it is connected, not to load us
# The room's rate limit per seat and kind is the authority; each socket also keeps a copy, at the
# same rate with a larger burst, so a flood is refused here without a trip to the room. The copy
# sees only this socket's commands, so it refuses only what the room would refuse too, save a
# reconnect's resent commands, which the room acks without a token: the extra burst lets them by.
LOCAL_BURST_FACTOR = 2
CLOSE_OVERFLOW = 1013  # "try again later": the client reconnects with `since`
CLOSE_REMOVED = 4003  # the seat left the lobby or was removed: its token proves nothing any more
CLOSE_RESEATED = 4004  # the seat moved into a removed one's place: reconnect, the welcome tells it
CLOSE_FORBIDDEN = status.WS_1008_POLICY_VIOLATION  # a spectator, once the host forbids spectators
CLOSE_REFUSED = status.WS_1008_POLICY_VIOLATION  # MAX_REFUSED_IN_A_ROW, reason `refused`
# Queued after the refusal that ends a run: the sender closes the socket once the refusals before
# it are written.
_REFUSED_ENOUGH = object()
# What uvicorn raises when a frame is sent after it answered the client's close frame itself.
_CLOSED_BY_PEER = "after sending 'websocket.close'"


class BadFrame(Exception):
    """The client's frame is not a valid command; `id` is echoed when it could be read."""

    def __init__(self, message: str, frame_id: str | int | None = None) -> None:
        super().__init__(message)
        self.frame_id = frame_id


@dataclass(frozen=True)
class Hello:
    seat: int  # WATCHER for a spectator
    since: int | None
    proof: str | None = None  # the start of the seat's token hash, sent with its requests


def parse_frame(raw: str | bytes | None) -> dict:
    """Decode a client frame and validate it against its model (gateway/frames.py); returns the
    command with only the known fields."""
    if raw is None:
        raise BadFrame("empty frame")
    size = len(raw.encode()) if isinstance(raw, str) else len(raw)
    if size > MAX_FRAME_BYTES:
        raise BadFrame(f"frame is {size} bytes, the limit is {MAX_FRAME_BYTES}")
    try:
        frame = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BadFrame("frame is not JSON") from None
    if not isinstance(frame, dict):
        raise BadFrame("frame is not a JSON object")
    frame_id = frame.get("id")
    try:
        frames.FRAME_ID.validate_python(frame_id)
    except ValidationError:
        raise BadFrame(f"id must be a string of at most {MAX_ID_CHARS} characters or an integer") \
            from None
    try:
        return frames.command_dict(frames.COMMAND.validate_python(frame))
    except ValidationError as e:
        first = e.errors()[0]
        model = frames.COMMANDS.get(first["loc"][0]) if len(first["loc"]) > 1 else None
        if model is None:
            raise BadFrame(f"unknown frame type {frame.get('type')!r}", frame_id) from None
        raise BadFrame(model.messages[first["loc"][1]], frame_id) from None


async def hello(websocket: WebSocket, room: str,
                gw: GatewayState = Depends(gateway_state)) -> Hello | None:
    """Auth dependency: accept, read the first frame, resolve its token to a seat of this room.
    None if the handshake failed (the socket is then closed with 1008) or the client left."""
    await websocket.accept()
    if not origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host"),
                          gw.config.allowed_origins):
        gw.metrics.errors.labels("bad_origin").inc()
        return await _refuse(websocket, "bad_origin")
    try:
        message = await asyncio.wait_for(websocket.receive(), HELLO_TIMEOUT)
    except asyncio.TimeoutError:
        return await _refuse(websocket, "no hello")
    if message["type"] == "websocket.disconnect":
        return None
    gw.metrics.messages_in.labels("hello").inc()
    raw = message.get("text") or message.get("bytes")
    try:
        frame = orjson.loads(raw) if raw and len(raw) <= MAX_FRAME_BYTES else None
    except orjson.JSONDecodeError:
        frame = None
    try:
        first = frames.HELLO.validate_python(frame)
    except ValidationError:
        return await _refuse(websocket, "first frame must be hello")
    if first.watch:
        return await _watcher(websocket, room, first.since, gw)
    seat = await gw.rooms.authenticate(room, first.token)
    if seat is None:
        return await _refuse(websocket, "not_authenticated")
    return Hello(seat=seat, since=first.since, proof=token_hash(first.token)[:PROOF_CHARS])


async def _watcher(websocket: WebSocket, room: str, since: int | None,
                   gw: GatewayState) -> Hello | None:
    """A spectator's hello: any room that exists and whose host allows spectators (the house rule
    `spectators`; a socket watching when the host forbids them is closed). No token: an unknown
    room counts against the address's lookups, as the HTTP lookups do (gateway/app.py)."""
    address = client_address(websocket.client and websocket.client.host)
    limit = gw.config.lookup_failures_per_address
    if limit and await gw.limits.spent("lookups", address) >= limit:
        return await _refuse(websocket, "rate_limited")
    try:
        facts = await gw.rooms.lobby(room)
    except RoomNotFound:
        if limit:
            await gw.limits.spend("lookups", address)
        return await _refuse(websocket, "room_not_found")
    if forbids_spectators(facts):
        return await _refuse(websocket, "spectators_forbidden")
    return Hello(seat=WATCHER, since=since)


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """A browser's socket comes from the page this gateway served (its Origin names the Host the
    socket was opened to, default ports alike) or from an origin of `allowed` ("*": any); a
    socket without Origin is not a browser's (no page of another site can open it)."""
    if origin is None:
        return True
    origin = origin.strip().rstrip("/").lower()
    if "*" in allowed or origin in allowed:
        return True
    try:
        page, served = urlsplit(origin), urlsplit("//" + (host or "").strip().lower())
        if page.scheme not in ("http", "https") or not page.hostname or not served.hostname:
            return False
        default = 443 if page.scheme == "https" else 80
        return (page.hostname == served.hostname
                and (page.port or default) == (served.port or default))
    except ValueError:  # a port that is not a number
        return False


async def _refuse(websocket: WebSocket, reason: str) -> None:
    try:
        await websocket.close(status.WS_1008_POLICY_VIOLATION, reason)
    except (WebSocketDisconnect, OSError):
        pass  # the client had already gone


async def websocket_endpoint(websocket: WebSocket, room: str,
                             who: Hello | None = Depends(hello),
                             gw: GatewayState = Depends(gateway_state)) -> None:
    if who is not None:
        kind = WatchSession if who.seat == WATCHER else Session
        await kind(websocket, room.upper(), who.seat, gw, who.proof).run(who.since)


class SendQueue(asyncio.Queue):
    """A socket's frames to write. Fan-out never waits for a socket, so one that reads slower than
    its room writes only grows its queue (or, past its welcome, its connection's write buffer:
    events are written without waiting for it to drain): the frame that finds it SEND_QUEUE_FRAMES
    behind, or holding more than `ws_unsent_bytes` unsent, drops the socket instead (1013; its
    client resyncs with `since`). Checked as frames arrive, not by scanning every socket: at tens
    of thousands of sockets a scan each second was a visible share of a gateway's CPU. One frame
    larger than the bound (a long game's `game_over`) still goes to a socket that reads it."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self._session = session
        self.bytes = 0  # the frames' text, as they wait here

    def put_nowait(self, item) -> None:
        session = self._session
        if session.overflowed:
            return
        if session.behind() >= SEND_QUEUE_FRAMES \
                or self.bytes + session.buffered() > session.unsent_limit:
            session.overflow()
            return
        if type(item) is dict and session.write_through(item):
            return
        super().put_nowait(item)

    def _put(self, item) -> None:
        super()._put(item)
        self.bytes += _text_size(item)

    def _get(self):
        item = super()._get()
        self.bytes -= _text_size(item)
        return item


def _text_size(item) -> int:
    if type(item) is dict:  # an event
        return len(item["frame"])
    return len(item[0]) if type(item) is tuple else 0  # a reply; Since, Unseated


class Session:
    """One socket of one seat. Events reach it through `RoomClient.listen` (one Redis pub/sub
    connection per process, already deduplicated and gap-filled by room); acks and errors join the
    same queue so that a single task writes to the socket."""

    def __init__(self, websocket: WebSocket, room: str, seat: int, gw: GatewayState,
                 proof: str | None = None) -> None:
        self.ws = websocket
        self.room = room
        self.seat = seat
        self.proof = proof
        self.refused: int | None = None  # the close code when the welcome was refused
        self.close_reason: str | None = None
        self.gw = gw
        self.metrics = gw.metrics
        self.queue = SendQueue(self)
        self.overflowed = False
        self.sender: asyncio.Task | None = None
        self._welcoming: asyncio.Task | None = None
        self._drained_never = False  # dropped by `stalled`: it would not read a close frame either
        self._ended = False
        self._live = False  # past the welcome and its replay
        self.last = 0  # the welcome's seq: events up to it are in the view or the replay
        self._unsent = 0  # taken from the queue by the sender, not written yet
        self._in_flight = asyncio.Semaphore(COMMANDS_IN_FLIGHT)
        self._commands: set[asyncio.Task] = set()
        self._pings = TokenBucket(PING_RATE, PING_BURST)
        self._refused_in_a_row = 0
        self._acked = False  # the room's last answer to this socket: commands in flight at once
        self._refused_enough = False  # MAX_REFUSED_IN_A_ROW reached: the socket is closing
        self._limits: dict[str, TokenBucket] = {}  # made on a kind's first command
        self._replay_left = 0  # events of the replay not written yet (at most)
        extensions = websocket.scope.get("extensions") or {}
        # gateway/framing.py: an event's frame written as the same bytes for all its sockets, and
        # the connection's writes (its unsent bytes, a stall callback, drop); None without it.
        self._send_framed, self._writes = extensions.get(FRAMED_SEND), extensions.get(WRITES)
        self.buffered = (lambda: 0) if self._writes is None else self._writes.unsent
        self.unsent_limit = gw.config.ws_unsent_bytes
        self._written = 0  # welcome-stage frames written (the stall check watches it move)

    def behind(self) -> int:
        """Frames waiting to be written to this socket."""
        return self.queue.qsize() + self._unsent

    def write_through(self, event: dict) -> bool:
        """Write a live event at once when nothing waits before it, as a room's events mostly
        arrive (one by one): the sender task is not woken for it, a task switch per socket and
        frame (its CPU effect is within the capacity runs' spread so far: docs/capacity.md).
        False leaves the event to the queue and the sender: in the welcome or its replay, behind
        queued frames, for a spectator (an event may close its socket) or on a connection that
        cannot take framed bytes."""
        if not self._live or self._ended or self._unsent or self.queue.qsize() \
                or self._send_framed is None or self.seat == WATCHER:
            return False
        if event["seq"] > self.last:
            if not self._send_framed(framed(event)):
                return False
            self.last = event["seq"]
            self.metrics.events_written += 1
        return True

    def overflow(self) -> None:
        """Too far behind: stop serving this socket (at once if it is past its welcome, else as
        soon as the welcome is done)."""
        self.overflowed = True
        self.metrics.dropped.inc()
        if self.sender is not None and not self.sender.done():
            self.sender.cancel()

    def stalled(self) -> None:
        """The connection has not drained for `ws_drain_seconds`: stop serving it now, in its
        welcome or replay too (a write there waits for the drain that does not come)."""
        if self._ended:  # closing already
            return
        self._drained_never = True
        if not self.overflowed:
            self.overflowed = True
            self.metrics.dropped.inc()
        for task in (self._welcoming, self.sender):
            if task is not None and not task.done():
                task.cancel()

    async def run(self, since: int | None) -> None:
        gw, room, seat = self.gw, self.room, self.seat
        limit = WATCHERS_PER_ROOM if seat == WATCHER else gw.config.sockets_per_seat
        if not gw.seats.enter(room, seat, limit):
            # Each socket multiplies the room's fan-out: a seat has a few tabs, not a thousand.
            self.metrics.errors.labels("too_many_sockets").inc()
            return await _refuse(self.ws, "too_many_sockets")
        self.metrics.sockets.inc()
        close_code = status.WS_1000_NORMAL_CLOSURE
        if self._writes is not None:
            self._writes.watch(gw.config.ws_drain_seconds, self.stalled)
        try:
            started = time.perf_counter()
            # subscribed before the welcome is taken
            async with gw.rooms.listen(room, seat, self.queue):
                self.metrics.welcome_stages["subscribe"].observe(time.perf_counter() - started)
                welcoming = self._welcoming = asyncio.create_task(self._welcome(since))
                try:
                    await self._until_welcomed(welcoming)
                finally:
                    welcoming.cancel()
                if welcoming.cancelled():  # it stopped reading its welcome or replay
                    close_code = CLOSE_OVERFLOW
                    return
                if not welcoming.result():
                    close_code = self.refused or status.WS_1011_INTERNAL_ERROR
                    return
                if self.overflowed:  # fell behind during its replay
                    close_code = CLOSE_OVERFLOW
                    return
                self.metrics.welcome_stages["total"].observe(time.perf_counter() - started)
                gw.presence.changed(room, seat)  # reported by a task: frames are read meanwhile
                close_code = await self._serve()
        except (WebSocketDisconnect, OSError):
            pass  # the client left during the welcome
        except Exception:  # e.g. no pub/sub confirmation: this socket ends, nothing else does
            log.exception("session failed in room %s seat %s", room, seat)
            close_code = status.WS_1011_INTERNAL_ERROR
        finally:
            self._ended = True
            self.metrics.sockets.dec()
            gw.seats.leave(room, seat)
            gw.presence.changed(room, seat)
            if close_code == CLOSE_OVERFLOW and self._writes is not None:
                # Not the ASGI close: it would wait for the drain that does not come.
                self._writes.drop(CLOSE_OVERFLOW, 0 if self._drained_never else CLOSE_TIMEOUT)
            elif self._refused_enough and self._writes is not None:
                # Not the ASGI close either: it reads (and parses) on until the client's answer,
                # which comes behind the rest of its flood.
                self._writes.drop(CLOSE_REFUSED, CLOSE_TIMEOUT, "refused", read=False)
            elif self.ws.application_state == WebSocketState.CONNECTED \
                    and self.ws.client_state == WebSocketState.CONNECTED:
                try:
                    await asyncio.wait_for(self.ws.close(close_code, self.close_reason),
                                           CLOSE_TIMEOUT)
                except Exception:  # the peer vanished or stopped reading: nothing left to do
                    pass

    async def _until_welcomed(self, welcoming: asyncio.Task) -> None:
        """Wait for the welcome and replay to be written, dropping the socket (cancelling them)
        if it took no frame for a whole check while more than SEND_QUEUE_FRAMES are left: a long
        replay is far behind by nature, but a socket that reads takes it frame by frame."""
        checked = -1
        while not (await asyncio.wait((welcoming,), timeout=REPLAY_STALL_SECONDS))[0]:
            stalled, checked = self._written == checked, self._written
            if stalled and self.behind() + self._replay_left > SEND_QUEUE_FRAMES:
                self.metrics.dropped.inc()
                welcoming.cancel()
                await asyncio.wait((welcoming,))
                return

    async def _welcome(self, since: int | None) -> bool:
        """Send the welcome and, with `since`, the stored events the seat missed up to it."""
        stages = self.metrics.welcome_stages
        try:
            started = time.perf_counter()
            welcome = await shared_welcome(self.gw.rooms, self.room, self.seat, self.proof)
            stages["welcome"].observe(time.perf_counter() - started)
            if welcome.moved:  # a lobby seat was removed since the token was read
                self.refused = CLOSE_RESEATED
                return False
            if self.seat == WATCHER and welcome.forbids_spectators:  # since the hello
                self.refused, self.close_reason = CLOSE_FORBIDDEN, "spectators_forbidden"
                return False
            upto = welcome.seq
        except Exception:
            log.exception("no welcome in room %s for seat %s", self.room, self.seat)
            error = _error(None, "internal", "the room is unavailable, reconnect later")
            self._count_out(error)
            await self.ws.send_text(orjson.dumps(error).decode())
            return False
        await self.ws.send_text(welcome.text)
        self.metrics.messages_out.labels("welcome").inc()
        self._written += 1
        if since is not None:
            stages["replay"].observe(await self._replay(since, upto))
        self.last = upto
        return True

    async def _replay(self, after: int, upto: int) -> float:
        """Send the stored events after < seq <= upto that this seat may see, read from the log a
        page at a time (a socket holds one page, not the log); return the seconds spent reading."""
        cursor, reading = after, 0.0
        while cursor < upto:
            self._replay_left = upto - cursor
            started = time.perf_counter()
            page = await self.gw.rooms.events_after(
                self.room, cursor, upto=min(upto, cursor + REPLAY_PAGE))
            reading += time.perf_counter() - started
            for event in page:
                await self._send_event(event)
                self._written += 1
                self._replay_left -= 1
            cursor += REPLAY_PAGE
        self._replay_left = 0
        return reading

    async def _serve(self) -> int:
        """Run the sender and the receiver until either ends; return the close code."""
        self._live = True
        sender = self.sender = asyncio.create_task(self._send_loop())
        receiver = asyncio.create_task(self._receive_loop())
        try:
            await asyncio.wait((sender, receiver), return_when=asyncio.FIRST_COMPLETED)
            if sender.cancelled():  # by drop_if_behind
                return CLOSE_OVERFLOW
            return (sender if sender.done() else receiver).result()
        except (WebSocketDisconnect, OSError):
            return status.WS_1000_NORMAL_CLOSURE  # the client went away mid-send
        except RuntimeError as e:
            if _CLOSED_BY_PEER not in str(e):
                raise
            return status.WS_1000_NORMAL_CLOSURE  # the server had answered the client's close
        finally:
            for task in (sender, receiver, *self._commands):
                task.cancel()
            await asyncio.gather(sender, receiver, *self._commands, return_exceptions=True)

    def _reply(self, frame: dict) -> None:
        self._count_out(frame)
        self.queue.put_nowait((orjson.dumps(frame).decode(), time.perf_counter()))

    def _refusal(self, frame: dict) -> None:
        """Answer a frame the gateway refuses itself; MAX_REFUSED_IN_A_ROW of them close the
        socket, after the last one."""
        self._reply(frame)
        self._refused_in_a_row += 1
        if self._refused_in_a_row >= MAX_REFUSED_IN_A_ROW and not self._refused_enough:
            self._refused_enough = True
            self.queue.put_nowait(_REFUSED_ENOUGH)

    def _count_out(self, frame: dict) -> None:
        if frame["type"] == "error":
            self.metrics.errors.labels(frame["code"]).inc()
        self.metrics.messages_out.labels(frame["type"]).inc()

    async def _send_event(self, event: dict) -> None:
        """A replayed event, if this seat may see it (live ones come filtered by `listen`)."""
        to = event["to"]
        if to is None or self.seat in to:
            await self.ws.send_text(event["frame"])
            self.metrics.out_event.inc()
            if self._live and self.seat == WATCHER and forbidding(event):
                self.close_reason = "spectators_forbidden"

    async def _send_loop(self) -> int:
        """The socket's one writer. Everything queued goes out in one pass (one wake-up for a
        burst), and the frame counter is bumped once per pass: per frame, both are a visible
        share of a gateway's CPU."""
        queue, ack_wait, sent = self.queue, self.metrics.ack_wait, self.metrics.out_event
        depth = self.metrics.socket_queue
        send, send_framed = self.ws.send_text, self._send_framed
        watching = self.seat == WATCHER
        while True:
            items = [await queue.get()]
            while not queue.empty():
                items.append(queue.get_nowait())
            depth.observe(len(items))
            events = 0
            self._unsent = len(items)
            for item in items:
                if isinstance(item, tuple):  # a reply, with when it was ready
                    await send(item[0])
                    ack_wait.observe(time.perf_counter() - item[1])
                elif isinstance(item, Unseated):
                    return CLOSE_REMOVED if item.removed else CLOSE_RESEATED
                elif item is _REFUSED_ENOUGH:
                    self.close_reason = "refused"
                    return CLOSE_REFUSED
                elif isinstance(item, Since):
                    if item.seq > self.last:  # past the welcome, not queued: the log has them
                        self.metrics.late_joins.inc()
                        await self._replay(self.last, item.seq)
                        self.last = item.seq
                        if self.close_reason:  # the host forbade spectators meanwhile
                            return CLOSE_FORBIDDEN
                elif item["seq"] > self.last:
                    self.last = item["seq"]
                    if send_framed is None or not send_framed(framed(item)):
                        await send(item["frame"])
                    events += 1
                    if watching and forbidding(item):  # the host forbade spectators
                        self.close_reason = "spectators_forbidden"
                        sent.inc(events)
                        return CLOSE_FORBIDDEN
                self._unsent -= 1
            if events:
                sent.inc(events)

    async def _receive_loop(self) -> int:
        """Read client frames until the client leaves (returns the server's close code). A frame
        past one of the socket's limits is refused, and the socket is not read again until that
        limit has a token back (at most MAX_HOLD_SECONDS): a flood is read at its limit's rate,
        the rest waits in the network."""
        while not self._refused_enough:
            message = await self.ws.receive()
            received = time.time_ns() // 1_000_000  # the room's rate limit counts from here
            if message["type"] == "websocket.disconnect":
                return status.WS_1000_NORMAL_CLOSURE
            try:
                command = parse_frame(message.get("text") or message.get("bytes"))
            except BadFrame as e:
                self.metrics.messages_in.labels("bad").inc()
                self._refusal(_error(e.frame_id, "bad_frame", str(e)))
                continue
            kind = command["type"]
            self.metrics.messages_in.labels(kind).inc()
            if kind == "ping":  # answered here, so limited here (commands by their room)
                if self._pings.take():
                    self._reply({"type": "ack", "id": command["id"]})
                else:
                    self._refusal(_error(command["id"], "rate_limited",
                                         "too many pings, slow down"))
                    await self._hold(self._pings.wait())
                continue
            if not self._acked and self._commands:  # one at a time (COMMANDS_IN_FLIGHT)
                await asyncio.wait(tuple(self._commands), timeout=ONE_AT_A_TIME_SECONDS)
            # The socket's copy of the limit runs on the monotonic clock, as its hold does (the
            # room's stamps are whole milliseconds, and would refuse a frame read on time).
            read_at = monotonic()
            bucket = self._bucket(kind, read_at)
            if bucket is not None and not bucket.take(read_at):
                self.metrics.refused_here.labels(kind).inc()
                self._refusal(_error(command["id"], "rate_limited",
                                     f"too many {kind} commands, slow down"))
                await self._hold(bucket.wait(read_at))
                continue
            await self._in_flight.acquire()
            task = asyncio.create_task(self._command(command, received))
            self._commands.add(task)
            task.add_done_callback(self._commands.discard)
        # Read no more: the sender closes the socket once the refusals are written.
        if self.sender is not None:
            await asyncio.wait((self.sender,))
        return CLOSE_REFUSED

    async def _hold(self, seconds: float) -> None:
        """Leave the socket unread for `seconds` (at most MAX_HOLD_SECONDS)."""
        # A millisecond more: uvloop's timers round to whole milliseconds, and one that fired
        # early would find the token not yet back, and refuse (and hold) once more.
        await asyncio.sleep(min(seconds + 0.001, MAX_HOLD_SECONDS))

    def _bucket(self, kind: str, now: float) -> TokenBucket | None:
        """This socket's copy of the room's rate limit (LOCAL_BURST_FACTOR); None for kinds the
        room does not limit, or does not know: they go to the room to be answered there."""
        bucket = self._limits.get(kind)
        if bucket is None:
            if kind not in RATE_LIMITS:
                return None
            burst, rate = RATE_LIMITS[kind]
            bucket = self._limits[kind] = TokenBucket(rate, burst * LOCAL_BURST_FACTOR, now)
        return bucket

    async def _command(self, command: dict, received: int) -> None:
        """One command's round trip; its reply joins the socket's queue. Commands of one socket
        reach their room in the order they were read (the lane keeps a room's order)."""
        started = time.perf_counter()
        try:
            reply = await self.gw.rooms.command(self.room, self.seat, command, received, self.proof)
        except Exception:
            log.exception("command %s failed in room %s", command["type"], self.room)
            reply = _error(command["id"], "internal", "the room did not answer, retry")
        finally:
            self._in_flight.release()
        self.metrics.command_seconds.labels(command["type"]).observe(time.perf_counter() - started)
        code = reply.get("code")
        self._acked = reply["type"] == "ack"
        if self._acked:
            self._refused_in_a_row = 0
        elif code in ("rate_limited", "not_host"):
            self._spend(command["type"])
        if code == "not_host":  # our client never asks: its forms are the host's
            self._refusal(reply)
        else:
            self._reply(reply)

    def _spend(self, kind: str) -> None:
        """The room refused a command past its limit (the room's burst is half the copy's) or
        one this seat may not give: this socket's copy is spent as well, so that the next ones
        of that kind are refused here, the socket left unread, not carried to the room."""
        bucket = self._limits.get(kind)
        if bucket is not None:
            now = monotonic()
            while bucket.take(now):
                pass


class WatchSession(Session):
    """A spectator's socket: no seat, no commands (everything but `ping` is refused); it gets the
    public view and the events whose audience is everybody (`listen` with WATCHER), and it is
    counted in the room's lobby facts (`spectators`). The `settings` event that forbids
    spectators closes it (1008 `spectators_forbidden`), once it has had that event."""

    def _bucket(self, kind: str, now: float) -> TokenBucket | None:
        return None  # refused below whatever the rate: nothing goes to the room

    async def _command(self, command: dict, received: int) -> None:
        self._in_flight.release()
        self._refusal(_error(command["id"], "not_authenticated",
                             "a spectator's socket is read-only"))


async def report_presence(rooms: RoomClient, room: str, seat: int, value: int) -> None:
    """Tell the room what this process holds of a seat (`value`: connected 1 or 0) or of its
    spectators (WATCHER: `value` sockets); see gateway.seats.PresenceReports."""
    try:
        if seat == WATCHER:
            await rooms.watch(room, value)
        else:
            await rooms.presence(room, seat, bool(value))
    except Exception:  # the room keeps what it last heard from this process
        log.exception("presence report failed in room %s seat %s", room, seat)


def framed(event: dict) -> bytes:
    """The event's WebSocket frame, made once for all the sockets it goes to."""
    frame = event.get("framed")
    if frame is None:
        frame = event["framed"] = text_frame(event["frame"])
    return frame


def _error(frame_id: str | int | None, code: str, message: str) -> dict:
    return {"type": "error", "id": frame_id, "code": code, "message": message}


async def keep_presence_lease(gw: GatewayState) -> None:
    """Lifespan task: renew this process's presence lease every third of it. After a lapse (Redis
    unreachable, or this process starved, for a whole lease) hosts may have marked its seats
    disconnected, so every seat with a socket here is announced again (under the new presence
    id the renewal took: RoomClient.renew_lease)."""
    while True:
        await asyncio.sleep(gw.config.presence_lease / 3)
        try:
            if not await gw.rooms.renew_lease():
                continue
            held = gw.seats.held()
            log.warning("presence lease had lapsed; announcing %d seats again", len(held))
            for room, seat in held:
                if seat == WATCHER:
                    await gw.rooms.watch(room, gw.seats.count(room, seat))
                else:
                    await gw.rooms.presence(room, seat, True)
        except Exception as e:
            log.warning("presence lease renewal failed (%r); retrying", e)
