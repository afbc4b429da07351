"""Issue 34's flood measurement: another room's ping p99, quiet and under a flood of `settings`
frames from `--flooders` sockets (36: the re-probe's flood, which took it from 6 ms to 3.5 s).

    python -m loadtest.flood [--flooders 36] [--quiet 20] [--seconds 20] [--json PATH]

On a private stack (loadtest/stack.py: a Ray head, one gateway, the shared Redis under a fresh
prefix): `--pingers` seats of a quiet room each ping every PING_EVERY s (the gateway answers
pings itself: their round trip is its event loop's latency). Over `--quiet` seconds they are
measured alone; then the flooders, seats of other lobbies that are not their host (the room
refuses their `settings`), each send `settings` frames as fast as their connection takes them
for `--seconds`, and the pings are measured again; then again with each flooder reconnecting at
once whenever it is closed (a fresh socket has fresh limits). The flooders run in a process of
their own, and so do the pingers (the measuring process's reads would delay them). Also the
gateway's and the hosts' CPU seconds in each window, the `settings` frames the gateway read and
refused itself (/metrics), and how the flooders' sockets ended.

Target (issue 34): the flood's ping p99 within 2x of the quiet one.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import httpx

from devstack.stack import HTTP_TIMEOUT, Client, connect
from loadtest.flooding import FLOODERS_PER_ROOM, flood_window
from loadtest.stack import real_stack, tear_down_on_signals

GAMES_PER_ACTOR = 50
PING_EVERY = 0.6  # per pinging seat: well inside the gateway's ping limit (2 a second)


class Pinger:
    """Seats of a quiet room, each pinging; (sent at, seconds to the ack) of every ping."""

    def __init__(self, sockets: list[Client]) -> None:
        self.samples: list[tuple[float, float]] = []
        self.lost = 0  # pings answered with anything but an ack
        self._tasks = [asyncio.create_task(self._run(s)) for s in sockets]

    async def _run(self, sock: Client) -> None:
        while True:
            started = time.monotonic()
            reply = await sock.request({"type": "ping"}, timeout=120)
            if reply["type"] == "ack":
                self.samples.append((started, time.monotonic() - started))
            else:
                self.lost += 1
            await asyncio.sleep(max(0.0, PING_EVERY - (time.monotonic() - started)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def ping_process(ws_url: str, targets: list[tuple[str, str]], ready, stop, results) -> None:
    """The pingers' process (the measuring one's loop does blocking reads: psutil, /metrics):
    ping from the seats until `stop`; then put (sent at, seconds to the ack) of every ping."""
    results.put(asyncio.run(_ping(ws_url, targets, ready, stop)))


async def _ping(ws_url: str, targets: list[tuple[str, str]], ready, stop) -> list:
    sockets = [await connect(ws_url, room, token) for room, token in targets]
    pinger = Pinger(sockets)
    ready.set()
    await asyncio.get_running_loop().run_in_executor(None, stop.wait)
    await pinger.stop()
    for sock in sockets:
        await sock.close()
    return pinger.samples


def percentile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(len(values) * fraction))] if values else float("nan")


async def seats(url: str, guests: int) -> list[dict]:
    """A new lobby's seats: its host's, then `guests` more."""
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT) as http:
        host = (await http.post("/api/rooms", json={"name": "Host"})).json()
        return [host] + [(await http.post(f"/api/rooms/{host['room']}/join",
                                          json={"name": f"P{i}"})).json()
                         for i in range(guests)]


async def settings_counters(url: str) -> tuple[float, float]:
    """The gateway's `settings` frames read, and refused by the sockets' own limits."""
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT) as http:
        text = (await http.get(url + "/metrics")).text

    def counter(name: str) -> float:
        series = name + '{type="settings"} '
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(series))
    return counter("ww_ws_messages_in_total"), counter("ww_ws_refused_here_total")


def cpu_seconds(stack, component: str) -> float:
    total = 0.0
    for p in stack.component(component):
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except Exception:  # noqa: BLE001  a process that ended meanwhile
            pass
    return total


# ---------------------------------------------------------------------------- the run

async def run(args) -> list[dict]:
    with real_stack(n=1, games_per_actor=GAMES_PER_ACTOR) as stack:
        url = stack.urls[0]
        ws_url = url.replace("http", "ws")
        quiet_room = [(s["room"], s["token"]) for s in await seats(url, args.pingers - 1)]
        targets: list[tuple[str, str]] = []
        while len(targets) < args.flooders:
            lobby = await seats(url, min(FLOODERS_PER_ROOM, args.flooders - len(targets)))
            targets += [(s["room"], s["token"]) for s in lobby[1:]]
        spawn = multiprocessing.get_context("spawn")
        ready, stop, results = spawn.Event(), spawn.Event(), spawn.Queue()
        pinging = spawn.Process(target=ping_process,
                                args=(ws_url, quiet_room, ready, stop, results))
        pinging.start()
        loop = asyncio.get_running_loop()
        windows: list[dict] = []
        try:
            if not await loop.run_in_executor(None, ready.wait, 120):
                raise TimeoutError("the pingers did not connect")
            await asyncio.sleep(2)  # the pingers' first round: their sockets warm
            for name, reconnect in [("quiet", None), ("flood", False)] + \
                    ([("flood, reconnecting", True)] if args.reconnect else []):
                gateway0, hosts0 = cpu_seconds(stack, "gateway"), cpu_seconds(stack, "ray-hosts")
                read0, refused0 = await settings_counters(url)
                if reconnect is None:
                    started = time.monotonic()
                    await asyncio.sleep(args.quiet)  # the quiet window: pings alone
                    ended, stats = time.monotonic(), {}
                else:
                    started, ended, stats = await flood_window(stack, url, targets, args.seconds,
                                                               reconnect)
                read, refused = (a - b for a, b in zip(await settings_counters(url),
                                                        (read0, refused0)))
                windows.append({"window": name, "started": started, "ended": ended,
                                "gateway_cpu_s": cpu_seconds(stack, "gateway") - gateway0,
                                "hosts_cpu_s": cpu_seconds(stack, "ray-hosts") - hosts0,
                                "settings_read": read, "refused_by_gateway": refused, **stats})
                await asyncio.sleep(6)  # the flooders' sockets are reset (5 s after their close)
        finally:
            stop.set()
            samples = await loop.run_in_executor(None, results.get, True, 60)
            await loop.run_in_executor(None, pinging.join, 10)
            if pinging.is_alive():
                pinging.kill()
    return [with_pings(w, samples) for w in windows]


def with_pings(window: dict, samples: list[tuple[float, float]]) -> dict:
    """The window's row: its pings' percentiles, and the slowest ones (ms, seconds into it)."""
    started, ended = window.pop("started"), window.pop("ended")
    inside = [(s, t - started) for t, s in samples if started <= t <= ended]
    pings = sorted(s for s, _ in inside)
    return {**window, "seconds": ended - started, "pings": len(pings),
            "p50_ms": percentile(pings, 0.5) * 1000, "p99_ms": percentile(pings, 0.99) * 1000,
            "max_ms": (pings[-1] if pings else float("nan")) * 1000,
            "worst": [(round(s * 1000, 1), round(at, 1)) for s, at in sorted(inside)[-5:]]}


def table(rows: list[dict], flooders: int) -> str:
    quiet = rows[0]["p99_ms"]
    lines = ["| window | pings | ping p50 | ping p99 | p99 / quiet | max | gateway CPU | "
             "hosts CPU | settings read by the gateway | refused by the gateway | "
             "flooders' frames sent | flooders' sockets: closes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        flood = r["window"] != "quiet"
        closes = ", ".join(f"{n} x {code}" for code, n in sorted(r.get("closes", {}).items()))
        lines.append(
            f"| {r['window']}{f' ({flooders} sockets)' if flood else ''}, {r['seconds']:.0f} s "
            f"| {r['pings']} | {r['p50_ms']:.1f} ms | {r['p99_ms']:.1f} ms "
            f"| {r['p99_ms'] / quiet:.2f} | {r['max_ms']:.1f} ms | {r['gateway_cpu_s']:.2f} s "
            f"| {r['hosts_cpu_s']:.2f} s | {r['settings_read']:.0f} | "
            f"{r['refused_by_gateway']:.0f} | {r.get('sent', 0):,} | "
            + (f"{r['sockets']} opened: {closes or '-'}; {r['open_at_end']} open at the end"
               if flood else "-") + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    # Before the stack starts any Ray process: all of them on loopback, no token auth for the
    # private head (as devstack/ray_head.py sets them).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flooders", type=int, default=36)
    parser.add_argument("--pingers", type=int, default=5, help="pinging seats of the quiet room")
    parser.add_argument("--quiet", type=float, default=20, help="seconds of pings alone")
    parser.add_argument("--seconds", type=float, default=20, help="seconds of each flood")
    parser.add_argument("--no-reconnect", dest="reconnect", action="store_false",
                        help="skip the flood whose sockets reconnect once closed")
    parser.add_argument("--json", type=Path, help="also write the rows")
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    rows = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(table(rows, args.flooders), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
