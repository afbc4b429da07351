"""Issue 36, part 1: the limit of room fan-out on this machine, in one run. Server CPU per
delivered frame and deliveries per second per server core, 18-socket rooms: bare servers and ours.

    .venv/bin/python -m loadtest.fanout --rooms 20 --rounds 300

Each server runs in a subprocess of its own on 127.0.0.1 (a free port). The client is this
process (one asyncio loop, `websockets` client): R rooms x 18 sockets; a round is one message per
room, sent by one of its sockets in turn, that the server sends to all 18 sockets of the room; the
next round starts when every frame of this one has arrived. Server CPU is the user + system
seconds of the server's process tree (granian's workers included) over the measured rounds; the
second figure takes out what the server spends idle (IDLE_SECONDS with every socket open and
nothing sent, before the measure: keepalive pings, timers, Ray's threads), which a slow round
rate on a busy box spreads over fewer frames.

Servers: a minimal ASGI app (`app` below: rooms in an in-process dict, no JSON, no checks) under
uvicorn with `--ws websockets` and `--ws wsproto`, the same app under granian (`--interface asgi`)
and its twin on granian's own interface (`rsgi_app`, `--interface rsgi`), and a minimal picows
server (`python -m loadtest.fanout --serve-picows PORT`). A server whose package is not importable
is skipped with a note.

Our gateway: the real stack (loadtest.stack.real_stack: one `werewolf serve` gateway, a private
Ray head, the shared Redis under a random prefix), 18 seats per room in a started game's day; a
round is one chat line per room from a living seat in turn (paced by the chat limit), the `chat`
event fanned out to the 18 sockets; only those event frames count. Two rows: the gateway process
alone, and with the game hosts and Ray's own processes (the command's cost shared by its 18
frames). Redis is not counted: the shared one serves others too.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from websockets.asyncio.client import connect as ws_connect

from devstack.ray_head import free_port
from devstack.stack import connect, create_room, join_room
from loadtest.measure import SERVER, cores_between, cpu_seconds, family, total_cpu_seconds
from loadtest.stack import ROOT, raise_fd_limit, real_stack, tear_down_on_signals

SEATS = 18
IDLE_SECONDS = 5.0
SERVERS = ("uvicorn-websockets", "uvicorn-wsproto", "granian-asgi", "granian-rsgi", "picows",
           "gateway")
# The package each server needs, beside the app itself.
NEEDS = {"uvicorn-websockets": ("uvicorn", "websockets"), "uvicorn-wsproto": ("uvicorn", "wsproto"),
         "granian-asgi": ("granian",), "granian-rsgi": ("granian",), "picows": ("picows",),
         "gateway": ("ray",)}

# ------------------------------------------------------------------------------ the bare servers

ROOMS: dict[str, set] = {}


async def app(scope, receive, send) -> None:
    """The minimal ASGI room server: `/ws/ROOM`; a text frame goes to every socket of ROOM."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":  # startup
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "websocket":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    peers = ROOMS.setdefault(scope["path"].rsplit("/", 1)[-1], set())
    peers.add(send)
    try:
        while (message := await receive())["type"] == "websocket.receive":
            frame = {"type": "websocket.send", "text": message.get("text")}
            for peer in list(peers):
                await peer(frame)
    finally:
        peers.discard(send)


async def rsgi_app(scope, protocol) -> None:
    """The same room server on granian's own interface (RSGI)."""
    if scope.proto != "ws":
        protocol.response_empty(404, [])
        return
    transport = await protocol.accept()
    peers = ROOMS.setdefault(scope.path.rsplit("/", 1)[-1], set())
    peers.add(transport)
    try:
        while (message := await transport.receive()).kind == 2:  # a text frame
            for peer in list(peers):
                await peer.send_str(message.data)
    finally:
        peers.discard(transport)
        protocol.close(1000)


def serve_picows(port: int) -> None:
    from picows import WSListener, WSMsgType, ws_create_server

    rooms: dict[bytes, set] = {}

    class Seat(WSListener):
        def __init__(self, room: bytes) -> None:
            self.peers = rooms.setdefault(room, set())

        def on_ws_connected(self, transport) -> None:
            self.peers.add(transport)

        def on_ws_frame(self, transport, frame) -> None:
            if frame.msg_type == WSMsgType.TEXT:
                payload = frame.get_payload_as_bytes()
                for peer in self.peers:
                    peer.send(WSMsgType.TEXT, payload)
            elif frame.msg_type == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()

        def on_ws_disconnected(self, transport) -> None:
            self.peers.discard(transport)

    async def run() -> None:
        server = await ws_create_server(lambda request: Seat(request.path.rsplit(b"/", 1)[-1]),
                                        "127.0.0.1", port)
        await server.serve_forever()

    _run(run())


def _run(coro) -> None:
    try:
        import uvloop
        uvloop.run(coro)
    except ImportError:
        asyncio.run(coro)


def server_command(server: str, port: int) -> list[str]:
    bin_dir = Path(sys.executable).parent
    if server.startswith("granian-"):
        interface = server.split("-", 1)[1]
        return [str(bin_dir / "granian"), "--interface", interface, "--host", "127.0.0.1",
                "--port", str(port), "--workers", "1", "--log-level", "warning",
                f"loadtest.fanout:{'app' if interface == 'asgi' else 'rsgi_app'}"]
    if server == "picows":
        return [sys.executable, "-m", "loadtest.fanout", "--serve-picows", str(port)]
    ws = server.split("-", 1)[1]
    return [sys.executable, "-m", "uvicorn", "loadtest.fanout:app", "--host", "127.0.0.1",
            "--port", str(port), "--ws", ws, "--log-level", "warning"]


def missing(server: str) -> list[str]:
    return [m for m in NEEDS[server] if importlib.util.find_spec(m) is None]


# ------------------------------------------------------------------------------------ the client

class Counter:
    """Frames arrived at every client socket; wakes the round when they reach `target`."""

    def __init__(self) -> None:
        self.frames = 0
        self.target = 0
        self.reached = asyncio.Event()

    def add(self) -> None:
        self.frames += 1
        if self.frames >= self.target:
            self.reached.set()

    async def until(self, target: int, timeout: float) -> None:
        self.target = target
        self.reached.clear()
        if self.frames < target:
            await asyncio.wait_for(self.reached.wait(), timeout)


async def _read(ws, counter: Counter) -> None:
    async for _ in ws:
        counter.add()


async def _connect(url: str):
    deadline = time.monotonic() + 30
    while True:  # the server is still starting
        try:
            return await ws_connect(url, compression=None, max_queue=None)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def drive(port: int, server_pid: int, rooms: int, rounds: int, warmup: int,
                idle_seconds: float = IDLE_SECONDS, timeout: float = 60.0) -> dict:
    """Open rooms x 18 sockets, play `warmup` then `rounds` rounds; what the server spent."""
    sockets = [[await _connect(f"ws://127.0.0.1:{port}/ws/{r}") for _ in range(SEATS)]
               for r in range(rooms)]
    counter = Counter()
    readers = [asyncio.create_task(_read(ws, counter)) for room in sockets for ws in room]
    try:
        async def play(n: int, start: int) -> None:
            for i in range(start, start + n):
                await asyncio.gather(*(room[i % SEATS].send(f"line {i}") for room in sockets))
                await counter.until(counter.target + rooms * SEATS, timeout)

        await play(warmup, 0)  # connections settled, the servers' caches warm
        procs = family(server_pid)
        idle = await idle_cores(lambda: {"server": total_cpu_seconds(procs)}, idle_seconds)
        cpu, frames, started = total_cpu_seconds(procs), counter.frames, time.monotonic()
        client = time.process_time()
        await play(rounds, warmup)
        cpu, client = total_cpu_seconds(procs) - cpu, time.process_time() - client
        seconds, frames = time.monotonic() - started, counter.frames - frames
    finally:
        for task in readers:
            task.cancel()
        await asyncio.gather(*(ws.close() for room in sockets for ws in room),
                             return_exceptions=True)
    return figures(frames, seconds, cpu, client, idle["server"])


async def idle_cores(spent, seconds: float) -> dict:
    """name -> cores spent over `seconds` of nothing sent; `spent()`: name -> CPU seconds so far.
    No seconds: taken as none."""
    before, started = spent(), time.monotonic()
    if seconds <= 0:
        return dict.fromkeys(before, 0.0)
    await asyncio.sleep(seconds)
    after, seconds = spent(), time.monotonic() - started
    return {name: (after[name] - before[name]) / seconds for name in before}


def figures(frames: int, seconds: float, cpu: float, client: float, idle: float) -> dict:
    """`client`: CPU seconds of this process, to tell a client-bound rate; `idle`: the server's
    cores with nothing sent."""
    busy = max(0.0, cpu - idle * seconds)
    return {"frames": frames, "seconds": seconds, "server_cpu": cpu,
            "client_cores": client / seconds, "idle_cores": idle,
            "us_per_frame": 1e6 * cpu / frames if frames else None,
            "us_per_frame_busy": 1e6 * busy / frames if frames else None,
            "per_core_per_s": frames / cpu if cpu else None,
            "frames_per_s": frames / seconds, "server_cores": cpu / seconds}


# ---------------------------------------------------------------------------------- our gateway

# Wolves and villagers, the night over at once, a long day: every living seat may chat in "day",
# which all 18 sockets read (loadtest/capacity.py plays the same).
PLAY = {"roles": [], "durations": {"wolves": 1, "discussion": 900, "vote": 120},
        "rules": {"mayor": "none"}}
# A seat may chat once a second after a burst (actors.RATE_LIMITS): the room's living seats take
# turns, a round at most every LINE_GAP / living seats.
LINE_GAP = 1.05


def chats(client) -> int:
    return sum(f.get("kind") == "chat" for f in client.frames)


async def drive_gateway(running, rooms: int, rounds: int, warmup: int,
                        idle_seconds: float = IDLE_SECONDS, timeout: float = 120.0) -> dict:
    """The same rounds through the real stack: a chat line per room per round from one living
    seat, the gateway's `chat` event to all 18 sockets; only those event frames count."""
    url = running.urls[0]
    ws_url = url.replace("http", "ws", 1)
    tables = []
    for _ in range(rooms):
        seats = [await create_room(url, "P0")]
        seats += [await join_room(url, seats[0]["room"], f"P{n}") for n in range(1, SEATS)]
        tables.append([await connect(ws_url, s["room"], s["token"]) for s in seats])
    try:
        for table in tables:
            assert (await table[0].request({"type": "settings", **PLAY}))["type"] == "ack"
            assert (await table[0].request({"type": "start"}))["type"] == "ack"
        for table in tables:
            await table[0].wait_for(lambda f: f.get("phase") == "day.discussion", timeout)
        # The host's socket has seen the night's death before the day (another may lag).
        senders = [[c for c in table if c.seat not in {f.get("seat") for f in table[0].frames
                                                        if f.get("kind") == "death"}]
                   for table in tables]
        gap = LINE_GAP / min(len(s) for s in senders)
        clients = [c for table in tables for c in table]

        async def play(n: int, start: int) -> None:
            for i in range(start, start + n):
                began, text = time.monotonic(), f"line {i}"
                replies = await asyncio.gather(
                    *(s[i % len(s)].request({"type": "chat", "text": text}) for s in senders))
                assert all(r["type"] == "ack" for r in replies), replies
                await asyncio.gather(*(c.recv_until(lambda f: f.get("kind") == "chat"
                                                    and f.get("text") == text, timeout)
                                       for c in clients))
                await asyncio.sleep(max(0.0, began + gap - time.monotonic()))

        await play(warmup, 0)

        def spent() -> dict:
            cpu = {c: sum(t.values()) for c, t in cpu_seconds(running.components()).items()}
            return {"gateway": cpu["gateway"], "server": sum(cpu.get(c, 0.0) for c in SERVER)}

        idle = await idle_cores(spent, idle_seconds)
        before, delivered = cpu_seconds(running.components()), sum(map(chats, clients))
        started, client = time.monotonic(), time.process_time()
        await play(rounds, warmup)
        seconds = time.monotonic() - started
        cost = {c: cores * seconds for c, cores in
                cores_between(before, cpu_seconds(running.components()), seconds).items()}
        delivered = sum(map(chats, clients)) - delivered
        client = time.process_time() - client
    finally:
        await asyncio.gather(*(c.close() for table in tables for c in table),
                             return_exceptions=True)
    # Redis is left out: the shared one serves others too.
    return {"gateway": figures(delivered, seconds, cost["gateway"], client, idle["gateway"]),
            "gateway + game hosts + Ray": figures(delivered, seconds,
                                                  sum(cost.get(c, 0.0) for c in SERVER), client,
                                                  idle["server"])}


def measure_gateway(rooms: int, rounds: int, warmup: int, idle_seconds: float) -> list[dict]:
    with real_stack(1) as running:
        measured = asyncio.run(drive_gateway(running, rooms, rounds, warmup, idle_seconds))
    return [{"server": name, **row} for name, row in measured.items()]


def measure(server: str, rooms: int, rounds: int, warmup: int, idle_seconds: float) -> dict:
    port = free_port()
    process = subprocess.Popen(server_command(server, port), cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        return {"server": server,
                **asyncio.run(drive(port, process.pid, rooms, rounds, warmup, idle_seconds))}
    finally:  # the whole group: granian's workers outlive their parent otherwise
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def run(servers: list[str], rooms: int, rounds: int, warmup: int,
        idle_seconds: float = IDLE_SECONDS) -> dict:
    """The report: the machine, then a row per server measured and a note per server skipped."""
    report = {"python": sys.version.split()[0], "cores": os.cpu_count(), "rooms": rooms,
              "sockets": rooms * SEATS, "rounds": rounds, "rows": [], "skipped": {}}
    for server in servers:
        if absent := missing(server):
            report["skipped"][server] = f"not importable: {', '.join(absent)}"
            print(f"skipping {server}: {report['skipped'][server]}", file=sys.stderr)
            continue
        if server == "gateway":
            report["rows"] += measure_gateway(rooms, rounds, warmup, idle_seconds)
        else:
            report["rows"].append(measure(server, rooms, rounds, warmup, idle_seconds))
    return report


def render(report: dict) -> str:
    lines = [f"Python {report['python']}, {report['cores']} cores, client (one asyncio process) "
             f"on the same machine; {report['rooms']} rooms x {SEATS} sockets, "
             f"{report['rounds']} rounds", "",
             "| server | frames delivered | deliveries/s | server cores | µs server CPU / frame "
             "| idle server cores | µs / frame, idle out | deliveries/s per server core "
             "| client cores |", "|---|---|---|---|---|---|---|---|---|"]
    def num(value, spec: str) -> str:  # None: no CPU tick fell in a window that short
        return "n/a" if value is None else format(value, spec)

    for r in report["rows"]:
        lines.append(f"| {r['server']} | {r['frames']} | {r['frames_per_s']:,.0f} | "
                     f"{r['server_cores']:.2f} | {num(r['us_per_frame'], '.1f')} | "
                     f"{r['idle_cores']:.3f} | {num(r['us_per_frame_busy'], '.1f')} | "
                     f"{num(r['per_core_per_s'], ',.0f')} | {r['client_cores']:.2f} |")
    lines += [f"| {s} | skipped: {why} | | | | | | | |" for s, why in report["skipped"].items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rooms", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=300, help="measured rounds")
    ap.add_argument("--warmup", type=int, default=20, help="rounds before the measure")
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--idle", type=float, default=IDLE_SECONDS,
                    help="seconds of nothing sent to measure each server's idle cost (0: none)")
    ap.add_argument("--serve-picows", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve_picows:
        serve_picows(args.serve_picows)
        return 0
    raise_fd_limit()
    tear_down_on_signals()
    servers = args.servers.split(",")
    if unknown := set(servers) - set(SERVERS):
        ap.error(f"unknown servers: {', '.join(sorted(unknown))} (known: {', '.join(SERVERS)})")
    print(render(run(servers, args.rooms, args.rounds, args.warmup, args.idle)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
