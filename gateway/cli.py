"""`werewolf serve`: Redis (private if none), a local Ray head (unless given one), the gateway.

Flags become the environment variables of `actors.config.Config.from_env`, so uvicorn's worker
processes (which build their app from the environment) all see the same configuration.
SIGTERM or SIGINT (Ctrl-C), at any point, stops the gateway, then whatever this command started.
A command that starts a Redis or a Ray head holds `serve.lock` in the state directory: a second
one there exits at once naming the first. The redis-server it starts is started again whenever it
exits (its append-only file brings the rooms back) until the command stops.
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import shutil
import signal
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
SHUTDOWN_GRACE_SECONDS = 10  # SIGTERM: open connections get this long to close, then are closed
# The private redis-server's port: below the kernel's ephemeral range, so no outgoing connection
# takes it while the server is down and its restart finds it free.
REDIS_FIRST_PORT = 7379
# Held by every `werewolf serve` of this machine from choosing a port until what it started there
# listens: two at once picked the same free port for their Ray heads, and both heads broke.
PORTS_LOCK = Path(tempfile.gettempdir()) / "werewolf-serve-ports.lock"
# A redis-server that exits is started again after this delay, doubled at each exit of one that
# ran less than RESTART_STABLE seconds, up to RESTART_MAX_DELAY.
RESTART_FIRST_DELAY, RESTART_MAX_DELAY, RESTART_STABLE = 0.5, 30.0, 30.0


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
    serve.add_argument("--own-redis", action="store_true",
                       help="start the private redis-server even if 127.0.0.1:6379 answers")
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
    if args.own_redis and (args.redis_url or os.environ.get("REDIS_URL")):
        serve.error("--own-redis starts a Redis: give it no --redis-url (nor REDIS_URL)")
    os.environ.update(_env_from_flags(args, rest, serve))
    _check_config(serve)
    return _serve(args)


class _Stopping(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _StopRequest:
    """SIGTERM and SIGINT, noted by the handler and acted on where stopping leaves nothing behind:
    `check()` between the steps of starting, uvicorn's own handling once it runs. An exception
    raised by the handler itself could land between a Popen and the `try` that stops its
    process; the default SIGTERM left the Redis and the Ray head running."""

    signum: int | None = None

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._note)

    def _note(self, signum: int, frame) -> None:
        if self.signum is None:
            self.signum = signum
            os.write(2, f"werewolf serve: {signal.Signals(signum).name}: stopping\n".encode())

    def check(self) -> None:
        if self.signum is not None:
            raise _Stopping(self.signum)


_STOP = _StopRequest()


def _log(message: str) -> None:
    print(f"werewolf serve: {message}", file=sys.stderr, flush=True)


def _check_config(parser: argparse.ArgumentParser) -> None:
    """Refuse a bad configuration (a misspelt phase, a zero count) before starting anything."""
    from actors import Config

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
    from actors import Config

    _STOP.install()
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    url = f"http://{shown}:{args.port}/"
    try:
        with ExitStack() as stack:
            stack.callback(_kill_descendants)  # last: anything still running under this process
            starts_redis = not os.environ.get("REDIS_URL") and (
                args.own_redis or not _answers(*DEFAULT_REDIS))
            starts_ray = not os.environ.get("RAY_ADDRESS")
            holder = f"pid {os.getpid()}, {url}"
            if starts_redis or starts_ray:
                # A local stack: one per state directory (it holds the Redis's files), and not
                # on a port in use, before anything is started only to be stopped.
                state = _state_dir()
                stack.enter_context(_lock_file(
                    state / "serve.lock", holder,
                    lambda other: f"werewolf serve: another `werewolf serve` is running ({other}) "
                                  f"with its state in {state}: stop it, or give this one another "
                                  "XDG_STATE_HOME."))
                _refuse_taken_port(args.host, args.port)
            if starts_redis:
                os.environ["REDIS_URL"] = stack.enter_context(
                    _private_redis(args.redis_dir, holder))
            _STOP.check()
            _warn_if_volatile(os.environ.get("REDIS_URL") or "redis://%s:%d/0" % DEFAULT_REDIS)
            if starts_ray:
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
            _STOP.check()
            threading.Thread(target=_announce, args=(url,), daemon=True).start()
            _run_gateway(uvicorn.Config(
                "gateway.app:app_from_env", factory=True, host=args.host, port=args.port,
                workers=args.workers, loop="uvloop", ws=uvicorn_ws(args.ws),
                ws_max_size=WS_MAX_BYTES,
                ws_per_message_deflate=False,  # see gateway/framing.py
                http="gateway.http:TimedHttpProtocol", limit_concurrency=_max_connections(),
                headers=[(k.decode(), v.decode()) for k, v in SECURITY_HEADERS],
                # a socket that never closes may not hold a SIGTERM up: closed after this long
                timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
                log_level=args.log_level))
    except _Stopping as stopped:
        _log(f"stopped by {stopped} while starting; everything it had started is stopped")
    return 0


def _run_gateway(config) -> None:
    """uvicorn.run, but a signal noted before uvicorn listened for its own is acted on too (it
    would otherwise be lost: the gateway would serve on)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    if config.workers > 1:
        supervisor = Multiprocess(config, sockets=[config.bind_socket()])
        try:  # its handlers are in place: anything later reaches its queue
            if _STOP.signum is not None:
                supervisor.signal_queue.append(_STOP.signum)
            supervisor.run()
        finally:
            _STOP.install()  # uvicorn leaves its handlers, which only queue, installed
        return

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self):
            with super().capture_signals():
                if _STOP.signum is not None:
                    self.handle_exit(_STOP.signum, None)
                yield

    server = Server(config)
    try:
        server.run()
    finally:
        # This process was a Ray driver: leave while the head still answers (at exit, after the
        # head is stopped, ray's own shutdown waited ~8 s for it).
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()
    if not server.started and _STOP.signum is None:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE: the app did not start (it said why)


def _kill_descendants() -> None:
    """Whatever still runs under this process once everything is stopped in order (a gateway
    worker that hung, a process an exiting child left)."""
    import psutil

    try:
        left = psutil.Process().children(recursive=True)
    except psutil.Error:
        return
    _kill_all(left, 10)


def _kill_all(processes: list, timeout: float) -> None:
    """SIGKILL each (those already gone are skipped), then wait up to `timeout` for them."""
    import psutil

    for p in processes:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(processes, timeout=timeout)


def _refuse_taken_port(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                sys.exit(f"werewolf serve: {host}:{port} is in use (another server?): "
                         "pass --port.")


@contextmanager
def _lock_file(path: Path, holder: str, refused):
    """Hold an flock on `path` (which then says `holder`) for the block, or exit with
    `refused(what the holder wrote)`. The kernel drops the lock with the process, however it ends."""
    import fcntl

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path, "a+")
    except OSError as e:
        _log(f"cannot lock {path} ({e}); running without that check")
        yield
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(refused(_holder(lock)))
    try:
        lock.seek(0)
        lock.truncate()
        lock.write(holder + "\n")
        lock.flush()
        yield
    finally:
        lock.seek(0)
        lock.truncate()
        lock.close()


def _holder(lock) -> str:
    """What the holder of `lock` wrote: it writes just after it takes the lock."""
    deadline = time.monotonic() + 1.0
    while True:
        lock.seek(0)
        text = lock.read().strip()
        if text or time.monotonic() > deadline:
            return text or "pid unknown"
        time.sleep(0.05)


@contextmanager
def _ports_lock():
    """PORTS_LOCK, waited for (a stop request still stops the wait)."""
    import fcntl

    try:
        lock = os.open(PORTS_LOCK, os.O_RDONLY | os.O_CREAT, 0o666)
    except OSError:  # another user's file in a sticky /tmp: open it as it is
        try:
            lock = os.open(PORTS_LOCK, os.O_RDONLY)
        except OSError:
            yield
            return
    try:
        deadline = time.monotonic() + 2 * STARTUP_TIMEOUT
        said = False
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                _STOP.check()
                if time.monotonic() > deadline:
                    _log(f"{PORTS_LOCK} stayed locked; choosing ports without it")
                    break
                if not said:
                    _log("waiting for another `werewolf serve` to start what it starts")
                    said = True
                time.sleep(0.1)
        yield
    finally:
        os.close(lock)


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

    from actors import connect, persistence

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
def _private_redis(data_dir: Path, holder: str | None = None):
    """A redis-server keeping an append-only file (fsync every second) in `data_dir`: started
    again on the same directory, it has every room that was acknowledged before it stopped. It
    is started again (same port, directory and options) whenever it exits until the block ends."""
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("No Redis answers at 127.0.0.1:6379 and redis-server is not installed "
                 "(apt-get install redis-server, or set REDIS_URL).")
    data_dir.mkdir(parents=True, exist_ok=True)
    # Two redis-servers appending to one file would corrupt it.
    with _lock_file(data_dir / "werewolf.lock", holder or f"pid {os.getpid()}",
                    lambda other: f"Another `werewolf serve` ({other}) keeps its Redis in "
                                  f"{data_dir}: stop it, or pass --redis-dir or --redis-url."):
        with _ports_lock():
            port = _free_port(REDIS_FIRST_PORT)
            redis = _SupervisedRedis(
                [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(data_dir)],
                port, data_dir)
            try:
                _wait(lambda: _answers("127.0.0.1", port), redis.proc, "redis-server")
            except BaseException:
                redis.stop()
                raise
        try:
            print(f"Started redis-server on 127.0.0.1:{port} (append-only file in {data_dir})",
                  flush=True)
            redis.watch()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            redis.stop()
            print(f"Stopped redis-server on 127.0.0.1:{port}", flush=True)


class _SupervisedRedis:
    """Our redis-server, started again with the same command whenever it exits, with a backoff,
    until `stop()` or a stop request."""

    def __init__(self, command: list[str], port: int, data_dir: Path) -> None:
        self.command, self.port, self.data_dir = command, port, data_dir
        self._lock = threading.Lock()  # stop() never misses a server started meanwhile
        self._stopped = False
        self._thread = threading.Thread(target=self._watch, name="redis-supervisor", daemon=True)
        self.proc = self._spawn()

    def _spawn(self) -> subprocess.Popen:
        self._since = time.monotonic()
        return subprocess.Popen(self.command, stdout=subprocess.DEVNULL, start_new_session=True)

    def watch(self) -> None:
        self._thread.start()

    def _stopping(self) -> bool:
        return self._stopped or _STOP.signum is not None

    def _pause(self, seconds: float) -> bool:
        """False if a stop came first."""
        deadline = time.monotonic() + seconds
        while not self._stopping():
            if time.monotonic() >= deadline:
                return True
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        return False

    def _watch(self) -> None:
        delay = RESTART_FIRST_DELAY
        while True:
            proc = self.proc
            code = proc.wait()
            if self._stopping():
                return
            died = time.monotonic()
            if died - self._since >= RESTART_STABLE:
                delay = RESTART_FIRST_DELAY
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            _log(f"redis-server (pid {proc.pid}, 127.0.0.1:{self.port}) exited ({how}); starting "
                 f"it again in {delay:g} s on its append-only file in {self.data_dir}")
            if not self._pause(delay):
                return
            delay = min(delay * 2, RESTART_MAX_DELAY)
            with self._lock:
                if self._stopping():
                    return
                try:
                    self.proc = self._spawn()
                except OSError as e:
                    _log(f"could not start redis-server again: {e}")
                    continue
            while self.proc.poll() is None and not self._stopping():  # it loads its file first
                if _answers("127.0.0.1", self.port):
                    _log(f"redis-server answers again on 127.0.0.1:{self.port} (pid "
                         f"{self.proc.pid}), {time.monotonic() - died:.1f} s after it exited")
                    break
                self._pause(0.1)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            proc = self.proc
        proc.terminate()  # it flushes its append-only file
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if self._thread.is_alive():
            self._thread.join(timeout=10)


def _refuse_owned_prefix(config) -> None:
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


def _release_prefix(config, session: list[str]) -> None:
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


@contextmanager
def _local_ray(session: list[str]):
    """A Ray head of our own; appends its session name (the prefix lease's owner) to `session`."""
    # Only for a head we start ourselves: loopback only, no token file to hand around.
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    temp_dir = tempfile.mkdtemp(prefix="ww-ray", dir="/tmp")  # short: Ray's socket paths
    ray_exe = Path(sys.executable).with_name("ray")
    proc = None
    try:
        with _ports_lock():
            port = _free_port(RAY_FIRST_PORT)
            print(f"Starting a local Ray head on 127.0.0.1:{port} (its files in {temp_dir})",
                  flush=True)
            with open(os.path.join(temp_dir, "head.log"), "wb") as log:
                proc = subprocess.Popen(
                    [str(ray_exe) if ray_exe.exists() else "ray", "start", "--head", "--block",
                     "--disable-usage-stats", "--node-ip-address=127.0.0.1", f"--port={port}",
                     "--include-dashboard=false", f"--temp-dir={temp_dir}",
                     f"--ray-client-server-port={_free_port()}",
                     f"--dashboard-agent-listen-port={_free_port()}",
                     f"--dashboard-agent-grpc-port={_free_port()}",
                     f"--runtime-env-agent-port={_free_port()}",
                     f"--metrics-export-port={_free_port()}"],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            _wait(lambda: _listening(port), proc, "ray head")
            _wait(lambda: os.path.exists(os.path.join(temp_dir, "session_latest")), proc,
                  "ray head")
        session.append(os.path.basename(os.readlink(os.path.join(temp_dir, "session_latest"))))
        print(f"Started a local Ray head on 127.0.0.1:{port}", flush=True)
        yield f"127.0.0.1:{port}"
    finally:
        if proc is not None:
            _stop_ray(proc, temp_dir)
            print("Stopped the local Ray head", flush=True)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _stop_ray(proc: subprocess.Popen, temp_dir: str) -> None:
    """Our head only (never `ray stop`: it stops every Ray here): `ray start` and everything under
    it, then any process still using our temp dir (one forked as the head was being stopped)."""
    kill_family(proc)
    deadline = time.monotonic() + 10
    while (left := _using(temp_dir)) and time.monotonic() < deadline:
        _kill_all(left, 2)


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


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(ready, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not ready():
        _STOP.check()
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
