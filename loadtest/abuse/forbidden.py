"""forbidden: `--watchers` spectators watching when the host forbids spectators."""
from __future__ import annotations

import asyncio
import time

import orjson

from devstack.stack import connect
from loadtest.abuse.common import Target, table


def add_arguments(parser) -> None:
    parser.add_argument("--watchers", type=int, default=50)


async def run(t: Target) -> dict:
    url, pinger, watchers = t.url, t.pinger, t.args.watchers
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
