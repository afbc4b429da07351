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
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False
