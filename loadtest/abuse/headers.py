"""headers: one `GET /healthz` whose `X-A` header is 128 x 1 MiB of `a`, sent as fast as the
gateway takes it; also the gateway's CPU seconds and /healthz's p99 meanwhile."""
from __future__ import annotations

import asyncio
import time

import httpx

from loadtest.abuse.common import Target, cpu_s, rss_mb
from loadtest.measure import percentile


ALONE = True  # measured before the shared rooms are made


async def run(t: Target) -> dict:
    stack, url, port, pinger = t.stack, t.url, t.port, t.pinger
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
    return {"probe": "128 MiB header", "result": f"{answer[:12].decode() or 'reset'} "
            f"({outcome} after {sent >> 20} MiB sent)", "time": f"{cut:.2f} s",
            "cpu": f"{cpu_s(stack) - cpu0:.2f} s", "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB",
            "ping": pinger.p99(t0), "healthz": f"{percentile(health, 99) * 1000:.0f} ms"}
