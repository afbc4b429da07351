"""The private redis-server: an append-only file in the state directory, started again whenever
it exits (the file brings the rooms back) until the command stops."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from gateway.serve.locks import lock_file, ports_lock
from gateway.serve.processes import answers, free_port, wait
from gateway.serve.stopping import STOP, log

DEFAULT_REDIS = ("127.0.0.1", 6379)
# The private redis-server's port: below the kernel's ephemeral range, so no outgoing connection
# takes it while the server is down and its restart finds it free.
REDIS_FIRST_PORT = 7379
# A redis-server that exits is started again after this delay, doubled at each exit of one that
# ran less than RESTART_STABLE seconds, up to RESTART_MAX_DELAY.
RESTART_FIRST_DELAY, RESTART_MAX_DELAY, RESTART_STABLE = 0.5, 30.0, 30.0


def warn_if_volatile(url: str) -> None:
    """An ack promises the command survives; a Redis that keeps nothing on disk breaks that
    promise at its first restart. Say so at start (not fatal: a test box may not care)."""
    import asyncio

    from actors import connect, persistence

    async def ask() -> str | None:
        redis = connect(url)
        try:
            return await asyncio.wait_for(persistence(redis), 10)
        finally:
            await redis.aclose()

    try:
        kept = asyncio.run(ask())
    except Exception as e:  # unreachable now: the gateway's /readyz will tell
        print(f"WARNING: could not ask Redis at {url} what it keeps on disk ({e!r})",
              file=sys.stderr, flush=True)
        return
    if kept is not None:
        print(f"WARNING: the Redis at {url} keeps {kept}. Turn on its append-only file "
              "(appendonly yes) or let `werewolf serve` start its own (see docs/architecture.md, "
              "Durability).", file=sys.stderr, flush=True)


@contextmanager
def private_redis(data_dir: Path, holder: str | None = None):
    """A redis-server keeping an append-only file (fsync every second) in `data_dir`: started
    again on the same directory, it has every room that was acknowledged before it stopped. It
    is started again (same port, directory and options) whenever it exits until the block ends."""
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("No Redis answers at 127.0.0.1:6379 and redis-server is not installed "
                 "(apt-get install redis-server, or set REDIS_URL).")
    data_dir.mkdir(parents=True, exist_ok=True)
    # Two redis-servers appending to one file would corrupt it.
    with lock_file(data_dir / "werewolf.lock", holder or f"pid {os.getpid()}",
                   lambda other: f"Another `werewolf serve` ({other}) keeps its Redis in "
                                 f"{data_dir}: stop it, or pass --redis-dir or --redis-url."):
        with ports_lock():
            port = free_port(REDIS_FIRST_PORT)
            redis = SupervisedRedis(
                [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(data_dir)],
                port, data_dir)
            try:
                wait(lambda: answers("127.0.0.1", port), redis.proc, "redis-server")
            except BaseException:
                redis.stop()
                raise
        try:
            print(f"Started redis-server on 127.0.0.1:{port} (append-only file in {data_dir})",
                  flush=True)
            redis.watch()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            redis.stop()
            print(f"Stopped redis-server on 127.0.0.1:{port}", flush=True)


class SupervisedRedis:
    """Our redis-server, started again with the same command whenever it exits, with a backoff,
    until `stop()` or a stop request."""

    def __init__(self, command: list[str], port: int, data_dir: Path) -> None:
        self.command, self.port, self.data_dir = command, port, data_dir
        self._lock = threading.Lock()  # stop() never misses a server started meanwhile
        self._stopped = False
        self._thread = threading.Thread(target=self._watch, name="redis-supervisor", daemon=True)
        self.proc = self._spawn()

    def _spawn(self) -> subprocess.Popen:
        self._since = time.monotonic()
        return subprocess.Popen(self.command, stdout=subprocess.DEVNULL, start_new_session=True)

    def watch(self) -> None:
        self._thread.start()

    def _stopping(self) -> bool:
        return self._stopped or STOP.signum is not None

    def _pause(self, seconds: float) -> bool:
        """False if a stop came first."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            if time.monotonic() >= deadline:
                return True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        return False

    def _watch(self) -> None:
        delay = RESTART_FIRST_DELAY
        while True:
            proc = self.proc
            code = proc.wait()
            if self._stopping():
                return
            died = time.monotonic()
            if died - self._since >= RESTART_STABLE:
                delay = RESTART_FIRST_DELAY
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            log(f"redis-server (pid {proc.pid}, 127.0.0.1:{self.port}) exited ({how}); starting "
                f"it again in {delay:g} s on its append-only file in {self.data_dir}")
            if not self._pause(delay):
                return
            delay = min(delay * 2, RESTART_MAX_DELAY)
            with self._lock:
                if self._stopping():
                    return
                try:
                    self.proc = self._spawn()
                except OSError as e:
                    log(f"could not start redis-server again: {e}")
                    continue
            while self.proc.poll() is None and not self._stopping():  # it loads its file first
                if answers("127.0.0.1", self.port):
                    log(f"redis-server answers again on 127.0.0.1:{self.port} (pid "
                        f"{self.proc.pid}), {time.monotonic() - died:.1f} s after it exited")
                    break
                self._pause(0.1)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            proc = self.proc
        proc.terminate()  # it flushes its append-only file
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if self._thread.is_alive():
            self._thread.join(timeout=10)
