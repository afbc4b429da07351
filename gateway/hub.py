"""Per-process fan-out: one Redis pub/sub connection, one channel per room with local sockets.

The hub holds no game state, only which of this process's sockets listen to which room, so any
gateway replica can serve any player. Stored events arrive as `{"seq", "to", "frame"}` JSON; each
message is parsed once here and handed to every local listener of the room, which filters by seat
and forwards `frame` as is.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Protocol

import orjson
from redis.asyncio import Redis

from gateway.ratelimit import TokenBucket

log = logging.getLogger(__name__)


class Listener(Protocol):
    def deliver(self, event: dict) -> None: ...


class _Room:
    __slots__ = ("listeners", "ready", "chat_buckets")

    def __init__(self) -> None:
        self.listeners: set[Listener] = set()
        self.ready = asyncio.Event()  # set when Redis confirms the SUBSCRIBE
        # Per seat, shared by that seat's sockets in this process; gone with the last listener.
        self.chat_buckets: dict[int, TokenBucket] = {}


class Hub:
    def __init__(self, redis: Redis, prefix: str) -> None:
        self._pubsub = redis.pubsub()
        self._prefix = f"{prefix}:room:"
        self._rooms: dict[str, _Room] = {}
        self._reader: asyncio.Task | None = None

    def channel(self, room: str) -> str:
        return self._prefix + room

    @property
    def room_count(self) -> int:
        return len(self._rooms)

    def chat_bucket(self, room: str, seat: int, rate: float, burst: int) -> TokenBucket:
        buckets = self._rooms[room].chat_buckets
        bucket = buckets.get(seat)
        if bucket is None:
            bucket = buckets[seat] = TokenBucket(rate=rate, burst=burst)
        return bucket

    async def attach(self, room: str, listener: Listener) -> None:
        """Add a listener; returns once Redis confirmed the room's subscription, so every event
        published from now on reaches it."""
        entry = self._rooms.get(room)
        if entry is None:
            entry = self._rooms[room] = _Room()
            await self._pubsub.subscribe(self.channel(room))
            if self._reader is None:
                self._reader = asyncio.create_task(self._read(), name="hub-reader")
        entry.listeners.add(listener)
        await entry.ready.wait()

    async def detach(self, room: str, listener: Listener) -> None:
        entry = self._rooms.get(room)
        if entry is None:
            return
        entry.listeners.discard(listener)
        if not entry.listeners:
            del self._rooms[room]
            await self._pubsub.unsubscribe(self.channel(room))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self._pubsub.aclose()

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception:
                # redis-py reconnects and resubscribes on the next read; events lost meanwhile are
                # filled from the log by each session when it sees the next seq jump.
                log.exception("pub/sub read failed; retrying")
                await asyncio.sleep(0.5)
                continue
            if message is not None:
                self._dispatch(message)

    def _dispatch(self, message: dict) -> None:
        channel = message["channel"]
        room = (channel.decode() if isinstance(channel, bytes) else channel)[len(self._prefix):]
        entry = self._rooms.get(room)
        if entry is None:
            return
        kind = message["type"]
        if kind == "subscribe":
            entry.ready.set()
            return
        if kind != "message":
            return
        try:
            payload = orjson.loads(message["data"])
        except orjson.JSONDecodeError:
            log.error("undecodable stored event on %s", channel)
            return
        events = payload if isinstance(payload, list) else [payload]
        for listener in list(entry.listeners):
            for event in events:
                listener.deliver(event)
