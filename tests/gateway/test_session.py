"""The session's delivery rules with an in-memory room and sockets (the end-to-end tests check
the same through the real stack): order, audience, replay, and dropping a socket that stops
reading without slowing down the others."""
import asyncio
import functools
from contextlib import asynccontextmanager

import orjson
from starlette.websockets import WebSocketState

from actors.subscriptions import Since, Unseated
from actors.room_data import WATCHER
from actors.config import Config
from gateway.metrics import Metrics
from gateway.seats import LocalSeats, PresenceReports
from gateway.state import GatewayState
from gateway import ws
from gateway.framing import FRAMED_SEND, WRITES
from gateway.ws import (CLOSE_OVERFLOW, CLOSE_REMOVED, CLOSE_RESEATED, LOCAL_BURST_FACTOR,
                        MAX_REFUSED_IN_A_ROW, SEND_QUEUE_FRAMES, Session, WatchSession,
                        origin_allowed)
from actors.room import RATE_LIMITS


def received(frame: dict) -> dict:
    """What the server hands the socket for a text frame its client sent."""
    return {"type": "websocket.receive", "text": orjson.dumps(frame).decode()}


def stored(seq: int, to=None) -> dict:
    return {"seq": seq, "to": to, "frame": orjson.dumps({"type": "event", "seq": seq}).decode()}


class Room:
    """The RoomClient calls a session makes, over a list of stored events."""

    def __init__(self, log: list[dict], lag: int = 0) -> None:
        self.log = log
        self.lag = lag  # events stored and published that the room's welcome does not show yet
        self.listeners: list[tuple[asyncio.Queue, int]] = []
        self.presence_calls: list[tuple[int, bool]] = []
        self.commands: list[dict] = []  # what reached the room
        self._presence_changed = asyncio.Condition()

    @asynccontextmanager
    async def listen(self, room, seat, queue):
        self.listeners.append((queue, seat))
        queue.put_nowait(Since(len(self.log)))
        yield queue

    def publish(self, event: dict) -> None:
        """As RoomClient.listen: to each listener, the events its seat may see."""
        self.log.append(event)
        for queue, seat in self.listeners:
            if event["to"] is None or seat in event["to"]:
                queue.put_nowait(event)

    async def welcome(self, room, seat, proof=None):
        if proof == "moved":  # the seat's token is another seat's now
            return {"moved": True}
        return {"seq": len(self.log) - self.lag, "view": {"room": room}}

    async def events_after(self, room, since, upto=None):
        return self.log[since:upto]

    async def command(self, room, seat, frame, received=None, proof=None):
        self.commands.append(frame)
        return {"type": "ack", "id": frame["id"]}

    async def presence(self, room, seat, connected):
        async with self._presence_changed:
            self.presence_calls.append((seat, connected))
            self._presence_changed.notify_all()

    async def until_presence(self, calls: list[tuple[int, bool]]) -> None:
        async with self._presence_changed:
            await asyncio.wait_for(self._presence_changed.wait_for(
                lambda: self.presence_calls == calls), 5)


class Socket:
    """A client socket: records what it is sent; `stuck` never completes a send (it stopped
    reading and its buffers are full)."""

    def __init__(self, stuck: bool = False) -> None:
        self.stuck = stuck
        self.sent: list[dict] = []
        self.closed_with: int | None = None
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.arrived = asyncio.Event()
        self.application_state = self.client_state = WebSocketState.CONNECTED
        self.scope = {"type": "websocket"}

    async def send_text(self, text: str) -> None:
        if self.stuck and self.sent:
            await asyncio.Event().wait()
        self.sent.append(orjson.loads(text))
        self.arrived.set()

    async def receive(self) -> dict:
        return await self.inbox.get()

    async def close(self, code: int, reason: str | None = None) -> None:
        self.closed_with, self.close_reason = code, reason
        self.application_state = WebSocketState.DISCONNECTED

    async def until(self, predicate) -> None:
        async def wait():
            while not predicate(self.sent):
                self.arrived.clear()
                await self.arrived.wait()
        await asyncio.wait_for(wait(), 5)


def gateway(room: Room) -> GatewayState:
    seats = LocalSeats()
    return GatewayState(config=Config(), rooms=room, seats=seats, metrics=Metrics(), limits=None,
                        presence=PresenceReports(seats,
                                                 functools.partial(ws.report_presence, room)),
                        tables=None)


async def test_welcome_then_replay_then_live_events_of_the_seat_only_never_twice():
    room = Room([stored(1), stored(2, to=[4]), stored(3, to=[1]), stored(4)])
    socket = Socket()
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gateway(room)).run(since=1))
    await socket.until(lambda sent: sent and sent[-1].get("seq") == 4)
    room.publish(stored(4))  # already in the replay (published again by a racing subscription)
    room.publish(stored(5, to=[2]))
    room.publish(stored(6, to=[1, 2]))
    await socket.until(lambda sent: sent[-1].get("seq") == 6)

    assert [(f["type"], f["seq"]) for f in socket.sent] == [
        ("welcome", 4), ("event", 3), ("event", 4), ("event", 6)]
    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(session, 5)
    await room.until_presence([(1, True), (1, False)])


async def test_what_went_out_past_a_lagging_welcome_before_the_socket_listened_is_read_from_the_log(
        ):
    # The welcome answers at 1: the write of 2 and 3 was published but has not returned to the room.
    room = Room([stored(1), stored(2, to=[2]), stored(3)], lag=2)
    socket = Socket()
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gateway(room)).run(since=None))
    await socket.until(lambda sent: sent and sent[-1].get("seq") == 3)
    room.publish(stored(4))
    await socket.until(lambda sent: sent[-1].get("seq") == 4)

    assert [(f["type"], f["seq"]) for f in socket.sent] == [
        ("welcome", 1), ("event", 3), ("event", 4)]
    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(session, 5)


class FramedSocket(Socket):
    """A socket whose connection takes an event's frame as bytes (gateway.framing.FRAMED_SEND)."""

    def __init__(self) -> None:
        super().__init__()
        self.scope = {"type": "websocket", "extensions": {FRAMED_SEND: self.send_framed}}

    def send_framed(self, frame: bytes) -> bool:
        self.sent.append(orjson.loads(frame[2:]))  # a short text frame: two bytes of header
        self.arrived.set()
        return True


async def test_a_live_event_is_written_as_it_is_published_unless_something_waits_before_it():
    room = Room([stored(1)])
    socket = FramedSocket()
    session = Session(socket, "ROOMAA", 1, gateway(room))
    running = asyncio.create_task(session.run(since=0))
    await socket.until(lambda sent: sent and sent[-1].get("seq") == 1)
    room.publish(stored(2))  # the first live event follows the welcome's marker through the sender
    await socket.until(lambda sent: sent[-1].get("seq") == 2)

    room.publish(stored(3))
    room.publish(stored(3))  # published again (a racing subscription): not written twice
    assert [f.get("seq") for f in socket.sent] == [1, 1, 2, 3]  # written as published: no wait
    session.queue.put_nowait((orjson.dumps({"type": "ack", "id": "x"}).decode(), 0.0))
    room.publish(stored(4))  # behind the queued ack
    assert socket.sent[-1].get("seq") == 3
    await socket.until(lambda sent: sent[-1].get("seq") == 4)
    assert [(f["type"], f.get("seq")) for f in socket.sent[-2:]] == [("ack", None), ("event", 4)]

    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(running, 5)


async def test_a_socket_that_stops_reading_is_dropped_and_the_others_keep_up():
    room = Room([])
    gw = gateway(room)
    stuck, fine = Socket(stuck=True), Socket()
    sessions = [asyncio.create_task(Session(s, "ROOMAA", seat, gw).run(since=None))
                for seat, s in enumerate((stuck, fine))]
    await stuck.until(lambda sent: sent)
    await fine.until(lambda sent: sent)
    for seq in range(1, SEND_QUEUE_FRAMES + 3):  # the reading socket keeps up with each one
        room.publish(stored(seq))
        await fine.until(lambda sent: sent[-1].get("seq") == seq)

    await asyncio.wait_for(sessions[0], 5)  # dropped by the frame that took it past the bound
    assert stuck.closed_with == CLOSE_OVERFLOW
    assert not sessions[1].done()
    await fine.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(sessions[1], 5)


async def test_a_socket_that_falls_too_far_behind_during_its_welcome_is_dropped_after_it():
    class BusyRoom(Room):
        # the room moves on while the welcome is taken
        async def welcome(self, room, seat, proof=None):
            welcome = await super().welcome(room, seat)
            for seq in range(len(self.log) + 1, len(self.log) + SEND_QUEUE_FRAMES + 2):
                self.publish(stored(seq))
            return welcome

    socket = Socket()
    await asyncio.wait_for(Session(socket, "ROOMAA", 1, gateway(BusyRoom([]))).run(since=None), 5)
    assert [f["type"] for f in socket.sent] == ["welcome"]
    assert socket.closed_with == CLOSE_OVERFLOW


async def test_a_socket_stuck_in_its_replay_is_dropped_and_one_that_reads_it_is_not(monkeypatch):
    # the checks come quickly, the rule is the same
    monkeypatch.setattr(ws, "REPLAY_STALL_SECONDS", 0.01)
    room = Room([stored(seq) for seq in range(1, 3 * SEND_QUEUE_FRAMES)])
    gw = gateway(room)
    stuck, reader = Socket(stuck=True), Socket()
    dropped = asyncio.create_task(Session(stuck, "ROOMAA", 1, gw).run(since=0))
    await stuck.until(lambda sent: sent)  # the welcome went out, then nothing more is taken
    await asyncio.wait_for(dropped, 5)  # a check saw no progress with more than the bound left
    assert stuck.closed_with == CLOSE_OVERFLOW

    served = asyncio.create_task(Session(reader, "ROOMAA", 2, gw).run(since=0))
    await reader.until(lambda sent: sent and sent[-1].get("seq") == len(room.log))
    # far behind while it replayed, but it kept reading
    assert not served.done() and reader.closed_with is None
    await reader.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(served, 5)


async def test_a_seat_removed_from_the_lobby_gets_the_event_then_its_close():
    room = Room([stored(1)])
    socket = Socket()
    session = asyncio.create_task(Session(socket, "ROOMAA", 2, gateway(room)).run(since=None))
    await socket.until(lambda sent: sent and sent[-1].get("type") == "welcome")
    room.publish(stored(2))  # the `removed` event, then what Subscriptions puts after it
    room.listeners[0][0].put_nowait(Unseated(removed=True))
    await asyncio.wait_for(session, 5)
    assert socket.sent[-1]["seq"] == 2 and socket.closed_with == CLOSE_REMOVED


async def test_a_welcome_for_a_seat_that_moved_closes_for_a_reconnect():
    socket = Socket()
    await asyncio.wait_for(Session(socket, "ROOMAA", 2, gateway(Room([])), "moved").run(None), 5)
    assert socket.closed_with == CLOSE_RESEATED
    assert not [f for f in socket.sent if f.get("type") == "welcome"]


class Writes:
    """The connection's side of a framed socket (gateway.framing.FramedWebSocketProtocol): bytes
    the transport has not written (set by the test), the stall callback, and the drop."""

    def __init__(self, socket: Socket) -> None:
        self.socket = socket
        socket.scope = {"type": "websocket", "extensions": {WRITES: self}}
        self.buffered = 0
        self.on_stall = None
        self.dropped: int | None = None
        self.dropped_event = asyncio.Event()

    def unsent(self) -> int:
        return self.buffered

    def watch(self, seconds: float, on_stall) -> None:
        self.on_stall = on_stall

    def drop(self, code: int, grace: float) -> None:
        self.dropped = code
        self.dropped_event.set()


def config(**changes) -> Config:
    return Config(**changes)


async def test_a_socket_whose_connection_holds_too_many_unsent_bytes_is_dropped_by_the_next_event():
    room = Room([])
    gw = gateway(room)
    gw.config = config(ws_unsent_bytes=10_000)
    socket, fine = Socket(), Socket()
    writes = Writes(socket)
    sessions = [asyncio.create_task(Session(s, "ROOMAA", seat, gw).run(since=None))
                for seat, s in enumerate((socket, fine))]
    await socket.until(lambda sent: sent)
    await fine.until(lambda sent: sent)
    room.publish(stored(1))
    await socket.until(lambda sent: sent[-1].get("seq") == 1)
    writes.buffered = 10_001  # written, never taken by the kernel: the peer stopped reading
    room.publish(stored(2))
    await asyncio.wait_for(sessions[0], 5)
    assert writes.dropped == CLOSE_OVERFLOW and socket.closed_with is None  # not the ASGI close
    assert [f.get("seq") for f in socket.sent] == [0, 1]
    await fine.until(lambda sent: sent[-1].get("seq") == 2)  # the other socket is served
    assert not sessions[1].done()
    await fine.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(sessions[1], 5)


async def test_the_queue_counts_its_bytes_with_the_connections_against_the_bound():
    class BusyRoom(Room):
        async def welcome(self, room, seat, proof=None):  # a few big events while it is taken
            welcome = await super().welcome(room, seat)
            for seq in range(1, 5):
                self.publish({**stored(seq), "frame": "x" * 4000})
            return welcome

    gw = gateway(BusyRoom([]))
    gw.config = config(ws_unsent_bytes=10_000)
    socket = Socket()
    writes = Writes(socket)
    await asyncio.wait_for(Session(socket, "ROOMAA", 1, gw).run(since=None), 5)
    # Three events queued (12,000 bytes), the fourth finds them past 10,000: dropped once the
    # welcome is written, with nothing more sent.
    assert [f["type"] for f in socket.sent] == ["welcome"]
    assert writes.dropped == CLOSE_OVERFLOW


async def test_a_connection_that_does_not_drain_is_dropped_in_its_welcome_and_after_it():
    room = Room([stored(seq) for seq in range(1, 50)])
    gw = gateway(room)
    stuck = Socket(stuck=True)  # takes the welcome, then no write completes
    writes = Writes(stuck)
    dropped = asyncio.create_task(Session(stuck, "ROOMAA", 1, gw).run(since=0))
    await stuck.until(lambda sent: sent)
    writes.on_stall()  # the connection's timer: no drain for ws_drain_seconds
    await asyncio.wait_for(dropped, 5)
    assert writes.dropped == CLOSE_OVERFLOW and len(stuck.sent) == 1

    idle = Socket()  # past its welcome, nothing to send: the stall alone drops it
    writes = Writes(idle)
    served = asyncio.create_task(Session(idle, "ROOMAA", 2, gw).run(since=None))
    await idle.until(lambda sent: sent)
    writes.on_stall()
    await asyncio.wait_for(served, 5)
    assert writes.dropped == CLOSE_OVERFLOW


def settings_event(seq: int, spectators: str) -> dict:
    return {"seq": seq, "to": None, "frame": orjson.dumps(
        {"type": "event", "seq": seq, "kind": "settings",
         "settings": {"rules": {"spectators": spectators}}, "roles_in_play": {}}).decode()}


async def test_a_spectator_is_closed_by_the_settings_event_that_forbids_spectators():
    room = Room([stored(1)])
    socket = Socket()
    session = asyncio.create_task(WatchSession(socket, "ROOMAA", WATCHER, gateway(room)).run(None))
    await socket.until(lambda sent: sent)
    room.publish(settings_event(2, "allowed"))
    room.publish({**stored(3),
                  "frame": '{"type":"event","seq":3,"kind":"chat","text":"forbidden"}'})
    await socket.until(lambda sent: sent[-1].get("seq") == 3)
    assert not session.done()
    room.publish(settings_event(4, "forbidden"))
    room.publish(stored(5))
    await asyncio.wait_for(session, 5)
    assert (socket.closed_with, socket.close_reason) == (1008, "spectators_forbidden")
    assert [f.get("seq") for f in socket.sent] == [1, 2, 3, 4]  # the event, then the close


async def test_a_spectator_whose_welcome_forbids_spectators_is_refused():
    class ForbiddingRoom(Room):  # the host forbade them between the hello and the welcome
        async def welcome(self, room, seat, proof=None):
            return {"seq": 1, "view": {"settings": {"rules": {"spectators": "forbidden"}}}}

    socket = Socket()
    await asyncio.wait_for(
        WatchSession(socket, "ROOMAA", WATCHER, gateway(ForbiddingRoom([]))).run(None), 5)
    assert socket.sent == [] and (socket.closed_with, socket.close_reason) == (
        1008, "spectators_forbidden")


def test_origin_is_the_served_host_or_an_allowed_one_and_absent_for_non_browsers():
    assert origin_allowed(None, "game.example", ())  # no Origin: not a browser
    assert origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000", ())
    assert origin_allowed("https://Game.Example", "game.example", ())  # default port, any case
    assert origin_allowed("https://game.example", "game.example:443", ())
    assert origin_allowed("http://[::1]:8000", "[::1]:8000", ())
    assert not origin_allowed("https://evil.example", "game.example", ())
    assert not origin_allowed("http://game.example:8001", "game.example:8000", ())
    assert not origin_allowed("https://game.example", "game.example:80", ())  # 443 is not 80
    assert not origin_allowed("null", "game.example", ())  # a sandboxed frame, a file
    assert not origin_allowed("http://game.example:x", "game.example", ())
    assert not origin_allowed("https://game.example", None, ())
    # Behind a proxy that sends its own Host upstream: the public origin is listed.
    assert origin_allowed("https://game.example/", "10.0.0.5:8000", ("https://game.example",))
    assert origin_allowed("https://any.example", "10.0.0.5:8000", ("*",))


async def test_sockets_saying_hello_at_once_share_one_welcome_of_their_seat():
    class SlowRoom(Room):
        def __init__(self, log) -> None:
            super().__init__(log)
            self.asked: list[int] = []
            self.gate = asyncio.Event()

        async def welcome(self, room, seat, proof=None):
            self.asked.append(seat)
            await self.gate.wait()  # every socket has said hello before the room answers
            return await super().welcome(room, seat, proof)

    room = SlowRoom([stored(1)])
    gw = gateway(room)
    sockets = [Socket() for _ in range(6)]
    kinds = [(Session, 1)] * 3 + [(WatchSession, WATCHER)] * 3
    sessions = [asyncio.create_task(kind(s, "ROOMAA", seat, gw).run(since=None))
                for s, (kind, seat) in zip(sockets, kinds)]
    while len(room.listeners) < len(sockets):
        await asyncio.sleep(0)  # every socket subscribed (no I/O here: tasks run in turn)
    for _ in range(3):
        await asyncio.sleep(0)  # and its welcome task has asked, or joined one in flight
    room.gate.set()
    for socket in sockets:
        await socket.until(lambda sent: sent)
    assert sorted(room.asked) == [WATCHER, 1]
    assert [s.sent[0]["seat"] for s in sockets] == [1, 1, 1, None, None, None]
    room.publish(stored(2))
    for socket in sockets:
        await socket.until(lambda sent: sent[-1].get("seq") == 2)
        await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(asyncio.gather(*sessions), 5)


def chat(frame_id) -> dict:
    return {"type": "websocket.receive",
            "text": orjson.dumps({"type": "chat", "id": frame_id, "text": "hi"}).decode()}


def frozen_clock(monkeypatch, holds: list[float], advances: bool) -> None:
    """The gateway's read time, frozen (no token comes back by itself); the socket's holds are
    recorded instead of slept, and with `advances` they move the clock on by their length."""
    now = [1_000_000_000]  # ms
    monkeypatch.setattr(ws.time, "time_ns", lambda: now[0] * 1_000_000)
    monkeypatch.setattr(ws, "monotonic", lambda: now[0] / 1000)

    async def hold(session, seconds: float) -> None:
        holds.append(seconds)
        if advances:
            now[0] += round(seconds * 1000)
        await asyncio.sleep(0)

    monkeypatch.setattr(Session, "_hold", hold)


async def test_a_flood_past_its_burst_is_refused_then_not_read_until_a_token_is_back(monkeypatch):
    holds: list[float] = []
    frozen_clock(monkeypatch, holds, advances=True)
    room = Room([stored(1)])
    socket = Socket()
    gw = gateway(room)
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gw).run(since=None))
    await socket.until(lambda sent: sent and sent[0]["type"] == "welcome")
    burst, rate = RATE_LIMITS["chat"][0] * LOCAL_BURST_FACTOR, RATE_LIMITS["chat"][1]
    sent = burst + 20
    for i in range(sent):
        await socket.inbox.put(chat(i))
    await socket.inbox.put(received({"type": "act", "id": "a", "action": "vote", "targets": [2]}))
    await socket.until(lambda frames: sum(f["type"] in ("ack", "error")
                                          for f in frames) == sent + 1)

    # Past the burst, a refused frame leaves the socket unread until its token is back: the next
    # frame has it. Another kind has its own limit.
    replies = {f["id"]: f for f in socket.sent if f["type"] in ("ack", "error")}
    refused = list(range(burst, sent, 2))
    assert [f["id"] for f in room.commands] == [i for i in range(sent) if i not in refused] + ["a"]
    assert all(replies[i]["code"] == "rate_limited" for i in refused)
    assert holds == [1 / rate] * len(refused)
    assert gw.metrics.refused_here.labels("chat")._value.get() == len(refused)
    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(session, 5)
    assert socket.closed_with == 1000


async def test_the_rooms_rate_limit_spends_the_sockets_copy_of_it(monkeypatch):
    class Limiting(Room):
        async def command(self, room, seat, frame, received=None, proof=None):
            self.commands.append(frame)
            return {"type": "error", "id": frame["id"], "code": "rate_limited", "message": "no"}

    holds: list[float] = []
    frozen_clock(monkeypatch, holds, advances=False)
    room = Limiting([stored(1)])
    socket = Socket()
    gw = gateway(room)
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gw).run(since=None))
    await socket.until(lambda sent: sent and sent[0]["type"] == "welcome")
    await socket.inbox.put(chat(0))
    await socket.until(lambda frames: frames[-1].get("id") == 0)
    await socket.inbox.put(chat(1))  # the copy's burst is not spent by itself: the room's is
    await socket.until(lambda frames: frames[-1].get("id") == 1)
    assert [f["id"] for f in room.commands] == [0]
    assert socket.sent[-1]["code"] == "rate_limited" and len(holds) == 1
    assert gw.metrics.refused_here.labels("chat")._value.get() == 1
    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(session, 5)


async def test_a_socket_refused_too_often_in_a_row_is_closed_after_its_last_refusal(monkeypatch):
    holds: list[float] = []
    frozen_clock(monkeypatch, holds, advances=False)  # no token ever comes back
    room = Room([stored(1)])
    socket = Socket()
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gateway(room)).run(since=None))
    await socket.until(lambda sent: sent and sent[0]["type"] == "welcome")
    burst = RATE_LIMITS["chat"][0] * LOCAL_BURST_FACTOR
    for i in range(burst):
        await socket.inbox.put(chat(i))
    await socket.until(lambda frames: sum(f["type"] == "ack" for f in frames) == burst)
    unread = 10
    for i in range(burst, burst + MAX_REFUSED_IN_A_ROW + unread):
        await socket.inbox.put(chat(i))
    await asyncio.wait_for(session, 5)

    answers = [f for f in socket.sent if f["type"] in ("ack", "error")]
    assert [f.get("code") for f in answers[burst:]] == ["rate_limited"] * MAX_REFUSED_IN_A_ROW
    assert (socket.closed_with, socket.close_reason) == (1008, "refused")
    assert socket.inbox.qsize() == unread  # never read
    assert len(room.commands) == burst and len(holds) == MAX_REFUSED_IN_A_ROW


async def test_a_spectator_sending_commands_is_closed_after_its_refusals():
    socket = Socket()
    session = asyncio.create_task(
        WatchSession(socket, "ROOMAA", WATCHER, gateway(Room([stored(1)]))).run(since=None))
    await socket.until(lambda sent: sent and sent[0]["type"] == "welcome")
    for i in range(MAX_REFUSED_IN_A_ROW):
        if i % 2:  # within the ping limit
            await socket.inbox.put({"type": "websocket.receive",
                                    "text": orjson.dumps({"type": "ping", "id": f"p{i}"}).decode()})
        await socket.inbox.put(chat(i))
    await asyncio.wait_for(session, 5)
    assert [f.get("code") for f in socket.sent if f["type"] == "error"] == \
        ["not_authenticated"] * MAX_REFUSED_IN_A_ROW  # its pings' acks did not break the run
    assert (socket.closed_with, socket.close_reason) == (1008, "refused")
