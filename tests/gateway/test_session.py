"""The session's delivery rules with an in-memory room and sockets (the end-to-end tests check
the same through the real stack): order, audience, replay, and dropping a socket that stops
reading without slowing down the others."""
import asyncio
import functools
from contextlib import asynccontextmanager

import orjson
from starlette.websockets import WebSocketState

from actors.client import Since, Unseated
from actors.config import Config
from gateway.metrics import Metrics
from gateway.seats import LocalSeats, PresenceReports
from gateway.state import GatewayState
from gateway import ws
from gateway.ws import (CLOSE_OVERFLOW, CLOSE_REMOVED, CLOSE_RESEATED, SEND_QUEUE_FRAMES,
                        Session)


def stored(seq: int, to=None) -> dict:
    return {"seq": seq, "to": to, "frame": orjson.dumps({"type": "event", "seq": seq}).decode()}


class Room:
    """The RoomClient calls a session makes, over a list of stored events."""

    def __init__(self, log: list[dict], lag: int = 0) -> None:
        self.log = log
        self.lag = lag  # events stored and published that the room's welcome does not show yet
        self.listeners: list[tuple[asyncio.Queue, int]] = []
        self.presence_calls: list[tuple[int, bool]] = []
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

    async def close(self, code: int) -> None:
        self.closed_with = code
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
                        presence=PresenceReports(seats, functools.partial(ws.report_presence, room)),
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


async def test_what_went_out_past_a_lagging_welcome_before_the_socket_listened_is_read_from_the_log():
    # The welcome answers at 1: the write of 2 and 3 was published but has not returned to the room.
    room = Room([stored(1), stored(2, to=[2]), stored(3)], lag=2)
    socket = Socket()
    session = asyncio.create_task(Session(socket, "ROOMAA", 1, gateway(room)).run(since=None))
    await socket.until(lambda sent: sent and sent[-1].get("seq") == 3)
    room.publish(stored(4))
    await socket.until(lambda sent: sent[-1].get("seq") == 4)

    assert [(f["type"], f["seq"]) for f in socket.sent] == [("welcome", 1), ("event", 3), ("event", 4)]
    await socket.inbox.put({"type": "websocket.disconnect"})
    await asyncio.wait_for(session, 5)


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
        async def welcome(self, room, seat, proof=None):  # the room moves on while the welcome is taken
            welcome = await super().welcome(room, seat)
            for seq in range(len(self.log) + 1, len(self.log) + SEND_QUEUE_FRAMES + 2):
                self.publish(stored(seq))
            return welcome

    socket = Socket()
    await asyncio.wait_for(Session(socket, "ROOMAA", 1, gateway(BusyRoom([]))).run(since=None), 5)
    assert [f["type"] for f in socket.sent] == ["welcome"]
    assert socket.closed_with == CLOSE_OVERFLOW


async def test_a_socket_stuck_in_its_replay_is_dropped_and_one_that_reads_it_is_not(monkeypatch):
    monkeypatch.setattr(ws, "REPLAY_STALL_SECONDS", 0.01)  # the checks come quickly, the rule is the same
    room = Room([stored(seq) for seq in range(1, 3 * SEND_QUEUE_FRAMES)])
    gw = gateway(room)
    stuck, reader = Socket(stuck=True), Socket()
    dropped = asyncio.create_task(Session(stuck, "ROOMAA", 1, gw).run(since=0))
    await stuck.until(lambda sent: sent)  # the welcome went out, then nothing more is taken
    await asyncio.wait_for(dropped, 5)  # a check saw no progress with more than the bound left
    assert stuck.closed_with == CLOSE_OVERFLOW

    served = asyncio.create_task(Session(reader, "ROOMAA", 2, gw).run(since=0))
    await reader.until(lambda sent: sent and sent[-1].get("seq") == len(room.log))
    assert not served.done() and reader.closed_with is None  # far behind while it replayed, but it kept reading
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
