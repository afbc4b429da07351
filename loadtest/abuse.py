"""Issue 24's abuse suite, each probe run once against a private stack (loadtest/README.md,
"Abuse: headers and slow readers (issue 24)", holds the table of an earlier run):

    python -m loadtest.abuse [--only PROBE,...] [--readers 168] [--flood 5000] ...

For each: refused or dropped, the time it took, the CPU it cost, the gateway's RSS before / after
(psutil, the gateway's process tree) and the ping -> ack p99 of seats of another room during the
probe against the same seats idle. The stack runs the per-address limits as shipped (the `Config`
defaults, in one window for the whole run), a lobby's maximum age of `--lobby-max-age` seconds,
a metrics token, and believes X-Forwarded-For from 127.0.0.1 (FORWARDED_ALLOW_IPS): the probes
name their clients with it, and the proxy probe's HAProxy is that peer.

  headers    one `GET /healthz` whose `X-A` header is 128 x 1 MiB of `a`, sent as fast as the
             gateway takes it; also the gateway's CPU seconds and /healthz's p99 meanwhile
  readers    `--readers` sockets that say hello without `since` and never read (17 seats x 4
             sockets and the rest spectators, the most one room's spectators may be) in a room
             whose day chat already holds `--lines` lines and grows by `--rate` lines a second
  oracle     spectator hellos for unknown codes from one address, as fast as answered
  origin     a socket opened with another site's Origin
  forbidden  `--watchers` spectators watching when the host forbids spectators
  proxy      the shipped HAProxy config (deploy/haproxy/haproxy.cfg, its bind and servers
             rewritten) in front of the gateway; client A (from 127.0.0.2) tries unknown codes
             until 429, then with a forged X-Forwarded-For; client B (127.0.0.3) joins a room
  lobbies    one address opens lobbies, a socket in each, until refused; one IPv6 /56 through
             many /64s; the first lobby closes at its maximum age, connected or not
  names      look-alikes of a seated "Omar" (variation selectors, joiners) and blank names;
             chat lines that show nothing, reorder the line, drive a terminal or pile up marks
  review     the review of unknown codes from one address; a finished table's review (with
             `--review-events` presence changes written into its lobby before it closes)
  again      `again` with a lone surrogate in its token; `--clicks` concurrent clicks on a
             finished table (a lobby closed at its maximum age)
  flood      one seat's socket sends `--flood` chat commands over `--flood-seconds`: refused by
             the gateway, reaching the room, and the hosts' and the gateway's CPU over
             `--flood-window` seconds, then over as long again with nothing sent
  headers500 the security headers on uvicorn's own 400 and on the app's and the gateway's other
             refusals; /metrics without and with its token

The chat of the readers' room is written through `RoomClient` (the room itself), each seat's
lines stamped 1 s apart in the past as a gateway would stamp them (the per-seat rate limit is 1
line a second). `--json PATH` also writes every row with its raw figures (`facts`), which
tests/loadtest/test_abuse.py checks.
"""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before anything imports ray
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import statistics  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import httpx  # noqa: E402
import orjson  # noqa: E402
import psutil  # noqa: E402
import ray  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actors.client import CODE_ALPHABET, RoomClient  # noqa: E402
from actors.config import Config  # noqa: E402
from actors.room import RATE_LIMITS  # noqa: E402
from actors.store import Keys  # noqa: E402
from devstack.processes import stop  # noqa: E402
from devstack.stack import HTTP_TIMEOUT, connect, ws_frame  # noqa: E402
from gateway.routes.rooms import REVIEW_EVENTS  # noqa: E402
from gateway.headers import SECURITY_HEADERS  # noqa: E402
from gateway.limits import SITE_SHARE  # noqa: E402
from gateway.ws import LOCAL_BURST_FACTOR  # noqa: E402
from loadtest.stack import LOAD_LIMITS, free_port, real_stack, tear_down_on_signals  # noqa: E402

# Night and the election pass in a second each; the day's discussion lasts (the chat is by day).
DURATIONS = {"cupid": 1, "seer": 1, "wolves": 1, "witch": 1, "election": 1, "discussion": 900,
             "vote": 900, "tiebreak": 1, "hunter": 1, "successor": 1}
SEATS = 18
GAMES_PER_ACTOR = 50
PING_SOCKETS = 5  # seats of another room pinging (each at most 2 a second: the gateway's limit)
PING_EVERY = 0.6
TCP_ESTABLISHED = 1
PROBES = ("headers", "readers", "oracle", "origin", "forbidden", "proxy", "lobbies", "names",
          "review", "again", "flood", "headers500")
METRICS_TOKEN = "abuse-probe"  # the stack's WW_METRICS_TOKEN
# Clients of the suite's probes, told apart by X-Forwarded-For (198.18.0.0/15: never a real one).
_addresses = (f"198.18.{i // 250}.{i % 250 + 1}" for i in itertools.count())


class Pinger:
    """Seats of a quiet room, each pinging; the acks' latencies, kept by period."""

    def __init__(self, sockets) -> None:
        self.sockets = sockets
        self.samples: list[tuple[float, float]] = []  # (sent at, seconds to the ack)
        self._tasks = [asyncio.create_task(self._run(s)) for s in sockets]

    async def _run(self, sock) -> None:
        while True:
            started = time.monotonic()
            reply = await sock.request({"type": "ping"}, timeout=120)
            if reply["type"] == "ack":
                self.samples.append((started, time.monotonic() - started))
            await asyncio.sleep(max(0.0, PING_EVERY - (time.monotonic() - started)))

    def p99(self, since: float, until: float | None = None) -> str:
        until = until or time.monotonic()
        values = sorted(s for t, s in self.samples if since <= t <= until)
        if not values:
            return "-"
        return f"{values[min(len(values) - 1, int(len(values) * 0.99))] * 1000:.0f} ms (n={len(values)})"

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def rss_mb(stack) -> float:
    total = 0
    for p in stack.components()["gateway"]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def cpu_s(stack, component: str = "gateway") -> float:
    total = 0.0
    for p in stack.components()[component]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def kernel_queue(port: int) -> tuple[int, int]:
    """(connections, bytes in their kernel send queues) of the gateway's listening port."""
    connections = queued = 0
    for table_path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table_path).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":  # ESTABLISHED
                connections += 1
                queued += int(fields[4].split(":")[0], 16)
    return connections, queued


async def never_reading(port: int, room: str, hello: dict) -> socket.socket:
    """Reads the 101 and nothing more (a default receive buffer: a careless client, not a tuned one)."""
    sock = socket.socket()
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, (
        f"GET /ws/{room} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += await loop.sock_recv(sock, 1)
    assert head.startswith(b"HTTP/1.1 101"), head
    await loop.sock_sendall(sock, ws_frame(orjson.dumps(hello)))
    return sock


def established(sock: socket.socket) -> bool:
    """The TCP state, read without reading a byte: the gateway's abort or close shows here."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
    return struct.unpack("B", info[:1])[0] == TCP_ESTABLISHED


async def metric(url: str, name: str, labels: str | None = None) -> float:
    """A gateway counter (with `labels`, e.g. 'type="chat"': that series only), its token sent."""
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT,
                                 headers={"Authorization": f"Bearer {METRICS_TOKEN}"}) as http:
        text = (await http.get(url + "/metrics")).text
    series = name + (" " if labels is None else "{" + labels + "} ")
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(series))


async def table(url: str, seats: int, address: str) -> list[dict]:
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT,
                                 headers={"X-Forwarded-For": address}) as http:
        host = (await http.post("/api/rooms", json={"name": "Host"})).json()
        return [host] + [(await http.post(f"/api/rooms/{host['room']}/join",
                                          json={"name": f"P{i}"})).json() for i in range(1, seats)]


class Chat:
    """Day chat lines through the room, each seat's stamped 1 s apart from an hour ago."""

    def __init__(self, rc: RoomClient, room: str, seats: list[int]) -> None:
        self.rc, self.room, self.seats = rc, room, seats
        self.stamp = {s: time.time_ns() // 1_000_000 - 3_600_000 for s in seats}
        self.n = self.refused = 0

    async def lines(self, count: int) -> None:
        async def one(seat: int, n: int) -> None:
            self.stamp[seat] += 1000
            text = f"line {n} " + "la " * 70  # ~220 characters, a long chat line
            reply = await self.rc.command(self.room, seat, {"type": "chat", "id": f"c{n}",
                                                            "text": text}, self.stamp[seat])
            if reply["type"] != "ack":  # a seat's lines may reach the room out of order
                self.refused += 1
        for start in range(0, count, 100):
            batch = []
            for _ in range(min(100, count - start)):
                self.n += 1
                batch.append(one(self.seats[self.n % len(self.seats)], self.n))
            await asyncio.gather(*batch)

    async def steady(self, rate: float) -> None:
        while True:
            started = time.monotonic()
            await self.lines(max(1, int(rate / 5)))
            await asyncio.sleep(max(0.0, 0.2 - (time.monotonic() - started)))


async def day_room(url: str, rc: RoomClient, address: str) -> tuple[list[dict], list[int]]:
    """An 18-seat game in its first day's discussion; the living seats."""
    seats = await table(url, SEATS, address)
    room = seats[0]["room"]
    reply = await rc.command(room, 0, {"type": "start", "id": "start"})
    assert reply["type"] == "ack", reply
    deadline = time.monotonic() + 300
    while (await rc.welcome(room, 0))["view"]["phase"] != "day.discussion":
        if time.monotonic() > deadline:
            raise TimeoutError("no day.discussion")
        await asyncio.sleep(0.5)  # polling the room's phase while its night passes
    living = [s for s in range(SEATS)
              if (await rc.welcome(room, s))["view"]["channels"] == ["day"]]
    return seats, living


# ---------------------------------------------------------------------------- the probes

async def probe_headers(stack, url: str, port: int, pinger: Pinger) -> dict:
    rss0, cpu0, t0 = rss_mb(stack), cpu_s(stack), time.monotonic()
    health: list[float] = []

    async def healthz() -> None:
        async with httpx.AsyncClient(timeout=120) as http:
            while True:
                started = time.monotonic()
                await http.get(url + "/healthz")
                health.append(time.monotonic() - started)
                await asyncio.sleep(0.1)
    checking = asyncio.create_task(healthz())
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ")
    sent, chunk, outcome = 0, b"a" * (1 << 20), "all sent"
    try:
        for _ in range(128):
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
    except OSError as e:
        outcome = type(e).__name__
    cut = time.monotonic() - t0
    try:
        answer = await asyncio.wait_for(reader.read(100), 5)
    except (OSError, asyncio.TimeoutError):  # reset: the 431 was lost with the connection
        answer = b""
    writer.close()
    await asyncio.sleep(2)  # the probe's aftermath, for the pings and the RSS
    checking.cancel()
    health.sort()
    return {"probe": "128 MiB header", "result": f"{answer[:12].decode() or 'reset'} "
            f"({outcome} after {sent >> 20} MiB sent)", "time": f"{cut:.2f} s",
            "cpu": f"{cpu_s(stack) - cpu0:.2f} s", "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB",
            "ping": pinger.p99(t0), "healthz": f"{health[int(len(health) * .99)] * 1000:.0f} ms"}


async def probe_readers(stack, url: str, port: int, rc: RoomClient, pinger: Pinger,
                        readers: int, lines: int, rate: float, waves: int) -> list[dict]:
    seats, living = await day_room(url, rc, "198.51.100.20")
    room = seats[0]["room"]
    chat = Chat(rc, room, living)
    await chat.lines(lines)
    full = len(orjson.dumps((await rc.welcome(room, 1))["view"]))
    reader = await connect(url.replace("http", "ws"), room, seats[1]["token"])
    sent = len(orjson.dumps(reader.welcome))
    talking = asyncio.create_task(chat.steady(rate))
    t_busy = time.monotonic()
    await asyncio.sleep(10)
    rows = [{"probe": f"busy room, no attack (chat {lines} lines + {rate:.0f}/s)",
             "result": f"welcome {sent / 1000:.0f} KB (the full view {full / 1000:.0f} KB)",
             "rss": f"{rss_mb(stack):.0f} MB", "ping": pinger.p99(t_busy)}]
    # Every seat's 4 sockets (seat 1 has the reading one), then spectators (at most 100 a room).
    hellos = [{"type": "hello", "token": s["token"]} for i, s in enumerate(seats)
              for _ in range(3 if i == 1 else 4)]
    hellos = (hellos + [{"type": "hello", "watch": True}] * readers)[:readers]
    for wave in range(1, waves + 1):
        dropped0 = await metric(url, "ww_ws_dropped_total")
        rss0, (conns0, _) = rss_mb(stack), kernel_queue(port)
        t0, seq0 = time.monotonic(), reader.last_seq
        socks = [await never_reading(port, room, h) for h in hellos]
        gone: dict[int, float] = {}
        peak, peak_queued = rss_mb(stack), 0
        while len(gone) < len(socks) and time.monotonic() - t0 < 600:
            for i, s in enumerate(socks):
                if i not in gone and not established(s):
                    gone[i] = time.monotonic() - t0
            peak = max(peak, rss_mb(stack))
            peak_queued = max(peak_queued, kernel_queue(port)[1])
            await asyncio.sleep(0.2)  # polling the sockets' TCP state
        during = time.monotonic()
        rate_seen = (reader.last_seq - seq0) / (during - t0)
        dropped = await metric(url, "ww_ws_dropped_total") - dropped0
        await asyncio.sleep(3)
        conns, queued = kernel_queue(port)
        for s in socks:
            s.close()
        times = sorted(gone.values())
        rows.append({
            "probe": f"{readers} sockets never reading, wave {wave} ({rate_seen:.0f} events/s)",
            "result": f"{len(gone)}/{readers} let go (reset), {dropped:.0f} dropped (1013)",
            "time": f"{times[0]:.1f}-{times[-1]:.1f} s (median {statistics.median(times):.1f})"
            if times else "-",
            "rss": f"{rss0:.0f} -> peak {peak:.0f} -> {rss_mb(stack):.0f} MB; kernel send queues "
                   f"peak {peak_queued / 2**20:.1f} -> {queued / 2**20:.1f} MB; connections "
                   f"{conns0} -> {conns}",
            "ping": pinger.p99(t0, during)})
    talking.cancel()
    await reader.close()
    return rows


async def probe_oracle(stack, url: str, pinger: Pinger) -> dict:
    from websockets.asyncio.client import connect as ws_connect

    (host,) = await table(url, 1, "198.51.100.30")
    address, answers, t0, rss0 = "198.51.100.31", [], time.monotonic(), rss_mb(stack)
    codes = ["ABCDEF"] * 100 + [host["room"]]
    for code in codes:
        async with ws_connect(f"{url.replace('http', 'ws')}/ws/{code}",
                              additional_headers={"X-Forwarded-For": address}) as ws:
            await ws.send(orjson.dumps({"type": "hello", "watch": True}).decode())
            try:
                await ws.recv()
            except Exception:  # noqa: BLE001  the close is the answer
                pass
            answers.append(ws.close_reason)
    took = time.monotonic() - t0
    counts = {r: answers.count(r) for r in dict.fromkeys(answers)}
    return {"probe": f"{len(codes)} spectator hellos, unknown codes (the last one a real room)",
            "result": ", ".join(f"{n} x 1008 {r}" for r, n in counts.items()),
            "time": f"{took:.1f} s ({len(codes) / took:.0f}/s)",
            "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": pinger.p99(t0)}


async def probe_origin(stack, url: str, pinger: Pinger) -> dict:
    from websockets.asyncio.client import connect as ws_connect

    (host,) = await table(url, 1, "198.51.100.40")
    t0 = time.monotonic()
    async with ws_connect(f"{url.replace('http', 'ws')}/ws/{host['room']}",
                          origin="https://evil.example") as ws:
        try:
            await ws.recv()
        except Exception:  # noqa: BLE001  the close is the answer
            pass
        reason = f"{ws.close_code} {ws.close_reason}"
    return {"probe": "a socket with Origin https://evil.example", "result": reason,
            "time": f"{(time.monotonic() - t0) * 1000:.0f} ms (no hello sent)",
            "rss": "-", "ping": pinger.p99(t0)}


async def probe_forbidden(stack, url: str, pinger: Pinger, watchers: int) -> dict:
    from websockets.asyncio.client import connect as ws_connect

    (host,) = await table(url, 1, "198.51.100.50")
    room, ws_url = host["room"], url.replace("http", "ws")
    seat = await connect(ws_url, room, host["token"])
    socks = []
    for _ in range(watchers):
        ws = await ws_connect(f"{ws_url}/ws/{room}")
        await ws.send(orjson.dumps({"type": "hello", "watch": True}).decode())
        await ws.recv()  # the welcome
        socks.append(ws)
    t0 = time.monotonic()
    assert (await seat.request({"type": "settings", "rules": {"spectators": "forbidden"}}))[
        "type"] == "ack"

    async def closed(ws) -> str:
        try:
            while True:
                await ws.recv()
        except Exception:  # noqa: BLE001  the close
            return f"{ws.close_code} {ws.close_reason}"
    reasons = await asyncio.gather(*(closed(ws) for ws in socks))
    took = time.monotonic() - t0
    await seat.close()
    counts = {r: reasons.count(r) for r in dict.fromkeys(reasons)}
    return {"probe": f"{watchers} spectators watching, the host forbids spectators",
            "result": ", ".join(f"{n} x {r}" for r, n in counts.items()),
            "time": f"{took * 1000:.0f} ms (all closed)", "rss": "-", "ping": pinger.p99(t0)}


# ---------------------------------------------------------------------------- the suite's probes

def client(url: str, address: str | None = None, **kwargs) -> httpx.AsyncClient:
    """An HTTP client the gateway sees as `address` (a fresh one by default)."""
    return httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT,
                             headers={"X-Forwarded-For": address or next(_addresses)}, **kwargs)


def unknown_code() -> str:
    """A guess at a room code (31^6 of them: a guess that hits a room is not to be expected)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))


def counted(values) -> str:
    """[404, 404, 429] -> "2 x 404, 1 x 429", in order of first appearance."""
    values = list(values)
    return ", ".join(f"{values.count(v)} x {v}" for v in dict.fromkeys(values))


async def room_status(url: str, room: str) -> str:
    async with client(url) as http:
        return (await http.get(f"/api/rooms/{room}")).json()["status"]


async def until_finished(url: str, room: str, since: float, patience: float) -> float:
    """Seconds from `since` until the room's lobby facts say `finished`."""
    while await room_status(url, room) != "finished":
        if time.monotonic() - since > patience:
            raise TimeoutError(f"room {room} still open after {patience:.0f} s")
        await asyncio.sleep(0.25)  # polling the room's status for its close
    return time.monotonic() - since


class Shared:
    """What several probes use, made once when first asked for: a day room (18 seats in their
    first day's discussion, for the chat) and a finished table (6 seats; its lobby closes at its
    maximum age, so its host may play again; `review_events` presence changes are written
    through the room meanwhile, for a long review)."""

    def __init__(self, url: str, rc: RoomClient, max_age: int, review_events: int) -> None:
        self.url, self.rc, self.max_age, self.review_events = url, rc, max_age, review_events
        self._day: asyncio.Future | None = None
        self._finished: asyncio.Future | None = None

    def day(self) -> asyncio.Future:
        if self._day is None:
            self._day = asyncio.ensure_future(day_room(self.url, self.rc, next(_addresses)))
        return self._day

    def finished(self) -> asyncio.Future:
        if self._finished is None:
            self._finished = asyncio.ensure_future(self._finished_table())
        return self._finished

    async def _finished_table(self) -> dict:
        seats = await table(self.url, 6, next(_addresses))
        room, made = seats[0]["room"], time.monotonic()
        written = 0
        while written < self.review_events and await room_status(self.url, room) == "lobby":
            batch = min(200, self.review_events - written)  # each one a change: connected, gone...
            await asyncio.gather(*(self.rc.presence(room, 1, (written + i) % 2 == 0)
                                   for i in range(batch)))
            written += batch
        closed = await until_finished(self.url, room, made, self.max_age + 120)
        return {"seats": seats, "room": room, "closed_after": closed, "presence_written": written}

    async def close(self) -> None:
        for task in (self._day, self._finished):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)


async def probe_proxy(stack, url: str, port: int, pinger: Pinger, config: Config) -> dict:
    """Per-client limits behind the shipped HAProxy: two clients from two loopback addresses."""
    from loadtest.scaleout import GATEWAY_PORT, haproxy_config

    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists()
                                          else None)
    if haproxy is None:
        return {"probe": "per-client limits behind HAProxy", "result": "haproxy not installed"}
    listen = free_port()
    text = haproxy_config(listen, [("gateway1", "127.0.0.1")]).replace(
        f"127.0.0.1:{GATEWAY_PORT}", f"127.0.0.1:{port}")
    (owner,) = await table(url, 1, next(_addresses))  # the room B joins (made directly)
    room, limit = owner["room"], config.lookup_failures_per_address
    with tempfile.TemporaryDirectory(prefix="ww-abuse-haproxy-") as tmp:
        path = Path(tmp) / "haproxy.cfg"
        path.write_text(text)
        log = open(Path(tmp) / "haproxy.log", "wb")
        proc = subprocess.Popen([haproxy, "-W", "-db", "-f", str(path)], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        proxy = f"http://127.0.0.1:{listen}"

        def through(address: str) -> httpx.AsyncClient:
            return httpx.AsyncClient(base_url=proxy, timeout=HTTP_TIMEOUT,
                                     transport=httpx.AsyncHTTPTransport(local_address=address))
        try:
            async with through("127.0.0.2") as a:
                started = time.monotonic()
                while True:  # its server enters the rotation once its /readyz checks pass
                    if proc.poll() is not None:
                        return {"probe": "per-client limits behind HAProxy",
                                "result": f"haproxy exited {proc.returncode}: "
                                          f"{(Path(tmp) / 'haproxy.log').read_text()[-300:]}"}
                    try:
                        if (await a.get("/healthz")).status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() - started > 60:
                        raise TimeoutError("HAProxy never answered /healthz")
                    await asyncio.sleep(0.2)  # polling a proxy that is still starting
                t0, rss0 = time.monotonic(), rss_mb(stack)
                tried = []
                for _ in range(limit + 10):  # until refused
                    tried.append((await a.get(f"/api/rooms/{unknown_code()}")).status_code)
                    if tried[-1] == 429:
                        break
                # A header of its own names another client: HAProxy drops it.
                forged = (await a.get(f"/api/rooms/{room}",
                                      headers={"X-Forwarded-For": "198.51.100.99"})).status_code
                a_join = (await a.post(f"/api/rooms/{room}/join",
                                       json={"name": "Anna"})).status_code
                scraped = (await a.get("/metrics")).status_code
            async with through("127.0.0.3") as b:
                b_room = (await b.get(f"/api/rooms/{room}")).status_code
                b_join = (await b.post(f"/api/rooms/{room}/join",
                                       json={"name": "Bilal"})).status_code
            took = time.monotonic() - t0
        finally:
            stop(proc)
    return {"probe": "per-client limits behind HAProxy (deploy/haproxy/haproxy.cfg): client A "
                     "(127.0.0.2) tries unknown codes; then client B (127.0.0.3) joins a room",
            "result": f"A: {counted(tried)} (refused at code {len(tried)}); A with a forged "
                      f"X-Forwarded-For: {forged}; A joining the room: {a_join}; B: the room "
                      f"{b_room}, join {b_join}; /metrics through the proxy: {scraped}",
            "time": f"{took:.1f} s", "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB",
            "ping": pinger.p99(t0),
            "facts": {"a_statuses": tried, "a_forged": forged, "a_join": a_join,
                      "b_room": b_room, "b_join": b_join, "metrics_via_proxy": scraped}}


async def probe_lobbies(stack, url: str, pinger: Pinger, config: Config,
                        max_age: int) -> list[dict]:
    """Held lobbies cannot fill the server: per address, per IPv6 /56, and by their age."""
    ws_url = url.replace("http", "ws")
    limit = config.open_lobbies_per_address
    holder, rows = next(_addresses), []
    rss0, cpu0, t0 = rss_mb(stack), cpu_s(stack), time.monotonic()
    opened, sockets, statuses, refusal = [], [], [], {}
    async with client(url, holder) as http:
        for i in range(2 * limit + 1):  # until refused
            asked = time.monotonic()  # the room's age counts from before this (its creation)
            answer = await http.post("/api/rooms", json={"name": f"Holder{i}"})
            statuses.append(answer.status_code)
            if answer.status_code != 201:
                refusal = answer.json()["detail"]
                break
            seat = answer.json()
            opened.append((asked, seat))
            sockets.append(await connect(ws_url, seat["room"], seat["token"]))
    async with client(url) as other:
        other_status = (await other.post("/api/rooms", json={"name": "Elsewhere"})).status_code
    took = time.monotonic() - t0
    rows.append({
        "probe": f"one address opens lobbies, a socket connected in each, until refused "
                 f"(WW_OPEN_LOBBIES_PER_ADDRESS={limit})",
        "result": f"{counted(statuses)} (`{refusal.get('code')}`: {refusal.get('message')}); "
                  f"another address meanwhile: {other_status}",
        "time": f"{took:.1f} s", "cpu": f"{cpu_s(stack) - cpu0:.2f} s",
        "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": pinger.p99(t0),
        "facts": {"statuses": statuses, "refusal": refusal, "other": other_status}})

    t1, site_cap = time.monotonic(), limit * SITE_SHARE
    site = [f"2001:db8:ab:cd{i:02x}::1" for i in range(site_cap + 4)]  # one /56, a /64 each
    v6 = []
    for address in site:
        async with client(url, address) as http:
            v6.append((await http.post("/api/rooms", json={"name": "Site"})).status_code)
    async with client(url, "2001:db8:ab:ce00::1") as http:  # the next /56
        far = (await http.post("/api/rooms", json={"name": "Far"})).status_code
    rows.append({
        "probe": f"one IPv6 /56 opens a lobby from each of {len(site)} /64s "
                 f"(it holds {SITE_SHARE} x {limit})",
        "result": f"{counted(v6)}; another /56: {far}",
        "time": f"{time.monotonic() - t1:.1f} s", "rss": "-", "ping": pinger.p99(t1),
        "facts": {"statuses": v6, "site_cap": site_cap, "other_site": far}})

    made, first = opened[0]
    closed = await until_finished(url, first["room"], made, max_age + 120)
    for when, seat in opened[1:]:
        await until_finished(url, seat["room"], when, max_age + 120)
    watched = sockets[0]
    seen = [f.get("kind") or f.get("type") for f in watched.frames[1:]]
    socket_state = (f"closed {watched.ws.close_code}" if watched._reader.done()
                    else "still open") + (f", frames after its welcome: {counted(seen)}" if seen
                                          else ", nothing received after its welcome")
    # What its host's next command hears (a socket in the lobby was told nothing of its close).
    told = await watched.request({"type": "settings", "durations": {"vote": 31}}) \
        if not watched._reader.done() else {"type": "closed"}
    told = f"{told['type']} {told.get('code') or ''}".strip()
    async with client(url, holder) as http:
        again = (await http.post("/api/rooms", json={"name": "Holder again"})).status_code
    async with client(url) as other:
        other_after = (await other.post("/api/rooms", json={"name": "Elsewhere"})).status_code
    for s in sockets:
        await s.close()
    rows.append({
        "probe": f"the first of those lobbies, its socket connected (WW_LOBBY_MAX_AGE={max_age})",
        "result": f"finished {closed:.1f} s after it was asked for; its socket: {socket_state}; "
                  f"its host's next command (settings): {told}; then the holder opens a lobby: "
                  f"{again}; another address: {other_after}",
        "time": f"{closed:.1f} s", "rss": f"{rss_mb(stack):.0f} MB", "ping": pinger.p99(made),
        "facts": {"closed_after": closed, "max_age": max_age,
                  "socket_open": not watched._reader.done(),
                  "frames_after_welcome": seen, "host_command": told, "holder_again": again,
                  "other_after": other_after}})
    return rows


LOOK_ALIKES = {"U+034F": "Omar\u034f", "U+FE00": "Omar\ufe00", "U+FE0F": "Omar\ufe0f",
               "U+180B": "Omar\u180b", "U+E0100": "Omar\U000e0100", "U+17B5": "Omar\u17b5"}
BLANK_NAMES = {"U+3164": "\u3164", "U+FFA0": "\uffa0", "U+115F": "\u115f"}
BAD_LINES = {"invisible only": "\u200b\u2060\u200b\u00ad",
             "a bidi override": "look at \u202egnp.exe",
             "terminal escapes": "\x1b]0;owned\x07\x1b[2J\x1b[31mred",
             "499 combining marks": "a" + "\u0301" * 499}


async def probe_names(stack, url: str, pinger: Pinger, shared: Shared) -> list[dict]:
    t0 = time.monotonic()
    async with client(url) as http:
        host = (await http.post("/api/rooms", json={"name": "Layla"})).json()
        join = f"/api/rooms/{host['room']}/join"
        first = (await http.post(join, json={"name": "Omar"})).status_code
        looks = {label: await http.post(join, json={"name": name})
                 for label, name in LOOK_ALIKES.items()}
        blanks = {label: (await http.post(join, json={"name": name})).status_code
                  for label, name in BLANK_NAMES.items()}
        players = (await http.get(f"/api/rooms/{host['room']}")).json()["players"]
    took = time.monotonic() - t0
    by_answer: dict[str, list[str]] = {}
    for label, answer in looks.items():
        code = answer.json()["detail"]["code"] if answer.status_code == 409 else ""
        by_answer.setdefault(f"{answer.status_code} {code}".strip(), []).append(label)
    seated = len(players) - 1  # the host aside
    rows = [{"probe": f'"Omar" joins, then "Omar" + each of {", ".join(LOOK_ALIKES)}; blank '
                      f'names {", ".join(BLANK_NAMES)}',
             "result": f"Omar {first}; {seated} seated of {1 + len(LOOK_ALIKES)} Omars ("
                       + "; ".join(f"{k}: {', '.join(v)}" for k, v in by_answer.items())
                       + f"); blank names: {counted(blanks.values())}",
             "time": f"{took:.2f} s", "rss": "-", "ping": pinger.p99(t0),
             "facts": {"first": first, "seated": seated, "names": [p["name"] for p in players],
                       "look_alikes": {k: v.status_code for k, v in looks.items()},
                       "blanks": blanks}}]

    seats, living = await shared.day()
    room, ws_url = seats[0]["room"], url.replace("http", "ws")
    writers = [await connect(ws_url, room, seats[s]["token"]) for s in living[:len(BAD_LINES) + 1]]
    t1 = time.monotonic()
    replies = {label: await w.request({"type": "chat", "text": text})
               for w, (label, text) in zip(writers, BAD_LINES.items())}
    plain = await writers[-1].request({"type": "chat", "text": "a plain line"})
    took = time.monotonic() - t1
    for w in writers:
        await w.close()
    refused = {k: r.get("code") for k, r in replies.items() if r["type"] == "error"}
    rows.append({"probe": "chat lines: " + ", ".join(BAD_LINES) + " (each from a seat of its own)",
                 "result": f"{len(refused)}/{len(BAD_LINES)} refused ({counted(refused.values())})"
                           f"; a plain line: {plain['type']}",
                 "time": f"{took * 1000:.0f} ms", "rss": "-", "ping": pinger.p99(t1),
                 "facts": {"replies": {k: [r["type"], r.get("code")] for k, r in replies.items()},
                           "plain": plain["type"]}})
    return rows


async def probe_review(stack, url: str, pinger: Pinger, config: Config,
                       shared: Shared) -> list[dict]:
    limit, guesser = config.lookup_failures_per_address, next(_addresses)
    t0 = time.monotonic()
    async with client(url, guesser) as http:
        tried = [(await http.get(f"/api/rooms/{unknown_code()}/review")).status_code
                 for _ in range(limit + 5)]
    took = time.monotonic() - t0
    finished = await shared.finished()
    room = finished["room"]
    async with client(url, guesser) as http:
        real = (await http.get(f"/api/rooms/{room}/review")).status_code
    rows = [{"probe": f"{limit + 5} reviews of unknown codes from one address "
                      f"(WW_LOOKUP_FAILURES_PER_ADDRESS={limit})",
             "result": f"{counted(tried)}; then a finished room's review from that address: {real}",
             "time": f"{took:.2f} s ({len(tried) / took:.0f}/s)", "rss": "-",
             "ping": pinger.p99(t0),
             "facts": {"statuses": tried, "real_from_guesser": real}}]
    t1, rss0 = time.monotonic(), rss_mb(stack)
    async with client(url) as http:
        answer = await http.get(f"/api/rooms/{room}/review")
    took = time.monotonic() - t1
    body = answer.json()
    rows.append({"probe": f"a finished table's review ({finished['presence_written']} presence "
                          f"changes written in its lobby)",
                 "result": f"{answer.status_code}: {len(body['events'])} events, "
                           f"{len(answer.content) / 1000:.0f} KB, truncated {body['truncated']} "
                           f"(at most {REVIEW_EVENTS:,} events)",
                 "time": f"{took * 1000:.0f} ms", "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB",
                 "ping": pinger.p99(t1),
                 "facts": {"status": answer.status_code, "events": len(body["events"]),
                           "bytes": len(answer.content), "truncated": body["truncated"],
                           "written": finished["presence_written"]}})
    return rows


async def rooms_stored(config: Config) -> int:
    """Rooms of the stack's prefix in Redis (their directory hashes)."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(config.redis_url)
    try:
        return len([k async for k in r.scan_iter(match=Keys(config.prefix).room("??????"),
                                                 count=1000)])
    finally:
        await r.aclose()


async def probe_again(stack, url: str, pinger: Pinger, config: Config, shared: Shared,
                      clicks: int) -> dict:
    finished = await shared.finished()
    room, host = finished["room"], finished["seats"][0]
    rooms0, t0 = await rooms_stored(config), time.monotonic()
    async with client(url) as http:
        surrogate = await http.post(f"/api/rooms/{room}/again", content=b'{"token": "\\ud800x"}',
                                    headers={"content-type": "application/json"})
        answers = await asyncio.gather(*(
            http.post(f"/api/rooms/{room}/again", json={"token": host["token"]})
            for _ in range(clicks)))
        took = time.monotonic() - t0
        following = (await http.get(f"/api/rooms/{room}")).json()["next"]
    made = await rooms_stored(config) - rooms0
    rooms = sorted({a.json()["room"] for a in answers if a.status_code == 200})
    return {"probe": f"`again` with a lone surrogate in its token; then {clicks} concurrent "
                     f"`again` clicks on a finished table (its lobby closed at its maximum age, "
                     f"{finished['closed_after']:.0f} s)",
            "result": f"the surrogate: {surrogate.status_code} "
                      f"{(surrogate.json().get('detail') or {}).get('code', '')}; the clicks: "
                      f"{counted(a.status_code for a in answers)}, naming {len(rooms)} room(s); "
                      f"{made} room(s) stored; the table's `next`: "
                      f"{'the same' if rooms == [following] else following}",
            "time": f"{took * 1000:.0f} ms", "rss": "-", "ping": pinger.p99(t0),
            "facts": {"surrogate": surrogate.status_code,
                      "clicks": [a.status_code for a in answers], "rooms": rooms,
                      "stored": made, "next": following}}


async def probe_flood(stack, url: str, pinger: Pinger, shared: Shared, count: int,
                      seconds: float, window: float) -> dict:
    """`count` chat commands of one seat's socket, spread over `seconds` (in batches of 50), then
    the rest of `window`; then a quiet window as long, for the same processes' CPU at rest."""
    seats, living = await shared.day()
    seat, room = living[-1], seats[0]["room"]
    sock = await connect(url.replace("http", "ws"), room, seats[seat]["token"])
    burst, rate = RATE_LIMITS["chat"]

    def answered() -> list[dict]:
        return [f for f in sock.frames if f.get("type") in ("ack", "error")
                and str(f.get("id", "")).startswith("flood")]

    async def counters() -> tuple[float, float]:  # chat frames read; refused by the socket's copy
        return (await metric(url, "ww_ws_messages_in_total", 'type="chat"'),
                await metric(url, "ww_ws_refused_here_total", 'type="chat"'))
    read0, here0 = await counters()
    hosts0, gw0, rss0 = cpu_s(stack, "ray-hosts"), cpu_s(stack), rss_mb(stack)
    t0 = time.monotonic()
    for start in range(0, count, 50):
        for i in range(start, min(count, start + 50)):
            await sock.send_raw(orjson.dumps({"type": "chat", "id": f"flood{i}",
                                              "text": f"flood {i}"}).decode())
        await asyncio.sleep(max(0.0, t0 + seconds * (start + 50) / count - time.monotonic()))
    sent_in = time.monotonic() - t0
    while len(answered()) < count and not sock._reader.done() \
            and time.monotonic() - t0 < window + 120:
        await asyncio.sleep(0.1)  # polling the socket's record for the last reply
    answered_in = time.monotonic() - t0
    closed = sock.ws.close_code if sock._reader.done() else None
    await asyncio.sleep(max(0.0, window - answered_in))  # the rest of the window: its aftermath
    spent = time.monotonic() - t0
    hosts, gateway = cpu_s(stack, "ray-hosts") - hosts0, cpu_s(stack) - gw0
    read, here = (a - b for a, b in zip(await counters(), (read0, here0)))
    replies = answered()
    await sock.close()
    quiet0, quiet_gw0, t1 = cpu_s(stack, "ray-hosts"), cpu_s(stack), time.monotonic()
    await asyncio.sleep(spent)  # as long again, nothing sent: the same processes at rest
    quiet, quiet_gw = cpu_s(stack, "ray-hosts") - quiet0, cpu_s(stack) - quiet_gw0
    acked = sum(r["type"] == "ack" for r in replies)
    limited = sum(r.get("code") == "rate_limited" for r in replies)
    reached = read - here
    # What the socket's copy lets through at most: its burst, then the rate, while frames came.
    allowed = burst * LOCAL_BURST_FACTOR + rate * answered_in
    return {"probe": f"one seat's socket sends {count:,} chat commands in {seconds:g} s, as fast "
                     f"as it may (before, issue 24: 5,000 refusals/s cost a host 2.8 s of CPU in "
                     f"10 s)",
            "result": f"sent in {sent_in:.2f} s; "
                      + (f"all answered in {answered_in:.2f} s" if closed is None else
                         f"the socket closed {closed} after {len(replies)} answers "
                         f"({answered_in:.2f} s)")
                      + f": {read:.0f} read, {here:.0f} refused by the gateway "
                      f"(ww_ws_refused_here_total), {reached:.0f} reached the room ({acked} "
                      f"acked); {limited} x rate_limited answered",
            "time": f"{spent:.1f} s window",
            "cpu": f"hosts {hosts:.2f} s, gateway {gateway:.2f} s (the next {spent:.0f} s, quiet: "
                   f"{quiet:.2f} s, {quiet_gw:.2f} s)",
            "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": pinger.p99(t0, t1),
            "facts": {"sent": count, "read": read, "answered": len(replies), "acked": acked,
                      "closed": closed, "rate_limited": limited, "refused_here": here,
                      "reached": reached, "allowed_through": allowed, "answered_in": answered_in,
                      "host_cpu": hosts, "gateway_cpu": gateway, "quiet_host_cpu": quiet,
                      "quiet_gateway_cpu": quiet_gw, "window": spent}}


async def raw_answer(port: int, request: bytes) -> tuple[int | None, dict]:
    """Send bytes as they are; the status and headers of what comes back (None: nothing)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = b""
    try:
        writer.write(request)
        await writer.drain()
        while b"\r\n\r\n" not in head:
            chunk = await asyncio.wait_for(reader.read(65536), 10)
            if not chunk:
                break
            head += chunk
    except (OSError, asyncio.TimeoutError):
        pass
    finally:
        writer.close()
    status_line, *lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    parts = status_line.split()
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return status, {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}


async def probe_headers500(stack, url: str, port: int, pinger: Pinger) -> list[dict]:
    wanted = [name.decode() for name, _ in SECURITY_HEADERS]
    t0 = time.monotonic()
    answers: dict[str, tuple[int | None, dict]] = {
        "uvicorn's 400 (a malformed request line)":
            await raw_answer(port, b"NOT A REQUEST\r\n\r\n"),
        "431 (a 17 KiB header)": await raw_answer(
            port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * (17 << 10) + b"\r\n\r\n"),
    }
    as_json = {"content-type": "application/json"}
    requests = {
        "404 (an unknown room)": ("GET", f"/api/rooms/{unknown_code()}", {}),
        "404 (no such file)": ("GET", "/no-such-file.js", {}),
        "404 (/ws/ without the upgrade)": ("GET", "/ws/ABCDEF", {}),
        "405 (DELETE /api/rooms)": ("DELETE", "/api/rooms", {}),
        "413 (a 9 KB body)": ("POST", "/api/rooms", {"content": b"x" * 9000, "headers": as_json}),
        "422 (a lone surrogate)": ("POST", "/api/rooms",
                                   {"content": b'{"name": "\\ud800"}', "headers": as_json}),
        "JSON nested 3,000 deep": ("POST", "/api/rooms", {"content": b"[" * 3000,
                                                          "headers": as_json}),
    }
    async with client(url) as http:
        for label, (method, path, kwargs) in requests.items():
            answer = await http.request(method, path, **kwargs)
            answers[label] = (answer.status_code, {k.lower(): v for k, v in answer.headers.items()})
        no_token = (await http.get("/metrics")).status_code
        wrong = (await http.get("/metrics", headers={"Authorization": "Bearer wrong"})).status_code
        scraped = await http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    took = time.monotonic() - t0
    present = {label: [h for h in wanted if h in headers]
               for label, (_, headers) in answers.items()}
    whole = [f"{label}: {answers[label][0]}" for label, got in present.items()
             if len(got) == len(wanted)]
    short = [f"{label}: {answers[label][0]}, missing {', '.join(h for h in wanted if h not in got)}"
             for label, got in present.items() if len(got) < len(wanted)]
    metrics_ok = scraped.status_code == 200 and "ww_ws_open_sockets" in scraped.text
    return [{"probe": f"the {len(wanted)} security headers (gateway/headers.py) on refusals",
             "result": f"all {len(wanted)} on: " + "; ".join(whole)
                       + (f". MISSING on: {'; '.join(short)}" if short else ""),
             "time": f"{took:.2f} s", "rss": "-", "ping": pinger.p99(t0),
             "facts": {"statuses": {k: v[0] for k, v in answers.items()}, "present": present,
                       "wanted": wanted}},
            {"probe": "/metrics with WW_METRICS_TOKEN set: no token, a wrong one, the token",
             "result": f"{no_token}, {wrong}, {scraped.status_code}"
                       f"{' (the metrics)' if metrics_ok else ''}",
             "time": "-", "rss": "-", "ping": "-",
             "facts": {"no_token": no_token, "wrong": wrong, "token": scraped.status_code,
                       "metrics": metrics_ok}}]


# ---------------------------------------------------------------------------- the run

def stack_env(args) -> dict:
    """The probes' stack: the per-address limits as shipped (Config's defaults, over LOAD_LIMITS'
    zeros) in one window for the whole run, a short lobby age, a metrics token, and X-Forwarded-For
    believed from 127.0.0.1 (the probes' clients, and the proxy probe's HAProxy)."""
    shipped = Config()
    limits = {var: str(getattr(shipped, name)) for var, name in (
        ("WW_ROOMS_PER_ADDRESS", "rooms_per_address"),
        ("WW_LOOKUP_FAILURES_PER_ADDRESS", "lookup_failures_per_address"),
        ("WW_QUICK_PLAYS_PER_ADDRESS", "quick_plays_per_address"),
        ("WW_JOINS_PER_ADDRESS", "joins_per_address"),
        ("WW_OPEN_LOBBIES_PER_ADDRESS", "open_lobbies_per_address"),
        ("WW_LOBBY_SEATS_PER_ADDRESS", "lobby_seats_per_address"))}
    return {**limits, "WW_LIMIT_WINDOW": "86400", "WW_LOBBY_MAX_AGE": str(args.lobby_max_age),
            "WW_METRICS_TOKEN": METRICS_TOKEN, "FORWARDED_ALLOW_IPS": "127.0.0.1"}


async def run(args) -> list[dict]:
    only = set(args.only.split(","))
    env = stack_env(args)
    with real_stack(n=1, games_per_actor=GAMES_PER_ACTOR, durations=DURATIONS, env=env) as stack:
        url = stack.urls[0]
        port = int(url.rsplit(":", 1)[1])
        # The cluster's settings, as its gateway has them (a RoomClient must match them).
        config = Config.from_env(
            {**LOAD_LIMITS, **env, **{f"WW_DURATION_{k.upper()}": str(v) for k, v in DURATIONS.items()}},
            redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            ray_address=stack.ray_address, prefix=stack.prefix, games_per_actor=GAMES_PER_ACTOR)
        try:
            return await probes(args, only, stack, url, port, config)
        finally:
            ray.shutdown()  # before the stack's head goes: a driver left behind ends the process


async def probe(name: str, args, stack, url: str, port: int, rc: RoomClient, pinger: Pinger,
                config: Config, shared: Shared) -> dict | list[dict]:
    if name == "headers":
        return await probe_headers(stack, url, port, pinger)
    if name == "readers":
        return await probe_readers(stack, url, port, rc, pinger, args.readers, args.lines,
                                   args.rate, args.waves)
    if name == "oracle":
        return await probe_oracle(stack, url, pinger)
    if name == "origin":
        return await probe_origin(stack, url, pinger)
    if name == "forbidden":
        return await probe_forbidden(stack, url, pinger, args.watchers)
    if name == "proxy":
        return await probe_proxy(stack, url, port, pinger, config)
    if name == "lobbies":
        return await probe_lobbies(stack, url, pinger, config, args.lobby_max_age)
    if name == "names":
        return await probe_names(stack, url, pinger, shared)
    if name == "review":
        return await probe_review(stack, url, pinger, config, shared)
    if name == "again":
        return await probe_again(stack, url, pinger, config, shared, args.clicks)
    if name == "flood":
        return await probe_flood(stack, url, pinger, shared, args.flood, args.flood_seconds,
                                 args.flood_window)
    assert name == "headers500", name
    return await probe_headers500(stack, url, port, pinger)


async def probes(args, only: set, stack, url: str, port: int, config: Config) -> list[dict]:
    async with RoomClient(config) as rc:
        quiet = await table(url, PING_SOCKETS, "198.51.100.10")
        sockets = [await connect(url.replace("http", "ws"), s["room"], s["token"])
                   for s in quiet]
        pinger = Pinger(sockets)
        shared = Shared(url, rc, args.lobby_max_age, args.review_events)
        t_idle = time.monotonic()
        await asyncio.sleep(args.idle)
        rows = [{"name": "idle", "probe": "idle", "result": "-", "time": f"{args.idle:g} s",
                 "rss": f"{rss_mb(stack):.0f} MB", "ping": pinger.p99(t_idle)}]
        try:
            for name in [p for p in PROBES if p in only]:
                if name not in ("headers", "readers"):  # after the probes that measure alone
                    if only & {"review", "again"}:
                        shared.finished()  # its lobby ages while the probes run
                    if only & {"names", "flood"}:
                        shared.day()
                found = await probe(name, args, stack, url, port, rc, pinger, config, shared)
                for row in found if isinstance(found, list) else [found]:
                    rows.append({"name": name, **row})
        finally:
            await shared.close()
            await pinger.stop()
            for s in sockets:
                await s.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(PROBES), help="comma separated, of: "
                        + ", ".join(PROBES) + " (default: all)")
    parser.add_argument("--readers", type=int, default=168)
    parser.add_argument("--lines", type=int, default=2400, help="day chat lines before the probe")
    parser.add_argument("--rate", type=float, default=100, help="day chat lines a second meanwhile")
    parser.add_argument("--waves", type=int, default=2, help="the readers' probe, again and again")
    parser.add_argument("--watchers", type=int, default=50)
    parser.add_argument("--idle", type=float, default=10, help="seconds of the idle pings")
    parser.add_argument("--lobby-max-age", type=int, default=20,
                        help="the stack's WW_LOBBY_MAX_AGE (seconds)")
    parser.add_argument("--flood", type=int, default=5000, help="chat commands of the flood")
    parser.add_argument("--flood-seconds", type=float, default=1.0,
                        help="the flood's commands are spread over this long")
    parser.add_argument("--flood-window", type=float, default=10,
                        help="seconds the flood's CPU is counted over, from its first command")
    parser.add_argument("--clicks", type=int, default=5, help="concurrent `again` clicks")
    parser.add_argument("--review-events", type=int, default=0,
                        help="presence changes written into the finished table's lobby (past "
                             f"{REVIEW_EVENTS:,}, its review is truncated)")
    parser.add_argument("--json", type=Path, help="also write the rows, with their raw figures")
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    unknown = set(args.only.split(",")) - set(PROBES)
    if unknown:
        parser.error(f"unknown probes {', '.join(sorted(unknown))}; known: {', '.join(PROBES)}")
    rows = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    keys = ["probe", "result", "time", "cpu", "rss", "ping", "healthz"]
    print("| " + " | ".join(keys) + " |", flush=True)
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "-")) for k in keys) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
