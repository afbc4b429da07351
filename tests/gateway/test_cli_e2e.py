"""`werewolf serve` on its own: it starts a local Ray head, serves, and Ctrl-C stops everything it
started; given a Ray cluster (RAY_ADDRESS) it attaches, and stops promptly while it waits for one;
a stack never serves a prefix another live cluster owns (actors/ownership.py)."""
import os
import secrets
import signal
import subprocess
import sys

import httpx
import psutil
import pytest
import redis

from devstack.ray_head import free_port
from devstack.stack import ROOT, start_gateway
from gateway.serve.processes import kill_family

pytestmark = pytest.mark.e2e


def test_serve_starts_ray_serves_and_cleans_up_on_ctrl_c(tmp_path):
    port = free_port()
    prefix = "t" + secrets.token_hex(5)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    # A state directory of its own: one local stack runs per state directory (serve.lock).
    serve = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port),
         "--prefix", prefix, "--log-level", "warning"],
        cwd=ROOT, env={**env, "XDG_STATE_HOME": str(tmp_path / "first")},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        lines = []
        for line in serve.stdout:  # blocks until the server says where to go
            lines.append(line)
            if line.startswith("Open "):
                break
        assert lines[-1].strip() == f"Open http://127.0.0.1:{port}/", lines
        assert any(line.startswith("Started a local Ray head") for line in lines)
        # "Open ..." is printed once the gateway is ready.
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            assert http.get("/readyz").json() == {"ok": True, "redis": True, "ray": True}
            room = http.post("/api/rooms", json={"name": "Layla"}).json()["room"]

            # A second stack on the same Redis and prefix (another user's, or another checkout's
            # state directory: on the same one, serve.lock refuses it first) is refused, naming
            # WW_PREFIX, before it starts a Ray of its own.
            second = subprocess.run(
                [sys.executable, "-m", "gateway.cli", "serve", "--port", str(free_port()),
                 "--prefix", prefix, "--log-level", "warning"],
                cwd=ROOT, env={**env, "XDG_STATE_HOME": str(tmp_path / "second")},
                capture_output=True, text=True, timeout=120)
            assert second.returncode != 0
            assert "WW_PREFIX" in second.stderr and prefix in second.stderr, second.stderr
            assert "Started a local Ray head" not in second.stdout
            # ...and the first one's rooms stay where they were.
            assert http.get(f"/api/rooms/{room}").json()["status"] == "lobby"
            assert http.post(f"/api/rooms/{room}/join", json={"name": "Omar"}).status_code == 200

        started = psutil.Process(serve.pid).children(recursive=True)  # Ray, its workers, actors
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=60) == 0
        gone, alive = psutil.wait_procs(started, timeout=30)
        assert alive == []
        # Stopped cleanly, it gave the prefix back: the next stack need not wait for the lease.
        with redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")) as r:
            assert r.get(f"{prefix}:stack") is None
    finally:
        if serve.poll() is None:
            kill_family(serve)  # its Ray head runs in a session of its own


def test_a_gateway_refuses_a_prefix_another_live_cluster_owns(ray_address, redis_url):
    """With RAY_ADDRESS given, the gateway checks the owner itself: this session's Ray is not
    the cluster holding the lease."""
    prefix = "t" + secrets.token_hex(5)
    with redis.Redis.from_url(redis_url) as r:
        r.set(f"{prefix}:stack", "session_of_another_cluster", ex=60)
        try:
            with pytest.raises(RuntimeError) as refused:
                start_gateway(ray_address=ray_address, redis_url=redis_url, prefix=prefix)
            said = str(refused.value)
            assert "WW_PREFIX" in said and "session_of_another_cluster" in said
            # Its placement actor was never made, so no host of that prefix was restarted here.
            assert r.zcard(f"{prefix}:hosts") == 0
        finally:
            r.delete(f"{prefix}:stack")


def attached(ray_address: str, port: int) -> subprocess.Popen:
    """`werewolf serve` given RAY_ADDRESS as an operator sets it: without the dev stack's
    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, so Ray would rewrite a loopback address."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port),
         "--prefix", "t" + secrets.token_hex(5), "--warm-actors", "0", "--log-level", "warning"],
        cwd=ROOT, env={**env, "RAY_ADDRESS": ray_address}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_a_gateway_given_a_loopback_ray_address_serves_and_stops_on_sigterm(ray_address):
    """Issue 34: Ray rewrote 127.0.0.1 to this machine's outward address, where the loopback
    head does not answer: the gateway never started, and heard SIGTERM only after ~50 s."""
    port = free_port()
    serve = attached(ray_address, port)
    try:
        lines = []
        for line in serve.stdout:  # blocks until the server says where to go (or exits)
            lines.append(line)
            if line.startswith("Open "):
                break
        assert lines and lines[-1].strip() == f"Open http://127.0.0.1:{port}/", lines
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            assert http.get("/readyz").json() == {"ok": True, "redis": True, "ray": True}
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=30) == 0
    finally:
        if serve.poll() is None:
            kill_family(serve)


def test_a_gateway_waiting_for_its_ray_cluster_stops_on_sigterm():
    serve = attached(f"127.0.0.1:{free_port()}", free_port())  # no Ray there
    try:
        for line in serve.stdout:
            if "waiting for the Ray cluster" in line:
                break
        serve.send_signal(signal.SIGTERM)
        said = serve.communicate(timeout=30)[0]
        assert serve.returncode == 0 and "stopped by SIGTERM while starting" in said, said
    finally:
        if serve.poll() is None:
            kill_family(serve)
