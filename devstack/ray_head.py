"""A private Ray head for tests and load scripts: every port chosen free, bound to 127.0.0.1,
never 6379.

Set RAY_HEAD_KEEP_LOGS=DIR to keep the head's logs (DIR/<temp dir name>/) after it stops.

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

from gateway.serve.processes import kill_family

# Keep every Ray process on loopback and let local drivers join without a token file dance.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


_HANDED_OUT: set[int] = set()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A port that binds now, below the kernel's ephemeral range: a port the kernel handed out
    (bind to 0) could be taken again by an outgoing connection before the server binds it, which
    a busy suite's thousands of connections made happen (a Redis Cluster node exited on start).
    Never one this process has handed out already (two servers started together)."""
    high = min(_ephemeral_low(), 65536) - 1
    for _ in range(1000):
        port = random.randint(20000, high)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free port in 20000-{high}")


def _ray_executable() -> str:
    candidate = Path(sys.executable).with_name("ray")
    return str(candidate) if candidate.exists() else "ray"


@contextmanager
def ray_head(num_cpus: int = 2, startup_timeout: float = 90.0, attempts: int = 3):
    """Start `ray start --head --block` in its own session; yield its GCS address.

    A free port can be taken by another process between our probe and Ray's bind (other test
    sessions start heads too), so a head that exits while starting is retried on new ports."""
    for attempt in range(1, attempts + 1):
        temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths have a length limit
        log_path = os.path.join(temp_dir, "head.log")
        port, args = _head_command(num_cpus, temp_dir)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            try:
                _wait_until_started(log_path, proc, startup_timeout)
            except HeadExited:
                if attempt == attempts:
                    raise
                continue
            yield f"127.0.0.1:{port}"
            return
        finally:
            _stop(proc)
            keep = os.environ.get("RAY_HEAD_KEEP_LOGS")  # a directory: keep the head's logs there
            if keep:
                shutil.copytree(os.path.join(temp_dir, "session_latest", "logs"),
                                os.path.join(keep, os.path.basename(temp_dir)), dirs_exist_ok=True)
            shutil.rmtree(temp_dir, ignore_errors=True)


class HeadExited(RuntimeError):
    pass


def _head_command(num_cpus: int, temp_dir: str) -> tuple[int, list[str]]:
    ports: set[int] = set()
    while len(ports) < 8:  # distinct: Ray refuses one port for two components
        ports.add(free_port())
    gcs, client, agent, agent_grpc, runtime_env, metrics, node_manager, object_manager = ports
    # Below the kernel's ephemeral range, so free_port() picks never land inside it.
    worker_low = random.randrange(10000, 29000, 300)
    return gcs, [
        _ray_executable(), "start", "--head", "--block", "--disable-usage-stats",
        "--node-ip-address=127.0.0.1", f"--port={gcs}", f"--num-cpus={num_cpus}",
        "--include-dashboard=false",
        f"--ray-client-server-port={client}",
        f"--dashboard-agent-listen-port={agent}",
        f"--dashboard-agent-grpc-port={agent_grpc}",
        f"--runtime-env-agent-port={runtime_env}",
        f"--metrics-export-port={metrics}",
        f"--node-manager-port={node_manager}",
        f"--object-manager-port={object_manager}",
        f"--min-worker-port={worker_low}", f"--max-worker-port={worker_low + 299}",
        f"--temp-dir={temp_dir}",
    ]


def _wait_until_started(log_path: str, proc: subprocess.Popen, timeout: float) -> None:
    """Wait for `ray start` to report the whole node up: the GCS port alone opens before the
    raylet registers, and a driver connecting in between fails on a loaded machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            with open(log_path, "rb") as log:
                tail = log.read()[-2000:].decode(errors="replace")
            raise HeadExited(f"ray head exited with {proc.returncode}:\n{tail}")
        with open(log_path, "rb") as log:
            if b"Ray runtime started" in log.read():
                return
        time.sleep(0.2)  # polling a log that has not said it yet, not waiting on a test event
    raise TimeoutError(f"ray head did not start in {timeout}s")


def _stop(proc: subprocess.Popen) -> None:
    """Kill the head and every process under it (workers are the raylet's children, not in its group)."""
    kill_family(proc)
    proc.wait(timeout=10)
