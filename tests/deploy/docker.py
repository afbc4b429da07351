"""Docker for the deployment tests: the engine (started here if none runs, stopped after), the
images (deploy/container/build-base, then deploy/Dockerfile over it), and containers that carry a
label of their run so that teardown (or the next run, after a crash) removes every one of them."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

from devstack.processes import stop
from tests.helpers import until_sync

ROOT = Path(__file__).resolve().parents[2]
LABEL = "werewolf-deploy-test"
IMAGE = "werewolf-deploy:test"
ENGINE_TIMEOUT = 60.0
READY_TIMEOUT = 240.0  # five Ray nodes starting at once on a 2-core machine


def docker(*args: str, timeout: float = 600, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and done.returncode:
        raise RuntimeError(f"docker {' '.join(args[:3])}... failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _engine_answers() -> bool:
    return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0


def _forward_policy() -> str | None:
    """The iptables FORWARD policy, or None without iptables."""
    if not shutil.which("iptables"):
        return None
    rules = subprocess.run(["iptables", "-S", "FORWARD"], capture_output=True, text=True).stdout
    return rules.splitlines()[0].split()[-1] if rules else None


@contextmanager
def engine():
    """A Docker engine for the block. dockerd sets the FORWARD policy to DROP, which cuts off
    every other bridge on the machine (network-namespace tests): the policy it found is put back
    as soon as dockerd is up (Docker's own chains still isolate its networks), and again after."""
    if _engine_answers():
        yield
        return
    policy = _forward_policy()
    log = open("/tmp/werewolf-dockerd.log", "ab")
    dockerd = subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        until_sync(lambda: dockerd.poll() is not None or _engine_answers(), ENGINE_TIMEOUT,
                   "dockerd answers (its log: /tmp/werewolf-dockerd.log)")
        if dockerd.poll() is not None:
            raise RuntimeError("dockerd did not start: see /tmp/werewolf-dockerd.log")
        if policy:
            subprocess.run(["iptables", "-P", "FORWARD", policy], check=True)
        yield
    finally:
        stop(dockerd, grace=30)
        if policy:
            subprocess.run(["iptables", "-P", "FORWARD", policy], check=False)
        log.close()


def build_image() -> str:
    """The deployment image over the locally made base; layers are reused while unchanged."""
    base = subprocess.run([str(ROOT / "deploy/container/build-base")], capture_output=True,
                          text=True, check=True, timeout=900).stdout.split()[-1]
    docker("build", "-q", "-f", str(ROOT / "deploy/Dockerfile"), "--build-arg", f"BASE={base}",
           "-t", IMAGE, str(ROOT), timeout=1200)
    return IMAGE


def remove_leftovers() -> None:
    """Containers and networks of earlier runs that died before their teardown."""
    ids = docker("ps", "-aq", "--filter", f"label={LABEL}").split()
    if ids:
        docker("rm", "-f", *ids, check=False)
    for net in docker("network", "ls", "-q", "--filter", f"label={LABEL}").split():
        docker("network", "rm", net, check=False)


class Network:
    """A docker network of this run and the containers on it, all removed by `close`."""

    def __init__(self) -> None:
        self.name = f"ww-deploy-{secrets.token_hex(4)}"
        docker("network", "create", "--label", LABEL, self.name)
        self.containers: dict[str, str] = {}  # alias -> container name

    def run(self, alias: str, *command: str, env: dict[str, str] | None = None,
            publish: str | None = None, options: tuple[str, ...] = (),
            image: str = IMAGE) -> str:
        name = f"{self.name}-{alias}"
        args = ["run", "-d", "--name", name, "--label", LABEL, "--network", self.name,
                "--network-alias", alias, "--hostname", alias, *options]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        if publish:
            args += ["-p", publish]
        docker(*args, image, *command)
        self.containers[alias] = name
        return name

    def exec(self, alias: str, *command: str, timeout: float = 120, check: bool = True) -> str:
        return docker("exec", self.containers[alias], *command, timeout=timeout, check=check)

    def kill(self, alias: str) -> None:
        docker("kill", self.containers[alias])

    def running(self, alias: str) -> bool:
        return docker("inspect", "-f", "{{.State.Running}}", self.containers[alias]) == "true"

    def ip(self, alias: str) -> str:
        info = json.loads(docker("inspect", self.containers[alias]))[0]
        return info["NetworkSettings"]["Networks"][self.name]["IPAddress"]

    def published(self, alias: str, port: int) -> str:
        """host:port on this machine's loopback where the container's `port` is published."""
        return docker("port", self.containers[alias], str(port)).splitlines()[0]

    def logs(self, alias: str) -> str:
        done = subprocess.run(["docker", "logs", "--tail", "60", self.containers[alias]],
                              capture_output=True, text=True, timeout=60)
        return done.stdout + done.stderr

    def close(self) -> None:
        if os.environ.get("WW_DEPLOY_KEEP"):  # to look at a failed run by hand
            return
        if self.containers:
            docker("rm", "-f", *self.containers.values(), check=False)
        docker("network", "rm", self.name, check=False)
