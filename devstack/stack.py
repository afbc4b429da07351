"""A real stack for end-to-end tests and load scripts: Ray head, Redis, gateway processes, and a
protocol client.

Nothing here is mocked: gateways are `werewolf serve` subprocesses (uvicorn on a free 127.0.0.1
port) attached to a private Ray head and to the shared Redis, under a random key prefix.

The pytest fixtures over it (ray_address, redis_url, ww_prefix, stack) are in tests/conftest.py;
nothing here needs pytest:

    Stack(ray_address, redis_url, prefix): .start_gateway() starts a gateway on that prefix;
        .close() kills them all, then the prefix's actors (drop_actors)

    start_gateway(*, ray_address, redis_url, prefix, durations=TEST_DURATIONS,
                  games_per_actor=1, warm_actors=1, workers=1, port=None, env=None) -> Gateway
        waits until GET /readyz answers 200; `env` adds environment variables (WW_* limits,
        WW_REDIS_WAIT).
    drop_actors(ray_address, prefix)   kill the prefix's detached actors (placement, hosts)
    Gateway(url, ws_url, process, port, prefix, log_path): .url "http://127.0.0.1:P",
        .ws_url "ws://127.0.0.1:P",
        .kill() (SIGKILL the gateway and its children: a crash), .stop() (SIGTERM, then wait).
    await create_room(url, name) -> {"room", "seat", "token"}
    await join_room(url, room, name) -> {"room", "seat", "token"}   (raises HTTPStatusError)
    await connect(ws_url, room, token, since=None) -> Client    sends hello, waits for `welcome`
    await open_socket(ws_url, room) -> Client                   no hello sent (handshake tests)
    Client: .welcome (the welcome frame), .seat, .frames (every frame received, in order),
        .sent (every frame sent with .send),
        .events (the event frames), .last_seq (highest event seq seen, or the welcome seq),
        await .send(frame: dict), await .send_raw(text),
        await .recv_until(predicate, timeout=...) -> the first frame after the previous match
            that satisfies predicate(frame) (TimeoutError otherwise),
        await .wait_for(predicate, timeout=...) -> the first frame ever received that matches
            (no cursor: safe beside another task that reads with recv_until),
        await .request(frame, timeout=...) -> the ack/error answering frame["id"],
        await .wait_closed(timeout=...) -> the close code, await .close().
"""
from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson
import psutil
from websockets.asyncio.client import ClientConnection, connect as ws_connect
from websockets.exceptions import ConnectionClosed

from devstack.ray_head import free_port
from rules import DEFAULT_DURATIONS

ROOT = Path(__file__).resolve().parent.parent

# Short phases so a whole game plays in well under a minute (seconds, WW_DURATION_<PHASE>).


def ws_frame(payload: bytes) -> bytes:
    """A masked client text frame (RFC 6455), for a socket written to by hand (no client library:
    the abuse probes and tests drive sockets that never read)."""
    mask = os.urandom(4)
    n = len(payload)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return b"\x81" + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def durations(seconds: int, **phases: int) -> dict[str, int]:
    """Every phase duration the rules declare at `seconds`, those in `phases` as given: a copy
    that names some phases runs the others (a role added later) at their defaults unseen."""
    unknown = set(phases) - set(DEFAULT_DURATIONS)
    if unknown:
        raise ValueError(f"no such phase durations: {sorted(unknown)}")
    return {name: phases.get(name, seconds) for name in DEFAULT_DURATIONS}


TEST_DURATIONS = durations(2)
TEST_LIMITS = {"WW_JOINS_PER_ADDRESS": "0", "WW_OPEN_LOBBIES_PER_ADDRESS": "0",
               "WW_LOBBY_SEATS_PER_ADDRESS": "0"}
STARTUP_TIMEOUT = 120.0
DEFAULT_TIMEOUT = 30.0
HTTP_TIMEOUT = 60.0  # creating a room may wait for a Ray host actor process to start


# ---------------------------------------------------------------------------- processes

@dataclass
class Gateway:
    url: str
    ws_url: str
    process: subprocess.Popen
    port: int
    prefix: str
    log_path: Path

    def kill(self) -> None:
        """SIGKILL the gateway and every process it started: what a crash looks like."""
        _kill_tree(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        _kill_tree(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_gateway(*, ray_address: str, redis_url: str, prefix: str,
                  durations: dict[str, int] | None = None, games_per_actor: int = 1,
                  warm_actors: int = 1, workers: int = 1, port: int | None = None,
                  presence_lease: int | None = None, ws: str | None = None,
                  env: dict[str, str] | None = None) -> Gateway:
    """`env`: more environment variables for the gateway (e.g. WW_* limits)."""
    port = port or free_port()
    env = {
        **os.environ,
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
        "RAY_AUTH_MODE": "disabled",
        "PYTHONUNBUFFERED": "1",
        # Every test client is 127.0.0.1: the caps on what one address holds and joins would
        # count a whole test's tables as one player's (tests/gateway/test_abuse_e2e.py sets them).
        **TEST_LIMITS,
        **(env or {}),
    }
    env = {k: v for k, v in env.items() if not k.startswith("WW_DURATION_")}
    for name, seconds in (TEST_DURATIONS if durations is None else durations).items():
        env[f"WW_DURATION_{name.upper()}"] = str(seconds)
    log_path = Path(f"/tmp/ww-gateway-{prefix}-{port}.log")
    log_file = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--redis-url", redis_url, "--ray-address", ray_address,
         "--prefix", prefix, "--games-per-actor", str(games_per_actor),
         "--warm-actors", str(warm_actors), "--log-level", "warning",
         *(["--presence-lease", str(presence_lease)] if presence_lease else []),
         *(["--ws", ws] if ws else [])],
        cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
    log_file.close()
    gateway = Gateway(url=f"http://127.0.0.1:{port}", ws_url=f"ws://127.0.0.1:{port}",
                      process=process, port=port, prefix=prefix, log_path=log_path)
    try:
        _wait_ready(gateway)
    except BaseException:
        gateway.kill()
        raise
    return gateway


def _wait_ready(gateway: Gateway) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if gateway.process.poll() is not None:
            raise RuntimeError(f"gateway exited with {gateway.process.returncode}:\n"
                               f"{gateway.log()}")
        try:
            if httpx.get(gateway.url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # polling a server that is still starting, not waiting on a test event
    raise TimeoutError(f"gateway not ready in {STARTUP_TIMEOUT}s:\n{gateway.log()}")


def _kill_tree(pid: int, sig: int) -> None:
    try:
        parent = psutil.Process(pid)
        family = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for p in family:
        try:
            p.send_signal(sig)
        except psutil.NoSuchProcess:
            pass


@dataclass
class Stack:
    ray_address: str
    redis_url: str
    prefix: str
    gateways: list[Gateway] = field(default_factory=list)
    drops_actors: bool = True  # False for a cluster the test tears down whole (devstack/netns.py)

    def start_gateway(self, *, durations: dict[str, int] | None = None, games_per_actor: int = 1,
                      warm_actors: int = 1, workers: int = 1,
                      presence_lease: int | None = None, ws: str | None = None,
                      env: dict[str, str] | None = None) -> Gateway:
        gateway = start_gateway(ray_address=self.ray_address, redis_url=self.redis_url,
                                prefix=self.prefix, durations=durations,
                                games_per_actor=games_per_actor, warm_actors=warm_actors,
                                workers=workers, presence_lease=presence_lease, ws=ws, env=env)
        self.gateways.append(gateway)
        return gateway

    def close(self) -> None:
        for gateway in self.gateways:
            if gateway.process.poll() is None:
                gateway.kill()
        if self.drops_actors:
            drop_actors(self.ray_address, self.prefix)


def drop_actors(ray_address: str, prefix: str) -> None:
    """Kill the detached actors a test's prefix left on the session's Ray head. They outlive the
    gateways, and each idle host keeps polling its inbox: 34 hosts and 20 placement actors of
    finished tests were alive halfway through a CI run, slowing every test after them."""
    import ray

    if not ray.is_initialized():
        ray.init(address=ray_address, log_to_driver=False)
    for actor in ray.util.list_named_actors(all_namespaces=True):
        if actor["name"].startswith(f"{prefix}-"):
            try:
                ray.kill(ray.get_actor(actor["name"], namespace=actor["namespace"]),
                         no_restart=True)
            except ValueError:  # stopped meanwhile (placement retires empty hosts)
                pass


# ---------------------------------------------------------------------------- protocol client

async def create_room(url: str, name: str, timeout: float = HTTP_TIMEOUT) -> dict:
    async with httpx.AsyncClient(base_url=url, timeout=timeout) as http:
        response = await http.post("/api/rooms", json={"name": name})
        response.raise_for_status()
        return response.json()


async def join_room(url: str, room: str, name: str) -> dict:
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT) as http:
        response = await http.post(f"/api/rooms/{room}/join", json={"name": name})
        response.raise_for_status()
        return response.json()


_ids = itertools.count(1)


class Client:
    """One player's socket. A background task records every frame; tests read with recv_until."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict] = []
        self.sent: list[dict] = []
        self.welcome: dict | None = None
        self._cursor = 0
        self._arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    @property
    def seat(self) -> int:
        return self.welcome["seat"]

    @property
    def events(self) -> list[dict]:
        return [f for f in self.frames if f.get("type") == "event"]

    @property
    def last_seq(self) -> int:
        seqs = [f["seq"] for f in self.frames if f.get("type") in ("event", "welcome")]
        return max(seqs, default=0)

    async def _read(self) -> None:
        try:
            async for text in self.ws:
                frame = orjson.loads(text)
                async with self._arrived:
                    self.frames.append(frame)
                    self._arrived.notify_all()
        except ConnectionClosed:
            pass
        finally:
            async with self._arrived:
                self._arrived.notify_all()

    async def send(self, frame: dict) -> None:
        self.sent.append(frame)
        await self.ws.send(orjson.dumps(frame).decode())

    async def send_raw(self, text: str | bytes) -> None:
        await self.ws.send(text)

    async def recv_until(self, predicate, timeout: float = DEFAULT_TIMEOUT) -> dict:
        async def scan() -> dict:
            async with self._arrived:
                while True:
                    while self._cursor < len(self.frames):
                        frame = self.frames[self._cursor]
                        self._cursor += 1
                        if predicate(frame):
                            return frame
                    if self._reader.done():
                        raise ConnectionError(f"socket closed ({self.ws.close_code})")
                    await self._arrived.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def wait_for(self, predicate, timeout: float = DEFAULT_TIMEOUT, since: int = 0) -> dict:
        """The first frame received (from the `since`th on) that satisfies predicate(frame),
        waiting for it if need be. Unlike recv_until it moves no cursor, so it may run beside a
        task reading frames."""
        async def scan() -> dict:
            checked = since
            async with self._arrived:
                while True:
                    for frame in self.frames[checked:]:
                        if predicate(frame):
                            return frame
                    checked = len(self.frames)
                    if self._reader.done():
                        raise ConnectionError(f"socket closed ({self.ws.close_code})")
                    await self._arrived.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def request(self, frame: dict, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """Send a frame with a fresh id (unless it has one); return the ack or error answering
        it."""
        frame = {**frame, "id": frame.get("id", f"r{next(_ids)}")}
        # its answer comes after: a long-lived socket's frames not read again
        sent_at = len(self.frames)
        await self.send(frame)
        return await self.wait_for(
            lambda f: f.get("type") in ("ack", "error") and f.get("id") == frame["id"], timeout,
            sent_at)

    async def wait_closed(self, timeout: float = DEFAULT_TIMEOUT) -> int | None:
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        return self.ws.close_code

    async def close(self) -> None:
        await self.ws.close()
        await asyncio.gather(self._reader, return_exceptions=True)


async def open_socket(ws_url: str, room: str) -> Client:
    """A socket that has not said hello yet (for tests of the handshake)."""
    return Client(await ws_connect(f"{ws_url}/ws/{room}", max_size=None))


async def connect(ws_url: str, room: str, token: str, since: int | None = None,
                  timeout: float = DEFAULT_TIMEOUT) -> Client:
    client = await open_socket(ws_url, room)
    await client.send({"type": "hello", "token": token, "since": since})
    client.welcome = await client.recv_until(lambda f: f.get("type") == "welcome", timeout)
    return client
