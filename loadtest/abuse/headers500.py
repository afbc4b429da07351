"""headers500: the security headers on uvicorn's own 400 and on the app's and the gateway's other
refusals; /metrics without and with its token."""
from __future__ import annotations

import asyncio
import time

from gateway.headers import SECURITY_HEADERS
from loadtest.abuse.common import METRICS_TOKEN, Target, client, unknown_code


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


async def run(t: Target) -> list[dict]:
    port, url, pinger = t.port, t.url, t.pinger
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
