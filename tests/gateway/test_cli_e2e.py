"""`werewolf serve` on its own: it starts a local Ray head, serves, and Ctrl-C stops everything it
started."""
import os
import secrets
import signal
import subprocess
import sys

import httpx
import psutil
import pytest

from tests.ray_head import free_port
from tests.stack import ROOT

pytestmark = pytest.mark.e2e


def test_serve_starts_ray_serves_and_cleans_up_on_ctrl_c():
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    serve = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--port", str(port),
         "--prefix", "t" + secrets.token_hex(5), "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
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
            assert http.post("/api/rooms", json={"name": "Layla"}).status_code == 201

        started = psutil.Process(serve.pid).children(recursive=True)  # Ray, its workers, actors
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=60) == 0
        gone, alive = psutil.wait_procs(started, timeout=30)
        assert alive == []
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
