"""proxy: the shipped HAProxy config (deploy/haproxy/haproxy.cfg, its bind and servers rewritten)
in front of the gateway; client A (from 127.0.0.2) tries unknown codes until 429, then with a
forged X-Forwarded-For; client B (127.0.0.3) joins a room."""
from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from devstack.processes import stop
from devstack.stack import HTTP_TIMEOUT
from loadtest.abuse.common import Target, counted, next_address, rss_mb, table, unknown_code
from loadtest.stack import GATEWAY_PORT, free_port, haproxy_config


async def run(t: Target) -> dict:
    """Per-client limits behind the shipped HAProxy: two clients from two loopback addresses."""
    stack, url, port, config = t.stack, t.url, t.port, t.config
    pinger = t.pinger
    haproxy = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists()
                                          else None)
    if haproxy is None:
        return {"probe": "per-client limits behind HAProxy", "result": "haproxy not installed"}
    listen = free_port()
    text = haproxy_config(listen, [("gateway1", "127.0.0.1")]).replace(
        f"127.0.0.1:{GATEWAY_PORT}", f"127.0.0.1:{port}")
    (owner,) = await table(url, 1, next_address())  # the room B joins (made directly)
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
