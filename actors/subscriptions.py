"""`Subscriptions`: a process's one pub/sub connection, shared by every listener of every room it
serves, and this process's reply channel. A listener's queue gets `Since(n)`, then every event
after n it may see, once and in order, and, if its seat leaves the lobby, `Unseated` last."""
from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import redis.asyncio as aioredis

from actors.inbox import events_and_replies, replies_in
from actors.pubsub import shard_pubsub
from actors.store import Keys

log = logging.getLogger(__name__)

# Listeners an event reaches in one go. A room with more (a crowd of spectators) gets a task of
# its own that lets the loop run between each FAN_OUT_CHUNK of them: its fan-out held the one
# reader, and with it every other room's events and acks and every socket's pings, for as long
# as it took (168 sockets at ~30 us a frame: 5 ms a line, ~17 lines a second; loadtest/README.md,
# the `readers` probe).
FAN_OUT_CHUNK = 32


@dataclass(frozen=True, slots=True)
class Unseated:
    """The last item of a listener's queue: its seat left the lobby (`removed`) or moved into a
    removed one's place; nothing more reaches the queue (its socket must authenticate again)."""

    removed: bool


@dataclass(frozen=True, slots=True)
class Since:
    """The first item of a listener's queue: from here on the queue holds every event after `seq`
    that the listener may see. A listener whose own start (its welcome) is below `seq` reads the
    events between from the log: they were published before its queue joined the room's channel
    (a welcome can lag a write already published) or while the connection was being re-established
    before the channel's first message."""

    seq: int


class _Channel:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.listeners: dict[asyncio.Queue, int | None] = {}  # queue -> the seat it is for
        self.subscribed = loop.create_future()
        # Last seq delivered, to drop repeats and fill gaps: from the first one on, every event
        # reaches the listeners, in order.
        self.last: int | None = None
        # A crowded room's messages (events, replies), in order, and the task delivering them:
        # while it runs, every message of the room waits its turn here.
        self.backlog: deque[tuple[list[dict], list]] = deque()
        self.task: asyncio.Task | None = None

    def crowded(self) -> bool:
        return self.task is not None or len(self.listeners) > FAN_OUT_CHUNK


class Subscriptions:
    """One sharded pub/sub connection per process (one per node on a Redis Cluster:
    actors.pubsub), subscribed to a room's channel while at least one local listener wants it.
    Each listener gets a `Since(n)`, then every stored event after n once,
    in seq order: a gap (a message lost while the connection was being re-established) is filled
    from the log."""

    def __init__(self, redis: aioredis.Redis, keys: Keys, events_after,
                 catch_up: bool = True) -> None:
        self._pubsub = shard_pubsub(redis)
        self._me: str | None = None  # this process's gateway id: the replies riding events for it
        self._keys = keys
        self._events_after = events_after
        # Read the log's tail when a room is subscribed again: not under WAIT, where the log runs
        # ahead of what may be shown (events go out once replicas have them).
        self._catch_up = catch_up
        self._channels: dict[str, _Channel] = {}
        self._reader: asyncio.Task | None = None
        self._direct: bytes | None = None  # this process's reply channel
        self._on_replies: Callable[[list], None] | None = None
        # Told how many room events this process read from Redis (messages and refills): with
        # room affinity one read per event a process serves, whatever its sockets in the room.
        self.observe_read: Callable[[int], None] | None = None
        self._direct_ready: asyncio.Future | None = None

    async def start(self, direct: str, on_replies, me: str | None = None) -> None:
        """Subscribe to `direct` (this process's reply channel, which also keeps the connection
        subscribed while no room is) and hand the replies of its messages, and those riding a
        room's events for gateway `me`, to `on_replies`; returns once live, so no reply sent
        after it is missed."""
        self._direct, self._on_replies, self._me = direct.encode(), on_replies, me
        self._direct_ready = asyncio.get_running_loop().create_future()
        await self._pubsub.ssubscribe(direct)
        self._reader = asyncio.create_task(self._read(), name="pubsub reader")
        await asyncio.wait_for(self._direct_ready, 10)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        for channel in self._channels.values():
            if channel.task is not None:
                channel.task.cancel()
        await self._pubsub.aclose()

    def listening(self, code: str) -> bool:
        """Subscribed to the room's channel now (a reply riding its events would arrive)."""
        channel = self._channels.get(code)
        return channel is not None and channel.subscribed.done()

    @asynccontextmanager
    async def listen(self, code: str, seat: int | None = None,
                     queue: asyncio.Queue | None = None) -> AsyncIterator[asyncio.Queue]:
        queue = asyncio.Queue() if queue is None else queue
        channel = self._channels.get(code)
        if channel is None:
            channel = self._channels[code] = _Channel(asyncio.get_running_loop())
            await self._pubsub.ssubscribe(self._keys.room(code))
        channel.listeners[queue] = seat
        if channel.last is not None:  # else its first message tells
            queue.put_nowait(Since(channel.last))
        try:
            await asyncio.wait_for(asyncio.shield(channel.subscribed), 10)
            yield queue
        finally:
            channel.listeners.pop(queue, None)
            if not channel.listeners and self._channels.get(code) is channel:
                del self._channels[code]
                await self._pubsub.sunsubscribe(self._keys.room(code))

    async def _read(self) -> None:
        """The one reader of the connection; it must outlive any failure, or every listener
        stalls."""
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
        if message["channel"] == self._direct:
            if message["type"] == "smessage":
                self._on_replies(replies_in(message["data"]))
            elif not self._direct_ready.done():
                self._direct_ready.set_result(None)
            return
        code = self._keys.code_of(message["channel"].decode())
        channel = self._channels.get(code)
        if channel is None:
            return
        if message["type"] == "ssubscribe":
            if not channel.subscribed.done():
                channel.subscribed.set_result(None)
            elif self._catch_up and channel.last is not None:
                # subscribed again (redis-py reconnected, or the channel followed its slot to
                # another node), without a word: what went out
                # meanwhile is in the log (else only the room's next message would show the gap).
                await self._dispatch(code, channel,
                                     await self._events_after(code, channel.last), [])
        elif message["type"] == "smessage":  # a write's events, in order (inbox.events_message)
            await self._dispatch(code, channel, *events_and_replies(message["data"], self._me))

    async def _dispatch(self, code: str, channel: _Channel, events: list[dict],
                        replies: list) -> None:
        """Deliver events read from Redis (a message, or the log after a resubscription), in
        order, then settle the replies that rode them (an ack never overtakes what it caused):
        here, or, for a crowded room, in the room's own task (`_drain`)."""
        if channel.crowded():
            channel.backlog.append((events, replies))
            if channel.task is None:
                channel.task = asyncio.create_task(self._drain(code, channel),
                                                   name=f"fan-out {code}")
            return
        await self._deliver_all(code, channel, events)
        if replies:
            self._on_replies(replies)

    async def _drain(self, code: str, channel: _Channel) -> None:
        try:
            while channel.backlog:
                events, replies = channel.backlog.popleft()
                try:
                    await self._deliver_all(code, channel, events, chunked=True)
                except Exception as e:  # a gap's refill failed: the next message refills it
                    log.warning("room %s: delivery failed (%r)", code, e)
                if replies:
                    self._on_replies(replies)
        finally:
            channel.task = None

    async def _deliver_all(self, code: str, channel: _Channel, events: list[dict],
                           chunked: bool = False) -> None:
        self._count(len(events))
        for event in events:
            await self._deliver(code, channel, event, chunked)

    def _count(self, events: int) -> None:
        if self.observe_read is not None:
            self.observe_read(events)

    async def _deliver(self, code: str, channel: _Channel, event: dict,
                       chunked: bool = False) -> None:
        seq = event["seq"]
        if channel.last is None:
            for queue in channel.listeners:
                queue.put_nowait(Since(seq - 1))
        elif seq <= channel.last:
            return
        events = [event]
        if channel.last is not None and seq > channel.last + 1:
            events = await self._events_after(code, channel.last, seq)
            self._count(len(events))
        channel.last = seq
        for item in events:
            to = item["to"]
            # `chunked`: the loop runs between chunks, and listeners may come and go meanwhile
            # (one that joins then starts after this event: its Since says so).
            listeners = list(channel.listeners.items()) if chunked else channel.listeners.items()
            for i, (queue, seat) in enumerate(listeners):
                if chunked and i and not i % FAN_OUT_CHUNK:
                    await asyncio.sleep(0)
                if to is None or seat is None or seat in to:  # a private event: its audience
                    queue.put_nowait(item)
            # a lobby seat removed: its listeners and the moved one's stop here
            if "unseat" in item:
                removed, *moved = item["unseat"]
                for queue, seat in list(channel.listeners.items()):
                    if seat == removed or seat in moved:
                        queue.put_nowait(Unseated(removed=seat == removed))
                        channel.listeners.pop(queue, None)
