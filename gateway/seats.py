"""The seats that have sockets in this gateway process: counted, so that a seat with two tabs is
reported gone from this process only when its last local socket leaves.

Nothing here is game state: it is forgotten with the last socket of the seat.
"""
from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from actors import WATCHER, Clock, RealClock, TokenBucket


class LocalSeats:
    def __init__(self) -> None:
        self._seats: dict[tuple[str, int], int] = {}  # (room, seat) -> sockets here
        self._rooms: dict[str, int] = {}  # room -> sockets here

    @property
    def room_count(self) -> int:
        return len(self._rooms)

    def held(self) -> list[tuple[str, int]]:
        """Every (room, seat) with a socket here."""
        return list(self._seats)

    def count(self, room: str, seat: int) -> int:
        """Sockets of this seat here (of spectators, for the WATCHER seat)."""
        return self._seats.get((room, seat), 0)

    def enter(self, room: str, seat: int, limit: int | None = None) -> bool:
        """Count one more socket of the seat; False (nothing counted) if it has `limit` here."""
        held = self._seats.get((room, seat), 0)
        if limit is not None and held >= limit:
            return False
        self._seats[(room, seat)] = held + 1
        self._rooms[room] = self._rooms.get(room, 0) + 1
        return True

    def leave(self, room: str, seat: int) -> None:
        """Forget one socket."""
        self._rooms[room] -= 1
        if not self._rooms[room]:
            del self._rooms[room]
        self._seats[(room, seat)] -= 1
        if not self._seats[(room, seat)]:
            del self._seats[(room, seat)]


# What this process tells a room of one seat (or of the room's spectators): REPORT_BURST changes at
# once, then REPORT_RATE a second. Each change the room hears is a stored event broadcast to its
# whole table, and a client may reconnect in a loop.
REPORT_BURST, REPORT_RATE = 4, 0.2


@dataclass
class _Reported:
    value: int  # what the room was last told: connected 1/0, or the spectators' count
    bucket: TokenBucket
    task: asyncio.Task | None = None


class PresenceReports:
    """Tells the rooms what this process holds of each seat: connected or not (for spectators,
    how many sockets). A change goes out at once while the seat has tokens, else when its next
    token comes, with the state as it is then: a seat flapping in a loop costs its room a bounded
    number of updates, the last one is always the truth, and a phone that reconnects now and
    then is reported at once. One report at a time per seat, so they reach the room in order."""

    def __init__(self, seats: LocalSeats, report: Callable[[str, int, int], Awaitable[None]],
                 clock: Clock | None = None) -> None:
        self._seats = seats
        self._report = report  # (room, seat, value): never raises
        self._clock = clock or RealClock()
        self._reported: dict[tuple[str, int], _Reported] = {}
        # Reported as gone, kept until their bucket is surely full again (forgetting one sooner
        # would hand a flapping seat a fresh burst): key -> when, oldest first.
        self._idle: OrderedDict[tuple[str, int], float] = OrderedDict()

    def changed(self, room: str, seat: int) -> None:
        """A socket of the seat (WATCHER: a spectator) came or went in this process."""
        now = self._clock.now() / 1000
        while self._idle and next(iter(self._idle.values())) <= now:
            del self._reported[self._idle.popitem(last=False)[0]]
        key = (room, seat)
        self._idle.pop(key, None)
        entry = self._reported.get(key)
        if entry is None:
            entry = self._reported[key] = _Reported(0, TokenBucket(REPORT_RATE, REPORT_BURST, now))
        if entry.task is None:
            entry.task = asyncio.create_task(self._send(key, entry))

    async def _send(self, key: tuple[str, int], entry: _Reported) -> None:
        room, seat = key
        try:
            while (value := self._value(room, seat)) != entry.value:
                now = self._clock.now() / 1000
                if entry.bucket.take(now):
                    await self._report(room, seat, value)
                    entry.value = value
                else:
                    await self._clock.sleep_until(math.ceil((now + entry.bucket.wait(now)) * 1000))
        finally:
            entry.task = None
        if entry.value == 0:
            self._idle[key] = self._clock.now() / 1000 + REPORT_BURST / REPORT_RATE

    def _value(self, room: str, seat: int) -> int:
        held = self._seats.count(room, seat)
        return held if seat == WATCHER else min(held, 1)
