"""origin: a socket opened with another site's Origin."""
from __future__ import annotations

import time

from loadtest.abuse.common import Target, table


async def run(t: Target) -> dict:
    url, pinger = t.url, t.pinger
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
