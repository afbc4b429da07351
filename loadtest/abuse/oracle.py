"""oracle: spectator hellos for unknown codes from one address, as fast as answered."""
from __future__ import annotations

import time

import orjson

from loadtest.abuse.common import Target, rss_mb, table


async def run(t: Target) -> dict:
    stack, url, pinger = t.stack, t.url, t.pinger
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
