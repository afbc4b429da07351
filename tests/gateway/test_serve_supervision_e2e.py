"""`werewolf serve` as the one process that owns the local stack (gateway/serve/): the redis-server
it started comes back after a crash with its rooms; of two started together on one state
directory and port, one serves and the other names it; SIGTERM, serving or still starting, leaves
nothing it started running.

Real processes only: each serve is `python -m gateway.cli serve` with a state directory of its
own (XDG_STATE_HOME under tmp_path, so its Redis files and lock are the test's) on a free port,
under a random prefix; its output goes to a file the test polls.
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from devstack.ray_head import free_port
from devstack.stack import ROOT
from gateway.serve.processes import kill_family
from tests.helpers import until_sync

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")]

TIMEOUT = 90.0  # a Ray head on a loaded 2-core machine


class Serve:
    def __init__(self, tmp_path: Path, *flags: str, name: str = "serve", state: Path | None = None,
                 port: int | None = None, prefix: str | None = None) -> None:
        self.port = port or free_port()
        self.state = state or tmp_path / f"{name}-state"
        self.redis_dir = self.state / "werewolf" / "redis"
        self.log_path = tmp_path / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        if "--own-redis" in flags:
            env.pop("REDIS_URL", None)
        env.update(XDG_STATE_HOME=str(self.state), PYTHONUNBUFFERED="1")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gateway.cli", "serve", "--port", str(self.port),
                 "--prefix", prefix or "t" + secrets.token_hex(5), "--log-level", "warning",
                 *flags],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.paths: list[str] = [str(self.redis_dir)]  # and its Ray head's temp dir, once said

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = TIMEOUT) -> re.Match:
        def printed() -> re.Match | None:
            text = self.output()
            match = re.search(pattern, text, re.M)
            assert match or self.proc.poll() is None, \
                f"serve exited with {self.proc.returncode}:\n{text}"
            return match
        return until_sync(printed, timeout, lambda: f"{pattern!r} in:\n{self.output()}", every=0.1)

    def wait_open(self) -> None:
        ray = self.wait_for(r"^Starting a local Ray head on \S+ \(its files in (\S+)\)$")
        self.paths.append(ray.group(1))
        self.wait_for(rf"^Open http://127\.0\.0\.1:{self.port}/$")

    def tree(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def stop(self, sig: int) -> int:
        """Signal it and wait for it: every process it started must be gone after."""
        started = self.tree()
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=TIMEOUT)
        assert_gone(started, self.paths)
        return code

    def cleanup(self) -> None:
        if self.proc.poll() is None:
            kill_family(self.proc)  # its Ray head and Redis run in sessions of their own
        for p in using(self.paths):
            p.kill()


def using(paths: list[str]) -> list[psutil.Process]:
    """Processes naming one of `paths` in their command line or holding a file under one open."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if p.pid == os.getpid():
            continue
        try:
            if (any(path in arg for arg in p.info["cmdline"] or () for path in paths)
                    or any(f.path.startswith(tuple(paths)) for f in p.open_files())):
                found.append(p)
        except psutil.Error:
            continue
    return found


def assert_gone(started: list[psutil.Process], paths: list[str]) -> None:
    _, alive = psutil.wait_procs(started, timeout=30)
    assert alive == [], [(p.pid, p.name()) for p in alive]
    until_sync(lambda: not using(paths), 30,
               lambda: f"none using {paths}: {[(p.pid, p.name()) for p in using(paths)]}",
               every=0.1)


def redis_of(serve: Serve) -> psutil.Process:
    found = [p for p in serve.tree() if p.name() == "redis-server"]
    assert len(found) == 1, found
    return found[0]


def test_the_redis_it_started_is_started_again_with_its_rooms(tmp_path):
    serve = Serve(tmp_path, "--own-redis")
    try:
        serve.wait_open()
        with httpx.Client(base_url=serve.url, timeout=30) as http:
            room = http.post("/api/rooms", json={"name": "Layla"}).json()["room"]
            crashed = redis_of(serve)
            title = crashed.cmdline()  # redis-server 127.0.0.1:PORT
            crashed.kill()  # SIGKILL: no shutdown, as a crash
            crashed.wait(timeout=10)

            def room_answers() -> httpx.Response | None:
                try:  # a short timeout: a request made while Redis was away may wait it out
                    answer = http.get(f"/api/rooms/{room}", timeout=5)
                except httpx.HTTPError:
                    return None
                return answer if answer.status_code == 200 else None
            # the gateway waits for Redis, then answers from the restarted one
            answer = until_sync(room_answers, TIMEOUT, lambda: f"the room:\n{serve.output()}",
                                every=0.2)
            assert answer.json()["status"] == "lobby"
            assert http.post(f"/api/rooms/{room}/join", json={"name": "Omar"}).status_code == 200

            again = redis_of(serve)  # same port, same directory
            assert again.pid != crashed.pid and again.cmdline() == title
            assert again.cwd() == str(serve.redis_dir)
            serve.wait_for(rf"redis-server \(pid {crashed.pid}, \S+\) exited \(killed by SIGKILL\)")
            serve.wait_for(rf"redis-server answers again on \S+ \(pid {again.pid}\)")

        assert serve.stop(signal.SIGTERM) == 0
        assert "exited" not in serve.output().split("SIGTERM: stopping", 1)[1]  # not restarted
    finally:
        serve.cleanup()


def test_two_serves_started_together_one_serves_and_the_other_names_it(tmp_path):
    state, port, prefix = tmp_path / "state", free_port(), "t" + secrets.token_hex(5)
    both = [Serve(tmp_path, name=name, state=state, port=port, prefix=prefix)
            for name in ("a", "b")]
    try:
        until_sync(lambda: any(s.proc.poll() is not None for s in both), TIMEOUT,
                   lambda: f"one of them gives up: {[s.output() for s in both]}", every=0.1)
        loser = next(s for s in both if s.proc.poll() is not None)
        winner = next(s for s in both if s is not loser)
        assert loser.proc.returncode != 0
        lines = loser.output().strip().splitlines()
        assert len(lines) == 1, lines
        assert "another `werewolf serve` is running" in lines[0]
        assert f"pid {winner.proc.pid}, http://127.0.0.1:{port}/" in lines[0]

        winner.wait_open()  # the first carries on
        assert httpx.get(winner.url + "/readyz", timeout=30).json()["ok"] is True
        assert winner.stop(signal.SIGINT) == 0
    finally:
        for s in both:
            s.cleanup()


def test_sigterm_stops_the_gateway_workers_ray_and_redis(tmp_path):
    serve = Serve(tmp_path, "--own-redis", "--workers", "2")
    try:
        serve.wait_open()
        # A room: a Ray host actor process now runs too.
        httpx.post(serve.url + "/api/rooms", json={"name": "Layla"}, timeout=60).raise_for_status()
        names = [p.name() for p in serve.tree()]
        assert "redis-server" in names and "raylet" in names and "gcs_server" in names, names
        workers = [p for p in psutil.Process(serve.proc.pid).children()
                   if "multiprocessing" in " ".join(p.cmdline())]
        assert len(workers) >= 2, names  # uvicorn's gateway workers

        assert serve.stop(signal.SIGTERM) == 0
    finally:
        serve.cleanup()


def test_sigterm_while_it_starts_leaves_nothing_running(tmp_path):
    """The default SIGTERM ended the process before it stopped the Redis and Ray head it had
    started (both in sessions of their own): they ran on."""
    serve = Serve(tmp_path, "--own-redis")
    try:
        serve.wait_for(r"^Started redis-server")
        ray = serve.wait_for(r"^Starting a local Ray head on \S+ \(its files in (\S+)\)$")
        serve.paths.append(ray.group(1))
        assert serve.stop(signal.SIGTERM) == 0
        assert "stopped by SIGTERM while starting" in serve.output()
        assert "Open " not in serve.output()
    finally:
        serve.cleanup()


def test_a_ray_head_that_exits_while_starting_is_started_again(monkeypatch, capsys):
    """On a loaded CI box `ray start` gave up waiting for its raylet (Ray's fixed 30 s) and the
    whole serve exited. Here the first head says what Ray said then and exits; the second is
    real."""
    from gateway.serve import ray_head
    from gateway.serve.processes import listens

    # local_ray sets these for its own process: restored after the test.
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    real_start = ray_head._start_head
    started: list[str] = []

    def first_gives_up(port: int, temp_dir: str, head_log: str) -> subprocess.Popen:
        started.append(temp_dir)
        if len(started) > 1:
            return real_start(port, temp_dir, head_log)
        with open(head_log, "wb") as log:
            return subprocess.Popen(
                [sys.executable, "-c", "print('Exception: The current node timed out during "
                 "startup.'); raise SystemExit(1)"], stdout=log, stderr=subprocess.STDOUT)

    monkeypatch.setattr(ray_head, "_start_head", first_gives_up)
    session: list[str] = []
    with ray_head.local_ray(session) as address:
        assert listens("127.0.0.1", int(address.rpartition(":")[2]))
        assert session and len(started) == 2
        assert not os.path.exists(started[0])  # the failed head's files are gone
    said = capsys.readouterr().out
    assert ("The Ray head exited while starting (Exception: The current node timed out during "
            "startup.): starting it again") in said
    assert not os.path.exists(started[1])
