"""Time for rooms: UNIX milliseconds, and sleeping until one. A fake clock drives tests."""
from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> int: ...

    async def sleep_until(self, when: int) -> None: ...


class RealClock:
    def now(self) -> int:
        return time.time_ns() // 1_000_000

    async def sleep_until(self, when: int) -> None:
        # asyncio sleeps on the monotonic clock; re-check the wall clock in case they drifted.
        while (left := when - self.now()) > 0:
            await asyncio.sleep(left / 1000)


class FakeClock:
    """Time moves only when a test calls `advance`; sleepers due by then wake up."""

    def __init__(self, start: int = 1_700_000_000_000) -> None:
        self._now = start
        self._sleepers: list[tuple[int, int, asyncio.Future]] = []
        self._order = itertools.count()

    def now(self) -> int:
        return self._now

    async def sleep_until(self, when: int) -> None:
        if when <= self._now:
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (when, next(self._order), future))
        await future

    def advance(self, ms: int) -> None:
        self._now += ms
        while self._sleepers and self._sleepers[0][0] <= self._now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
