"""Start what a load run talks to, and tell which process is which (for CPU/memory accounting).

    with baseline_stack(n) as s:            # n bare FastAPI room servers (loadtest/baseline.py)
    with real_stack(n, games_per_actor=100, durations=...) as s:   # private Ray head + n gateways
        s.urls -> ["http://127.0.0.1:P", ...]; s.components() -> {"gateway": [Process], ...}

The real stack reuses devstack/ray_head.py (private Ray head on free loopback ports, never 6379,
torn down by its own process tree, never `ray stop`) and devstack/stack.py's `start_gateway`
(`werewolf serve` subprocesses on the shared Redis under a random WW_PREFIX).
"""
from __future__ import annotations

import os
import re
import resource
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

# devstack.ray_head sets Ray's environment (no Windows/OSX cluster, no token auth) on import.
from devstack.ray_head import free_port, ray_head
from devstack.stack import start_gateway
from loadtest.core import MODELS
from loadtest.measure import family, redis_processes

ROOT = Path(__file__).resolve().parent.parent
GATEWAY_PORT = 8000  # a gateway's port where each one has an address of its own (netns nodes)


def raise_fd_limit(want: int = 200_000) -> None:
    """Children inherit it: gateways, Ray workers, Locust workers."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), max(hard, want)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


@dataclass
class Running:
    layout: str
    urls: list
    roots: dict = field(default_factory=dict)   # component -> [root pids] (their trees count)
    ray_root: int | None = None
    prefix: str = ""
    ray_address: str | None = None

    def components(self) -> dict:
        """component -> processes, read fresh (Ray starts host processes as rooms appear)."""
        out: dict = {name: self.component(name) for name in self.roots}
        if self.ray_root:
            hosts, system = [], []
            for p in family(self.ray_root):
                try:
                    cmd = " ".join(p.cmdline()[:2])
                except psutil.Error:
                    continue
                (hosts if cmd.startswith("ray::") else system).append(p)
            out["ray-hosts"] = hosts
            out["ray-system"] = system
        out["redis"] = redis_processes()
        return out

    def component(self, name: str) -> list:
        """One component's processes, read fresh. Cheaper than `components()[name]`, which finds
        Redis's by reading every process of the machine: a probe polling a gateway's RSS on the
        process whose loop times the honest load spent a third of its samples there."""
        if name in self.roots:
            return [p for pid in self.roots[name] for p in family(pid)]
        return self.components()[name]


@contextmanager
def baseline_stack(n: int = 2, game_seconds: float = 120.0, ws: str | None = None):
    raise_fd_limit()
    procs, urls = [], []
    try:
        for _ in range(n):
            port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "loadtest.baseline", "--port", str(port),
                 "--game-seconds", str(game_seconds), *(["--ws", ws] if ws else [])], cwd=ROOT,
                start_new_session=True))
            urls.append(f"http://127.0.0.1:{port}")
        for url, proc in zip(urls, procs):
            wait_http(url + "/healthz", proc)
        yield Running("baseline", urls, roots={"gateway": [p.pid for p in procs]})
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)


# A load run opens every room (and presses every quick play) from 127.0.0.1 and finds its host
# limit by measuring: the abuse limits meant for one client among many are off
# (docs/architecture.md, "Abuse limits").
LOAD_LIMITS = {"WW_ROOMS_PER_ADDRESS": "0", "WW_LOOKUP_FAILURES_PER_ADDRESS": "0",
               "WW_QUICK_PLAYS_PER_ADDRESS": "0", "WW_JOINS_PER_ADDRESS": "0",
               "WW_OPEN_LOBBIES_PER_ADDRESS": "0", "WW_LOBBY_SEATS_PER_ADDRESS": "0",
               "WW_MAX_HOSTS": "100000"}


@contextmanager
def real_stack(n: int = 2, games_per_actor: int = 200, durations: dict | None = None,
               warm_actors: int = 1, redis_url: str | None = None, ws: str | None = None,
               env: dict | None = None):
    """`env`: more gateway environment on top of LOAD_LIMITS (e.g. quick play's limit off)."""
    raise_fd_limit()
    redis_url = redis_url or os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    prefix = "lt" + secrets.token_hex(5)
    with ExitStack() as stack:
        address = stack.enter_context(ray_head(num_cpus=2))
        port = int(address.rsplit(":", 1)[1])
        ray_root = _ray_head_pid(port)
        gateways = []
        stack.callback(lambda: [g.kill() for g in gateways if g.process.poll() is None])
        for _ in range(n):
            gateways.append(start_gateway(ray_address=address, redis_url=redis_url, prefix=prefix,
                                          durations=durations, games_per_actor=games_per_actor,
                                          warm_actors=warm_actors, ws=ws,
                                          env={**LOAD_LIMITS, **(env or {})}))
        yield Running(f"games_per_actor={games_per_actor}", [g.url for g in gateways],
                      roots={"gateway": [g.process.pid for g in gateways]}, ray_root=ray_root,
                      prefix=prefix, ray_address=address)
        _clean_redis(redis_url, prefix)


def _ray_head_pid(port: int) -> int | None:
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "ray" in cmd and "start" in cmd and "--head" in cmd and f"--port={port}" in cmd:
            return p.pid
    return None


def _clean_redis(redis_url: str, prefix: str) -> None:
    try:
        import redis

        r = redis.Redis.from_url(redis_url)
        keys = list(r.scan_iter(f"{prefix}:*", count=1000))
        for i in range(0, len(keys), 1000):
            r.delete(*keys[i:i + 1000])
    except Exception:  # noqa: BLE001  cleaning is best effort
        pass


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until `url` answers 200 (a server that is starting); raises if `proc` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: process exited {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)   # polling a server that is still starting
    raise TimeoutError(url)


def haproxy_config(port: int, servers: list[tuple[str, str]],
                   server_port: int = GATEWAY_PORT) -> str:
    """The shipped config with this run's bind and servers (by address: no resolver here)."""
    text = (ROOT / "deploy/haproxy/haproxy.cfg").read_text()
    text = text.replace("bind :80", f"bind 127.0.0.1:{port}")
    text = text.replace(" resolvers docker", "")
    text = re.sub(r"\nresolvers docker\n(?:[ \t].*\n?)*", "\n", text)
    lines = "".join(f"    server {name} {ip}:{server_port}\n" for name, ip in servers)
    return re.sub(r"(?:    server .*\n)+", lambda _m: lines, text)


def tear_down_on_signals() -> None:
    """SIGTERM tears the stack down as Ctrl-C does (its Ray head and gateways run in sessions of
    their own: nothing else would stop them). Once: a second SIGTERM or Ctrl-C while it tears down
    is ignored, or it would cut the teardown short and leave processes, network namespaces and
    cgroups behind."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)


def ray_driver(**init) -> None:
    """`ray.init(**init)`, keeping this process's SIGTERM and SIGINT handlers: a Ray driver installs
    its own, which ends the process at once, with no teardown."""
    import threading

    import ray

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    ray.init(**init)
    if threading.current_thread() is threading.main_thread():  # the only one that may set them
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def _interrupt(signum, frame) -> None:
    # a handler, not SIG_IGN: an ignored signal stays ignored in the processes the teardown starts
    signal.signal(signal.SIGTERM, _during_teardown)
    signal.signal(signal.SIGINT, _during_teardown)
    raise KeyboardInterrupt


def _during_teardown(signum, frame) -> None:
    print(f"signal {signum} ignored: tearing down (kill -9 stops at once)", file=sys.stderr,
          flush=True)


def main(argv=None) -> int:
    """Start a stack and keep it up (for the Locust web UI): prints the gateway URLs."""
    import argparse
    import json

    ap = argparse.ArgumentParser(description="start a load-test target and keep it running")
    ap.add_argument("--layout", default="200", help="baseline, 1, or N games per Ray actor")
    ap.add_argument("--gateways", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3600, help="stop by itself after this long")
    ap.add_argument("--model", default="human", choices=sorted(MODELS),
                    help="phase durations of this load model (human: the server's defaults)")
    ap.add_argument("--durations", default="", help='JSON {"discussion": 30, ...} (seconds)')
    ap.add_argument("--ws", help="uvicorn WebSocket implementation (default: the server's own)")
    args = ap.parse_args(argv)

    durations = {**(MODELS[args.model].durations or {}),
                 **(json.loads(args.durations) if args.durations else {})}
    ctx = (baseline_stack(args.gateways, ws=args.ws) if args.layout == "baseline"
           else real_stack(args.gateways, games_per_actor=int(args.layout), durations=durations,
                           ws=args.ws))
    tear_down_on_signals()
    with ctx as running:
        print("gateways: " + ",".join(running.urls), flush=True)
        try:
            time.sleep(args.seconds)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
