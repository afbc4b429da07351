"""Ports probed, processes waited for and stopped: what the supervisors share (and devstack,
which stops the `werewolf serve` and Ray heads it starts with `kill_family`)."""
from __future__ import annotations

import errno
import socket
import subprocess
import sys
import time

from gateway.serve.stopping import STOP

STARTUP_TIMEOUT = 90.0


def answers(host: str, port: int) -> bool:
    """A Redis answers PING there."""
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def listens(host: str, port: int) -> bool:
    """Something accepts TCP connections there."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def outward_ip() -> str | None:
    """This machine's address towards others, as Ray finds it (a UDP socket's own address once
    connected: no packet is sent), or None without a route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("8.8.8.8", 80))
        except OSError:
            return None
        return s.getsockname()[0]


def free_port(start: int | None = None) -> int:
    for port in range(start, start + 200) if start else [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port from {start}")


def refuse_taken_port(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                sys.exit(f"werewolf serve: {host}:{port} is in use (another server?): "
                         "pass --port.")


def wait(ready, proc: subprocess.Popen | None, what: str, log: str | None = None) -> None:
    """Until `ready()`; exits if `proc` (one we started, if any) exits first (with the end of
    its `log`, if it has one) or takes STARTUP_TIMEOUT."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not ready():
        STOP.check()
        if proc is not None and proc.poll() is not None:
            said = ""
            if log is not None:
                with open(log, "rb") as file:
                    said = ":\n" + file.read()[-2000:].decode(errors="replace")
            sys.exit(f"{what} exited with {proc.returncode}{said}")
        if time.monotonic() > deadline:
            sys.exit(f"{what} did not start in {STARTUP_TIMEOUT:.0f}s")
        time.sleep(0.2)


def kill_family(proc: subprocess.Popen) -> None:
    """Stop the head and the raylet's workers (never `ray stop`: it kills every Ray here)."""
    import psutil

    try:
        family = [psutil.Process(proc.pid)] + psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for p in family:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


def kill_descendants() -> None:
    """Whatever still runs under this process once everything is stopped in order (a gateway
    worker that hung, a process an exiting child left)."""
    import psutil

    try:
        left = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    kill_all(left, 10)


def kill_all(processes: list, timeout: float) -> None:
    """SIGKILL each (those already gone are skipped), then wait up to `timeout` for them."""
    import psutil

    for p in processes:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(processes, timeout=timeout)
