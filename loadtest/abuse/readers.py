"""readers: `--readers` sockets that say hello without `since` and never read (17 seats x 4
sockets and the rest spectators, the most one room's spectators may be) in a room whose day chat
already holds `--lines` lines and grows by `--rate` lines a second.

The chat is written through `RoomClient` (the room itself), each seat's lines stamped 1 s apart in
the past as a gateway would stamp them (the per-seat rate limit is 1 line a second). By default
the room grows as fast as its living seats can make it through a gateway, each at the chat
limit's rate (17 lines a second at most); a higher `--rate` is a room no client can make, which
measures the gateway's fan-out rather than an attack (the suite's first runs used 100). The honest
tables' window starts once the room holds its `--lines` (`attack_from`): 100 lines at a time
straight into a room is the probe's shortcut, not a client's doing."""
from __future__ import annotations

import asyncio
import socket
import statistics
import struct
import time
from pathlib import Path

import orjson

from actors.client import RoomClient
from actors.room import RATE_LIMITS
from devstack.stack import connect, ws_frame
from loadtest.abuse.common import Target, day_room, metric, rss_mb


TCP_ESTABLISHED = 1
ALONE = True  # measured before the shared rooms are made


def add_arguments(parser) -> None:
    parser.add_argument("--readers", type=int, default=168)
    parser.add_argument("--lines", type=int, default=2400, help="day chat lines before the probe")
    parser.add_argument("--rate", type=float, default=None,
                        help="day chat lines a second meanwhile (default: the living seats', "
                             "each at the chat limit's rate)")
    parser.add_argument("--waves", type=int, default=2, help="the readers' probe, again and again")


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
    """Reads the 101 and nothing more (a default receive buffer: a careless client, not a tuned
    one)."""
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


async def run(t: Target) -> list[dict]:
    stack, url, port, rc, pinger = t.stack, t.url, t.port, t.rc, t.pinger
    readers, lines, rate, waves = t.args.readers, t.args.lines, t.args.rate, t.args.waves
    seats, living = await day_room(url, rc, "198.51.100.20")
    rate = rate or len(living) * RATE_LIMITS["chat"][1]
    room = seats[0]["room"]
    chat = Chat(rc, room, living)
    await chat.lines(lines)
    reader = await connect(url.replace("http", "ws"), room, seats[1]["token"])
    sent = len(orjson.dumps(reader.welcome))
    talking = asyncio.create_task(chat.steady(rate))
    t_busy = time.monotonic()
    await asyncio.sleep(10)
    # The honest load's window starts here: `lines` lines written at once are no client's doing.
    rows = [{"attack_from": t_busy,
             "probe": f"busy room, no attack (chat {lines} lines + {rate:.0f}/s)",
             "result": f"welcome {sent / 1000:.0f} KB (chat lines left out: "
                       f"{reader.welcome['view']['chat_omitted']})",
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
        peak, peak_queued, sampled = rss_mb(stack), 0, 0.0
        while len(gone) < len(socks) and time.monotonic() - t0 < 600:
            for i, s in enumerate(socks):
                if i not in gone and not established(s):
                    gone[i] = time.monotonic() - t0
            # The RSS and /proc/net/tcp (hundreds of rows parsed) are read in a thread, once a
            # second: the probe's sockets are watched meanwhile.
            if time.monotonic() - sampled >= 1:
                sampled = time.monotonic()
                rss, (_, queued) = await asyncio.to_thread(
                    lambda: (rss_mb(stack), kernel_queue(port)))
                peak, peak_queued = max(peak, rss), max(peak_queued, queued)
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
