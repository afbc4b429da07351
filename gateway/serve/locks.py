"""File locks: one local stack per state directory, one Redis per data directory, and one
`werewolf serve` at a time choosing ports on this machine."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from gateway.serve.processes import STARTUP_TIMEOUT
from gateway.serve.stopping import STOP, log

# Held by every `werewolf serve` of this machine from choosing a port until what it started there
# listens: two at once picked the same free port for their Ray heads, and both heads broke.
PORTS_LOCK = Path(tempfile.gettempdir()) / "werewolf-serve-ports.lock"


@contextmanager
def lock_file(path: Path, holder: str, refused):
    """Hold an flock on `path` (which then says `holder`) for the block, or exit with
    `refused(what the holder wrote)`. The kernel drops the lock with the process, however it
    ends."""
    import fcntl

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path, "a+")
    except OSError as e:
        log(f"cannot lock {path} ({e}); running without that check")
        yield
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(refused(_holder(lock)))
    try:
        lock.seek(0)
        lock.truncate()
        lock.write(holder + "\n")
        lock.flush()
        yield
    finally:
        lock.seek(0)
        lock.truncate()
        lock.close()


def _holder(lock) -> str:
    """What the holder of `lock` wrote: it writes just after it takes the lock."""
    deadline = time.monotonic() + 1.0
    while True:
        lock.seek(0)
        text = lock.read().strip()
        if text or time.monotonic() > deadline:
            return text or "pid unknown"
        time.sleep(0.05)


@contextmanager
def ports_lock():
    """PORTS_LOCK, waited for (a stop request still stops the wait)."""
    import fcntl

    try:
        lock = os.open(PORTS_LOCK, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:  # another user's file in a sticky /tmp: open it as it is
        try:
            lock = os.open(PORTS_LOCK, os.O_RDONLY)
        except OSError:
            yield
            return
    try:
        deadline = time.monotonic() + 2 * STARTUP_TIMEOUT
        said = False
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                STOP.check()
                if time.monotonic() > deadline:
                    log(f"{PORTS_LOCK} stayed locked; choosing ports without it")
                    break
                if not said:
                    log("waiting for another `werewolf serve` to start what it starts")
                    said = True
                time.sleep(0.1)
        yield
    finally:
        os.close(lock)
