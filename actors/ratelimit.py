"""Token bucket: `burst` actions at once, refilled at `rate` per second. Times may come out of
order (stamped by different gateways): an earlier one refills nothing."""
from __future__ import annotations

import time


class TokenBucket:
    __slots__ = ("rate", "burst", "_tokens", "_at")

    def __init__(self, rate: float, burst: int, now: float | None = None) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = time.monotonic() if now is None else now

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        if now > self._at:
            self._tokens = self._held(now)
            self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def wait(self, now: float | None = None) -> float:
        """Seconds until `take` can succeed (0: now)."""
        now = time.monotonic() if now is None else now
        return max(0.0, (1 - self._held(now)) / self.rate)

    def _held(self, now: float) -> float:
        return min(self.burst, self._tokens + max(0.0, now - self._at) * self.rate)
