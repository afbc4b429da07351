"""A local Ray head of our own (loopback, never port 6379), and the key prefix's lease: a new
Ray cluster refuses a prefix another live one owns, and gives its own back as it stops."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from gateway.serve.locks import ports_lock
from gateway.serve.processes import free_port, kill_all, kill_family, listens, outward_ip, wait
from gateway.serve.stopping import log

RAY_FIRST_PORT = 6380  # Ray's default 6379 is Redis's port


def refuse_owned_prefix(config) -> None:
    import asyncio

    from actors import Keys, PrefixTaken, connect

    async def lease() -> tuple:
        client = connect(config.redis_url)  # a Sentinel or cluster URL too
        try:
            key = Keys(config.prefix).stack()
            return await client.get(key), await client.ttl(key)
        finally:
            await client.aclose()
    owner, ttl = asyncio.run(lease())
    if owner is not None:
        sys.exit(f"werewolf serve: {PrefixTaken(config.prefix, owner.decode(), max(ttl, 0))}")


def release_prefix(config, session: list[str]) -> None:
    """Give the prefix back as this stack stops, so the next one need not wait for the lease."""
    if not session:
        return
    import asyncio

    from actors import connect, release

    async def run() -> None:
        client = connect(config.redis_url)
        try:
            await release(client, config.prefix, session[0])
        finally:
            await client.aclose()
    try:
        asyncio.run(run())
    except Exception as e:  # Redis gone: the lease lapses by itself
        print(f"could not release prefix {config.prefix!r}: {e!r}", file=sys.stderr)


LOOPBACK = ("127.0.0.1", "localhost")


def attach_ray(address: str) -> None:
    """A Ray cluster given (RAY_ADDRESS): before the gateway's `ray.init`, which retried ~50 s
    deaf to SIGTERM and failed when no GCS answered. Waits for the GCS, a SIGTERM still heard.
    A loopback address names a head on this machine, which Ray rewrites to this machine's
    outward address (for other machines' sake): a head bound to loopback alone (ours above, the
    dev stack's, any `ray start --node-ip-address=127.0.0.1`) does not answer there, so Ray is
    told to keep the address as given. Called before anything imports ray (it reads that once);
    the gateway's workers inherit it."""
    host, _, port = address.rpartition(":")
    if "://" in address or not port.isdigit():
        return  # "auto", a ray:// client: Ray's own to resolve
    if not listens(host, int(port)):
        log(f"waiting for the Ray cluster at {address}")
        wait(lambda: listens(host, int(port)), None, f"the Ray cluster at {address}")
    outward = outward_ip()
    if host in LOOPBACK and (outward is None or not listens(outward, int(port))):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


# A head that exits while starting is started again, on new ports, like systemd's Restart=: on a
# loaded machine `ray start` gives up when its raylet has not registered in a fixed 30 s (a CI
# run's `werewolf serve` exited so), and a free port can be taken before Ray binds it.
HEAD_ATTEMPTS = 3


@contextmanager
def local_ray(session: list[str]):
    """A Ray head of our own; appends its session name (the prefix lease's owner) to `session`."""
    # Only for a head we start ourselves: loopback only, no token file to hand around.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    proc = temp_dir = None
    try:
        with ports_lock():
            for attempt in range(1, HEAD_ATTEMPTS + 1):
                port = free_port(RAY_FIRST_PORT)
                temp_dir = tempfile.mkdtemp(prefix="ww-ray", dir="/tmp")  # short: socket paths
                print(f"Starting a local Ray head on 127.0.0.1:{port} (its files in {temp_dir})",
                      flush=True)
                head_log = os.path.join(temp_dir, "head.log")
                proc = _start_head(port, temp_dir, head_log)
                # The whole node, not the GCS port alone: it opens before the raylet registers,
                # and a gateway connecting in between failed on a loaded machine.
                wait(lambda: _says(head_log, b"Ray runtime started") or proc.poll() is not None,
                     None, "ray head")
                if proc.poll() is None or attempt == HEAD_ATTEMPTS:
                    break
                print(f"The Ray head exited while starting ({_last_line(head_log)}): starting "
                      "it again", flush=True)
                _stop_ray(proc, temp_dir)
                shutil.rmtree(temp_dir, ignore_errors=True)
            wait(lambda: _says(head_log, b"Ray runtime started"), proc, "ray head", head_log)
            wait(lambda: os.path.exists(os.path.join(temp_dir, "session_latest")), proc,
                 "ray head")
        session.append(os.path.basename(os.readlink(os.path.join(temp_dir, "session_latest"))))
        print(f"Started a local Ray head on 127.0.0.1:{port}", flush=True)
        yield f"127.0.0.1:{port}"
    finally:
        if proc is not None:
            _stop_ray(proc, temp_dir)
            print("Stopped the local Ray head", flush=True)
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)


def _start_head(port: int, temp_dir: str, head_log: str) -> subprocess.Popen:
    ray_exe = Path(sys.executable).with_name("ray")
    with open(head_log, "wb") as log:
        return subprocess.Popen(
            [str(ray_exe) if ray_exe.exists() else "ray", "start", "--head", "--block",
             "--disable-usage-stats", "--node-ip-address=127.0.0.1", f"--port={port}",
             "--include-dashboard=false", f"--temp-dir={temp_dir}",
             f"--ray-client-server-port={free_port()}",
             f"--dashboard-agent-listen-port={free_port()}",
             f"--dashboard-agent-grpc-port={free_port()}",
             f"--runtime-env-agent-port={free_port()}",
             f"--metrics-export-port={free_port()}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _last_line(path: str) -> str:
    with open(path, "rb") as log:
        lines = log.read().decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "nothing said"


def _says(path: str, text: bytes) -> bool:
    with open(path, "rb") as log:
        return text in log.read()


def _stop_ray(proc: subprocess.Popen, temp_dir: str) -> None:
    """Our head only (never `ray stop`: it stops every Ray here): `ray start` and everything under
    it, then any process still using our temp dir (one forked as the head was being stopped)."""
    kill_family(proc)
    deadline = time.monotonic() + 10
    while (left := _using(temp_dir)) and time.monotonic() < deadline:
        kill_all(left, 2)


def _using(path: str) -> list:
    """The processes other than this one naming `path` in their command line, and the Ray
    workers (`ray::...`, a title that hides their command line) writing their logs under it."""
    import psutil

    found = []
    for p in psutil.process_iter(["cmdline"]):
        if p.pid == os.getpid():
            continue
        cmdline = p.info["cmdline"] or []
        try:
            if (any(path in arg for arg in cmdline)
                    or (cmdline and cmdline[0].startswith("ray::")
                        and any(f.path.startswith(path + os.sep) for f in p.open_files()))):
                found.append(p)
        except psutil.Error:
            continue
    return found
