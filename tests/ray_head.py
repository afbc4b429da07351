"""A private Ray head for tests: every port chosen free, bound to 127.0.0.1, never 6379.

Several test sessions may run at once on one machine, so nothing here uses Ray's fixed default
ports, and teardown kills only this head's own process group (never `ray stop`, which would kill
every Ray on the machine).
"""
from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from gateway.cli import kill_family

# Keep every Ray process on loopback and let local drivers join without a token file dance.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_executable() -> str:
    candidate = Path(sys.executable).with_name("ray")
    return str(candidate) if candidate.exists() else "ray"


@contextmanager
def ray_head(num_cpus: int = 2, startup_timeout: float = 90.0):
    """Start `ray start --head --block` in its own session; yield its GCS address."""
    port = free_port()
    # Below the kernel's ephemeral range, so free_port() picks never land inside it.
    worker_low = random.randrange(10000, 29000, 300)
    temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths have a length limit
    args = [
        _ray_executable(), "start", "--head", "--block", "--disable-usage-stats",
        "--node-ip-address=127.0.0.1", f"--port={port}", f"--num-cpus={num_cpus}",
        "--include-dashboard=false",
        f"--ray-client-server-port={free_port()}",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
        f"--runtime-env-agent-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}",
        f"--min-worker-port={worker_low}", f"--max-worker-port={worker_low + 299}",
        f"--temp-dir={temp_dir}",
    ]
    log = open(os.path.join(temp_dir, "head.log"), "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        _wait_until_started(os.path.join(temp_dir, "head.log"), proc, startup_timeout)
        yield address
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _wait_until_started(log_path: str, proc: subprocess.Popen, timeout: float) -> None:
    """Wait for `ray start` to report the whole node up: the GCS port alone opens before the
    raylet registers, and a driver connecting in between fails on a loaded machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ray head exited with {proc.returncode}: see {log_path}")
        with open(log_path, "rb") as log:
            if b"Ray runtime started" in log.read():
                return
        time.sleep(0.2)  # polling a log that has not said it yet, not waiting on a test event
    raise TimeoutError(f"ray head did not start in {timeout}s")


def _stop(proc: subprocess.Popen) -> None:
    """Kill the head and every process under it (workers are the raylet's children, not in its group)."""
    kill_family(proc)
    proc.wait(timeout=10)
