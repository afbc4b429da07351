"""Issue 24's probes, measured once each against a private stack (loadtest/README.md, "Abuse:
headers and slow readers (issue 24)"):

    python -m loadtest.abuse [--only headers,readers,oracle,origin,forbidden] [--readers 168]

For each: refused or dropped, the time it took, the gateway's RSS before / after (psutil, the
gateway's process tree) and the ping -> ack p99 of seats of another room during the probe against
the same seats idle.

  headers    one `GET /healthz` whose `X-A` header is 128 x 1 MiB of `a`, sent as fast as the
             gateway takes it; also the gateway's CPU seconds and /healthz's p99 meanwhile
  readers    `--readers` sockets that say hello without `since` and never read (17 seats x 4
             sockets and the rest spectators, the most one room's spectators may be) in a room
             whose day chat already holds `--lines` lines and grows by `--rate` lines a second
  oracle     spectator hellos for unknown codes from one address, as fast as answered
  origin     a socket opened with another site's Origin
  forbidden  `--watchers` spectators watching when the host forbids spectators

The chat is written through `RoomClient` (the room itself), each seat's lines stamped 1 s apart
in the past as a gateway would stamp them (the per-seat rate limit is 1 line a second).
"""
from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # before anything imports ray
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import socket  # noqa: E402
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

from actors.client import RoomClient  # noqa: E402
from actors.config import Config  # noqa: E402
from loadtest.stack import LOAD_LIMITS, real_stack  # noqa: E402
from tests.stack import HTTP_TIMEOUT, connect  # noqa: E402

# Night and the election pass in a second each; the day's discussion lasts (the chat is by day).
DURATIONS = {"cupid": 1, "seer": 1, "wolves": 1, "witch": 1, "election": 1, "discussion": 900,
             "vote": 900, "tiebreak": 1, "hunter": 1, "successor": 1}
SEATS = 18
GAMES_PER_ACTOR = 50
PING_SOCKETS = 5  # seats of another room pinging (each at most 2 a second: the gateway's limit)
PING_EVERY = 0.6
TCP_ESTABLISHED = 1


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


def cpu_s(stack) -> float:
    total = 0.0
    for p in stack.components()["gateway"]:
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


def ws_frame(payload: bytes) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return b"\x81" + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


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


async def metric(url: str, name: str) -> float:
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        text = (await http.get(url + "/metrics")).text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))


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


async def run(args) -> list[dict]:
    only = set(args.only.split(","))
    env = {"WW_LOOKUP_FAILURES_PER_ADDRESS": "30"}
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


async def probes(args, only: set, stack, url: str, port: int, config: Config) -> list[dict]:
    async with RoomClient(config) as rc:
        quiet = await table(url, PING_SOCKETS, "198.51.100.10")
        sockets = [await connect(url.replace("http", "ws"), s["room"], s["token"])
                   for s in quiet]
        pinger = Pinger(sockets)
        t_idle = time.monotonic()
        await asyncio.sleep(10)
        rows = [{"probe": "idle", "result": "-", "time": "-", "rss": f"{rss_mb(stack):.0f} MB",
                 "ping": pinger.p99(t_idle)}]
        if "headers" in only:
            rows.append(await probe_headers(stack, url, port, pinger))
        if "readers" in only:
            rows += await probe_readers(stack, url, port, rc, pinger, args.readers, args.lines,
                                        args.rate, args.waves)
        if "oracle" in only:
            rows.append(await probe_oracle(stack, url, pinger))
        if "origin" in only:
            rows.append(await probe_origin(stack, url, pinger))
        if "forbidden" in only:
            rows.append(await probe_forbidden(stack, url, pinger, args.watchers))
        await pinger.stop()
        for s in sockets:
            await s.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="headers,readers,oracle,origin,forbidden")
    parser.add_argument("--readers", type=int, default=168)
    parser.add_argument("--lines", type=int, default=2400, help="day chat lines before the probe")
    parser.add_argument("--rate", type=float, default=100, help="day chat lines a second meanwhile")
    parser.add_argument("--waves", type=int, default=2, help="the readers' probe, again and again")
    parser.add_argument("--watchers", type=int, default=50)
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args))
    keys = ["probe", "result", "time", "cpu", "rss", "ping", "healthz"]
    print("| " + " | ".join(keys) + " |", flush=True)
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "-")) for k in keys) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
