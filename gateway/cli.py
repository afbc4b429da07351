"""`werewolf serve`: Redis (private if none), a local Ray head (unless given one), the gateway.

Flags become the environment variables of `actors.config.Config.from_env`, so uvicorn's worker
processes (which build their app from the environment) all see the same configuration.
Ctrl-C stops the gateway, then whatever this command started.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path

DEFAULT_REDIS = ("127.0.0.1", 6379)
RAY_FIRST_PORT = 6380  # Ray's default 6379 is Redis's port
WS_MAX_BYTES = 1 << 20  # frames between 4 KiB and this get a `bad_frame` error; above, close 1009
# uvicorn's WebSocket implementations; the default is the cheapest per frame measured here
# (loadtest/README.md, "WebSocket implementations").
# "framed": websockets-sansio writing each event's frame as the same bytes to all its sockets
# (gateway/framing.py); the others are uvicorn's own.
WS_IMPLEMENTATIONS = ("framed", "websockets-sansio", "websockets", "wsproto")
STARTUP_TIMEOUT = 90.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="werewolf")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve", help="run Redis (if none), Ray (if none) and the gateway",
        epilog="Phase durations: --duration-<phase> SECONDS, e.g. --duration-discussion 120 "
               "(sets WW_DURATION_<PHASE>).")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="gateway processes")
    serve.add_argument("--redis-url", help="default: $REDIS_URL, else 127.0.0.1:6379 if it "
                                           "answers, else a private redis-server")
    serve.add_argument("--redis-dir", type=Path, default=_state_dir() / "redis",
                       help="where the private redis-server keeps its append-only file "
                            "(default: %(default)s); a restart of it resumes every room")
    serve.add_argument("--redis-wait", type=int,
                       help="acknowledge a command only once this many Redis replicas have it "
                            "(WW_REDIS_WAIT, default 0; see docs/architecture.md, Durability)")
    serve.add_argument("--ray-address", help="default: $RAY_ADDRESS, else a local Ray head")
    serve.add_argument("--games-per-actor", type=int,
                       help="rooms per Ray host actor (default 200; 1 = one actor, one process, "
                            "per game)")
    serve.add_argument("--warm-actors", type=int, help="spare host actors kept started")
    serve.add_argument("--prefix", help="Redis key prefix (WW_PREFIX)")
    serve.add_argument("--presence-lease", type=int,
                       help="seconds before the seats of a gateway that died show disconnected "
                            "(WW_PRESENCE_LEASE, default 15)")
    serve.add_argument("--request-timeout", type=float,
                       help="seconds an HTTP request may take to arrive before its connection is "
                            "closed (WW_HTTP_REQUEST_TIMEOUT, default 10)")
    serve.add_argument("--max-connections", type=int,
                       help="connections (HTTP and WebSocket) per gateway process; past it, 503 "
                            "(WW_MAX_CONNECTIONS; default: the open-file limit less 1024)")
    serve.add_argument("--ws", default=WS_IMPLEMENTATIONS[0], choices=WS_IMPLEMENTATIONS,
                       help="uvicorn's WebSocket implementation (default: %(default)s, the "
                            "cheapest per frame measured)")
    serve.add_argument("--log-level", default="info")
    # Unknown flags are the open-ended --duration-<phase> family.
    args, rest = parser.parse_known_args(argv)
    os.environ.update(_env_from_flags(args, rest, serve))
    _check_config(serve)
    return _serve(args)


def _check_config(parser: argparse.ArgumentParser) -> None:
    """Refuse a bad configuration (a misspelt phase, a zero count) before starting anything."""
    from actors.config import Config

    try:
        Config.from_env()
    except ValueError as e:
        parser.error(str(e))


def _env_from_flags(args, rest: list[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    env: dict[str, str] = {}
    for flag, var in (("redis_url", "REDIS_URL"), ("ray_address", "RAY_ADDRESS"),
                      ("games_per_actor", "WW_GAMES_PER_ACTOR"), ("warm_actors", "WW_WARM_ACTORS"),
                      ("prefix", "WW_PREFIX"), ("presence_lease", "WW_PRESENCE_LEASE"),
                      ("request_timeout", "WW_HTTP_REQUEST_TIMEOUT"),
                      ("max_connections", "WW_MAX_CONNECTIONS"),
                      ("redis_wait", "WW_REDIS_WAIT")):
        value = getattr(args, flag, None)
        if value is not None:
            env[var] = str(value)
    it = iter(rest)
    for item in it:
        name, _, value = item.partition("=")
        match = re.fullmatch(r"--duration-([a-z][a-z0-9_.-]*)", name)
        if not match:
            parser.error(f"unknown argument {item}")
        if not value:
            value = next(it, "")
        if not value.isdigit():
            parser.error(f"{name} needs a number of seconds")
        env["WW_DURATION_" + re.sub(r"[.-]", "_", match.group(1)).upper()] = value
    return env


def _serve(args) -> int:
    from actors.config import Config

    with ExitStack() as stack:
        if not os.environ.get("REDIS_URL") and not _answers(*DEFAULT_REDIS):
            os.environ["REDIS_URL"] = stack.enter_context(_private_redis(args.redis_dir))
        _warn_if_volatile(os.environ.get("REDIS_URL") or "redis://%s:%d/0" % DEFAULT_REDIS)
        if not os.environ.get("RAY_ADDRESS"):
            config = Config.from_env()
            # A new Ray cluster: if another live one owns the prefix, serving it would take
            # that cluster's rooms over (actors/ownership.py). Refuse before starting anything.
            _refuse_owned_prefix(config)
            session: list[str] = []
            stack.callback(_release_prefix, config, session)  # once our Ray head is gone
            os.environ["RAY_ADDRESS"] = stack.enter_context(_local_ray(session))
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            # Before any worker imports prometheus_client: the workers share this directory.
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="werewolf-metrics-"))
        import uvicorn

        from gateway.headers import SECURITY_HEADERS
        shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        threading.Thread(target=_announce, args=(f"http://{shown}:{args.port}/",),
                         daemon=True).start()
        uvicorn.run("gateway.app:app_from_env", factory=True, host=args.host, port=args.port,
                    workers=args.workers, loop="uvloop", ws=uvicorn_ws(args.ws), ws_max_size=WS_MAX_BYTES,
                    ws_per_message_deflate=False,  # see gateway/framing.py
                    http="gateway.http:TimedHttpProtocol", limit_concurrency=_max_connections(),
                    headers=[(k.decode(), v.decode()) for k, v in SECURITY_HEADERS],
                    log_level=args.log_level)
    return 0


def uvicorn_ws(name: str) -> str:
    """uvicorn's `ws` setting for one of WS_IMPLEMENTATIONS."""
    return "gateway.framing:FramedWebSocketProtocol" if name == "framed" else name


def _max_connections() -> int:
    """Connections a gateway process takes before answering 503: what its open-file limit
    holds, less a reserve for Redis, Ray and files (a process out of descriptors fails at
    everything, its healthy sockets included)."""
    if os.environ.get("WW_MAX_CONNECTIONS"):
        return int(os.environ["WW_MAX_CONNECTIONS"])
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(256, soft - 1024)


def _announce(url: str) -> None:
    """Print the URL to open once the gateway is ready (Ray and Redis reachable)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "readyz", timeout=2):
                print(f"Open {url}", flush=True)
                return
        except OSError:  # not listening yet, or 503 (HTTPError is an OSError) while starting
            time.sleep(0.3)


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _free_port(start: int | None = None) -> int:
    for port in range(start, start + 200) if start else [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port from {start}")


def _state_dir() -> Path:
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "werewolf"


def _warn_if_volatile(url: str) -> None:
    """An ack promises the command survives; a Redis that keeps nothing on disk breaks that
    promise at its first restart. Say so at start (not fatal: a test box may not care)."""
    import asyncio

    from actors.store import connect, persistence

    async def ask() -> str | None:
        redis = connect(url)
        try:
            return await asyncio.wait_for(persistence(redis), 10)
        finally:
            await redis.aclose()

    try:
        kept = asyncio.run(ask())
    except Exception as e:  # unreachable now: the gateway's /readyz will tell
        print(f"WARNING: could not ask Redis at {url} what it keeps on disk ({e!r})",
              file=sys.stderr, flush=True)
        return
    if kept is not None:
        print(f"WARNING: the Redis at {url} keeps {kept}. Turn on its append-only file "
              "(appendonly yes) or let `werewolf serve` start its own (see docs/architecture.md, "
              "Durability).", file=sys.stderr, flush=True)


@contextmanager
def _private_redis(data_dir: Path):
    """A redis-server keeping an append-only file (fsync every second) in `data_dir`: started
    again on the same directory, it has every room that was acknowledged before it stopped."""
    import fcntl

    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("No Redis answers at 127.0.0.1:6379 and redis-server is not installed "
                 "(apt-get install redis-server, or set REDIS_URL).")
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = open(data_dir / "werewolf.lock", "w")
    try:  # two redis-servers appending to one file would corrupt it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"Another `werewolf serve` keeps its Redis in {data_dir}: stop it, or pass "
                 "--redis-dir or --redis-url.")
    port = _free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "yes", "--appendfsync", "everysec",
                             "--dir", str(data_dir)], stdout=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        _wait(lambda: _answers("127.0.0.1", port), proc, "redis-server")
        print(f"Started redis-server on 127.0.0.1:{port} (append-only file in {data_dir})",
              flush=True)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        lock.close()


def _refuse_owned_prefix(config) -> None:
    import asyncio

    from actors.ownership import PrefixTaken
    from actors.store import Keys, connect

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


def _release_prefix(config, session: list[str]) -> None:
    """Give the prefix back as this stack stops, so the next one need not wait for the lease."""
    if not session:
        return
    import asyncio

    from actors.ownership import release
    from actors.store import connect

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


@contextmanager
def _local_ray(session: list[str]):
    """A Ray head of our own; appends its session name (the prefix lease's owner) to `session`."""
    # Only for a head we start ourselves: loopback only, no token file to hand around.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    port = _free_port(RAY_FIRST_PORT)
    temp_dir = tempfile.mkdtemp(prefix="ww-ray", dir="/tmp")  # short: Ray's socket paths
    ray_exe = Path(sys.executable).with_name("ray")
    proc = subprocess.Popen(
        [str(ray_exe) if ray_exe.exists() else "ray", "start", "--head", "--block",
         "--disable-usage-stats", "--node-ip-address=127.0.0.1", f"--port={port}",
         "--include-dashboard=false", f"--temp-dir={temp_dir}",
         f"--ray-client-server-port={_free_port()}",
         f"--dashboard-agent-listen-port={_free_port()}",
         f"--dashboard-agent-grpc-port={_free_port()}",
         f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}"],
        stdout=open(os.path.join(temp_dir, "head.log"), "wb"), stderr=subprocess.STDOUT,
        start_new_session=True)
    try:
        _wait(lambda: _listening(port), proc, "ray head")
        _wait(lambda: os.path.exists(os.path.join(temp_dir, "session_latest")), proc, "ray head")
        session.append(os.path.basename(os.readlink(os.path.join(temp_dir, "session_latest"))))
        print(f"Started a local Ray head on 127.0.0.1:{port}", flush=True)
        yield f"127.0.0.1:{port}"
    finally:
        kill_family(proc)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(ready, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not ready():
        if proc.poll() is not None:
            sys.exit(f"{what} exited with {proc.returncode}")
        if time.monotonic() > deadline:
            sys.exit(f"{what} did not start in {STARTUP_TIMEOUT:.0f}s")
        time.sleep(0.2)


def kill_family(proc: subprocess.Popen) -> None:
    """Stop the head and the raylet's workers (never `ray stop`: it kills every Ray here)."""
    import psutil

    try:
        family = [psutil.Process(proc.pid)] + psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return
    for p in family:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


if __name__ == "__main__":
    sys.exit(main())
