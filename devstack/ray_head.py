"""A private Ray head for tests and load scripts: every port chosen free, bound to 127.0.0.1,
never 6379.

Set RAY_HEAD_KEEP_LOGS=DIR to keep the head's logs (DIR/<temp dir name>/) after it stops.

`ray_head(fake_nodes=...)` is an autoscaling cluster on this machine: Ray's own fake multi-node
provider (what `ray.cluster_utils.AutoscalingCluster` runs), its autoscaler starting and stopping
worker nodes as local raylets by resource demand. AutoscalingCluster itself is not used: its
`start()` runs `ray stop --force` (every Ray on the machine) and `ray start --head` on Ray's
default port (Redis's 6379), and its config template is not in Ray's wheel; the config here is
that template's, with the provider told the head's GCS address.

Several test sessions may run at once on one machine, so nothing here uses Ray's fixed default
ports, and teardown kills only this head's own process group (never `ray stop`, which would kill
every Ray on the machine).
"""
from __future__ import annotations

import asyncio
import json
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


def fake_cluster_config(gcs_address: str, head_cpus: int, fake_nodes: dict,
                        idle_timeout_minutes: float) -> dict:
    """The autoscaling config of Ray's fake multi-node provider (its example.yaml, as
    AutoscalingCluster fills it in): `fake_nodes`, the worker node types (resources, min_workers,
    max_workers); the head offers `head_cpus` CPUs and starts no worker of its own."""
    return {
        "cluster_name": "fake_multinode", "max_workers": sum(
            t.get("max_workers", 0) for t in fake_nodes.values()),
        "provider": {"type": "fake_multinode", "use_node_id_as_ip": True,
                     "disable_node_updaters": True, "disable_launch_config_check": True,
                     "gcs_address": gcs_address},  # else it joins workers to 6379
        "available_node_types": {
            **{name: {"node_config": {}, **t} for name, t in fake_nodes.items()},
            "ray.head.default": {"resources": {"CPU": head_cpus}, "node_config": {},
                                 "max_workers": 0}},
        "head_node_type": "ray.head.default", "auth": {}, "upscaling_speed": 1.0,
        "idle_timeout_minutes": idle_timeout_minutes, "docker": {},
        "initialization_commands": [], "setup_commands": [], "head_setup_commands": [],
        "worker_setup_commands": [], "head_start_ray_commands": [],
        "worker_start_ray_commands": [], "file_mounts": {}, "cluster_synced_files": [],
        "file_mounts_sync_continuously": False, "rsync_exclude": [], "rsync_filter": [],
    }


@contextmanager
def ray_head(num_cpus: int = 2, startup_timeout: float = 90.0, attempts: int = 3,
             fake_nodes: dict | None = None, idle_timeout_minutes: float = 0.1):
    """Start `ray start --head --block` in its own session; yield its GCS address.
    `fake_nodes`: worker node types an autoscaler starts and stops (`fake_cluster_config`).

    A free port can be taken by another process between our probe and Ray's bind (other test
    sessions start heads too), so a head that exits while starting is retried on new ports."""
    for attempt in range(1, attempts + 1):
        # short: Ray's socket paths have a length limit
        temp_dir = tempfile.mkdtemp(prefix="rt", dir="/tmp")
        log_path = os.path.join(temp_dir, "head.log")
        port, args = _head_command(num_cpus, temp_dir)
        env = None
        if fake_nodes is not None:
            config_path = os.path.join(temp_dir, "autoscaling.json")
            with open(config_path, "w") as f:
                json.dump(fake_cluster_config(f"127.0.0.1:{port}", num_cpus, fake_nodes,
                                              idle_timeout_minutes), f)
            args.append(f"--autoscaling-config={config_path}")
            # What AutoscalingCluster.start sets: the fake provider, an autoscaler round a second.
            # (On a loaded box a node's start can fail: its raylet waits ~15 s for its agent's
            # ports; the autoscaler then launches another.)
            env = {**os.environ, "RAY_FAKE_CLUSTER": "1", "AUTOSCALER_UPDATE_INTERVAL_S": "1"}
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
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
    """Kill the head and every process under it (workers are the raylet's children, not in its
    group)."""
    kill_family(proc)
    proc.wait(timeout=10)


_VIEW = """
import json, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)
print(json.dumps({
    "nodes": {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]},
    "actors": {a["Name"]: a["Address"]["NodeID"] for a in ray._private.state.actors().values()
               if a["State"] == "ALIVE" and a["Name"]}}))
"""


async def cluster_view(address: str) -> dict:
    """The live nodes (id -> resources) and live named actors (name -> node id) of the Ray
    cluster at `address`, read by a driver of its own (the caller stays off that cluster)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _VIEW, address, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled"})
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    return json.loads(out.decode().splitlines()[-1])
