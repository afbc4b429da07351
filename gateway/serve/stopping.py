"""SIGTERM and SIGINT (Ctrl-C), at any point, stop the gateway, then whatever was started."""
from __future__ import annotations

import os
import signal
import sys


class Stopping(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopRequest:
    """SIGTERM and SIGINT, noted by the handler and acted on where stopping leaves nothing behind:
    `check()` between the steps of starting, uvicorn's own handling once it runs. An exception
    raised by the handler itself could land between a Popen and the `try` that stops its
    process; the default SIGTERM left the Redis and the Ray head running."""

    signum: int | None = None

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._note)

    def _note(self, signum: int, frame) -> None:
        if self.signum is None:
            self.signum = signum
            os.write(2, f"werewolf serve: {signal.Signals(signum).name}: stopping\n".encode())

    def check(self) -> None:
        if self.signum is not None:
            raise Stopping(self.signum)


STOP = StopRequest()


def log(message: str) -> None:
    print(f"werewolf serve: {message}", file=sys.stderr, flush=True)
