"""Several Ray nodes on one machine as a real cluster: each node in its own network namespace, a
veth pair each on a bridge made here, with addresses that exist only inside those namespaces
(the bridge itself has none, so nothing outside them can reach or be reached). Needs root.

    with netns_lan(3) as lan:        lan.names[i], lan.ips[i]; lan.popen(i, argv, ...) runs argv
                                     in namespace i; lan.inode(i) tells a process's namespace
        with lan.entered(0): ...     this thread is in namespace 0 (sockets it opens and
                                     processes it starts live there)
        run_in_namespace(lan, 0, body)   asyncio.run(body()) on a thread inside namespace 0
    ray_node(lan, i, head=..., resources=...) -> RayNode: `ray start --block` in namespace i
                                     with its own --temp-dir; .kill() = SIGKILL its whole tree
"""
from __future__ import annotations

import ctypes
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gateway.serve.processes import kill_family

CLONE_NEWNET = 0x40000000
# what the worker nodes offer and game hosts need (WW_HOST_RESOURCE)
HOST_RESOURCE = "werewolf_host"
RAY_GCS_PORT = 6380  # every namespace has its own ports; still never Ray on 6379
# Let the GCS declare a kill -9'd node dead after ~1.5 s of failed health checks, not ~15 s.
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "500",
                      "RAY_health_check_failure_threshold": "3",
                      "RAY_health_check_initial_delay_ms": "1000"}


def available() -> bool:
    return os.geteuid() == 0 and shutil.which("ip") is not None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@dataclass
class Lan:
    names: list[str]
    ips: list[str]

    def popen(self, i: int, argv: list[str], **kwargs) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.names[i], *argv], **kwargs)

    def inode(self, i: int) -> int:
        return os.stat(f"/run/netns/{self.names[i]}").st_ino

    def namespace_of(self, pid: int) -> int | None:
        """Index of the namespace process `pid` lives in (None: another one)."""
        ino = os.stat(f"/proc/{pid}/ns/net").st_ino
        return next((i for i in range(len(self.names)) if self.inode(i) == ino), None)

    @contextmanager
    def entered(self, i: int):
        """Move the calling thread into namespace i (a network namespace is per thread)."""
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.names[i]}", os.O_RDONLY)
        try:
            if libc.setns(target, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            try:
                yield
            finally:
                libc.setns(own, CLONE_NEWNET)
        finally:
            os.close(own)
            os.close(target)


@contextmanager
def netns_lan(count: int):
    tag = secrets.token_hex(3)
    bridge = f"wwb{tag}"
    subnet = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250)}"
    names = [f"ww{tag}n{i}" for i in range(count)]
    ips = [f"{subnet}.{i + 1}" for i in range(count)]
    made: list[str] = []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        _ip("link", "set", bridge, "up")
        for i, name in enumerate(names):
            _ip("netns", "add", name)
            made.append(name)
            outer, inner = f"wv{tag}{i}", f"wi{tag}{i}"
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            _ip("link", "set", outer, "master", bridge)
            _ip("link", "set", outer, "up")
            _ip("link", "set", inner, "netns", name)
            _ip("-n", name, "addr", "add", f"{ips[i]}/24", "dev", inner)
            _ip("-n", name, "link", "set", inner, "up")
            _ip("-n", name, "link", "set", "lo", "up")
        yield Lan(names, ips)
    finally:
        for name in made:
            # takes its veth along
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)


@dataclass
class RayNode:
    index: int
    process: subprocess.Popen
    temp_dir: str
    log_path: str

    def kill(self) -> None:
        """kill -9 the node: `ray start`, its raylet, the raylet's workers, the agents."""
        kill_family(self.process)

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")[-3000:]


def _ray_exe() -> str:
    candidate = Path(sys.executable).with_name("ray")
    return str(candidate) if candidate.exists() else "ray"


def ray_node(lan: Lan, i: int, *, head_ip: str | None = None, num_cpus: int = 1,
             resources: dict | None = None, env: dict | None = None,
             timeout: float = 120.0, attempts: int = 2, args: tuple[str, ...] = (),
             preexec_fn=None) -> RayNode:
    """`ray start --block` in namespace i: a head if head_ip is None, else a worker joining it.
    On a loaded machine a node can time out registering with its GCS: then it is tried again.
    `args`: more `ray start` flags; `preexec_fn`: run in the child before it starts (a CPU cap)."""
    for attempt in range(1, attempts + 1):
        try:
            return _start_node(lan, i, head_ip, num_cpus, resources, env, timeout, args,
                               preexec_fn)
        except NodeDidNotStart:
            if attempt == attempts:
                raise


class NodeDidNotStart(RuntimeError):
    pass


def _start_node(lan: Lan, i: int, head_ip: str | None, num_cpus: int, resources: dict | None,
                env: dict | None, timeout: float, args: tuple[str, ...], preexec_fn) -> RayNode:
    temp_dir = tempfile.mkdtemp(prefix=f"rn{i}", dir="/tmp")  # short: socket path limit
    log_path = os.path.join(temp_dir, "node.log")
    argv = [_ray_exe(), "start", "--block", "--disable-usage-stats",
            f"--node-ip-address={lan.ips[i]}",
            f"--num-cpus={num_cpus}", f"--temp-dir={temp_dir}", *args]
    if head_ip is None:
        argv += ["--head", f"--port={RAY_GCS_PORT}", "--include-dashboard=false"]
    else:
        argv += [f"--address={head_ip}:{RAY_GCS_PORT}"]
    if resources:
        argv.append(f"--resources={json.dumps(resources)}")
    # Ray refuses workers joining a head started with this 0 (what devstack/ray_head.py sets).
    full_env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "RAY_AUTH_MODE": "disabled",
                **(env or {})}
    with open(log_path, "wb") as log:
        proc = lan.popen(i, argv, stdout=log, stderr=subprocess.STDOUT, env=full_env,
                         start_new_session=True, preexec_fn=preexec_fn)
    node = RayNode(i, proc, temp_dir, log_path)
    deadline = time.monotonic() + timeout
    while b"Ray runtime started" not in Path(log_path).read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            tail = node.log()
            stop_node(node)
            raise NodeDidNotStart(f"ray node {i} did not start:\n{tail}")
        time.sleep(0.2)  # polling a log that has not said it yet
    return node


def stop_node(node: RayNode) -> None:
    node.kill()
    try:
        node.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    shutil.rmtree(node.temp_dir, ignore_errors=True)


def alive_nodes(lan: Lan, head_index: int = 0) -> int:
    """Nodes the GCS counts alive, asked by a driver in the head's namespace."""
    script = ("import ray,sys; ray.init(address=sys.argv[1], log_to_driver=False); "
              "print(sum(n['Alive'] for n in ray.nodes()))")
    out = subprocess.run(["ip", "netns", "exec", lan.names[head_index], sys.executable, "-c",
                          script,
                          f"{lan.ips[head_index]}:{RAY_GCS_PORT}"],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                              "RAY_AUTH_MODE": "disabled"})
    return int(out.stdout.split()[-1])


def run_in_namespace(lan: Lan, index: int, body):
    """Run `asyncio.run(body())` on a thread inside namespace `index`: the caller's own sockets and
    every process it starts (Redis, gateways, Ray drivers) live there, beside that node."""
    import asyncio

    outcome: dict = {}

    def target() -> None:
        with lan.entered(index):
            try:
                outcome["value"] = asyncio.run(body())
            except BaseException as e:  # handed to the calling thread
                outcome["error"] = e

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
