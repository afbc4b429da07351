"""reports: in an 18-seat game by day, each living seat says 5 lines of 500 letters, then every
seat reports every other from an address of its own (306 reports: issue 34's amplification); the
operators read them all, a page at a time."""
from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from actors.store import Keys
from devstack.stack import connect
from loadtest.abuse.common import (ADMIN_SECRET, SEATS, Target, client, counted, cpu_s, day_room,
                                   next_address)

LINES, LETTERS = 5, 500  # each living seat's: the chat limit's burst, the longest line


async def run(t: Target) -> dict:
    """A report points at the lines instead of copying them, each seat and room holds a bounded
    number (past them, and past its address's burst, refused before the room's host is asked),
    and the operators' read is paged."""
    url, config = t.url, t.config
    seats, living = await day_room(url, t.rc, next_address())
    room = seats[0]["room"]
    sockets = [await connect(url.replace("http", "ws"), room, seats[s]["token"]) for s in living]
    for i, sock in enumerate(sockets):
        for _ in range(LINES):
            reply = await sock.request({"type": "chat", "text": chr(0x61 + i % 26) * LETTERS},
                                       timeout=60)
            assert reply["type"] == "ack", reply
    gw0, hosts0, t0 = cpu_s(t.stack), cpu_s(t.stack, "ray-hosts"), time.monotonic()

    async def report_all(reporter: int) -> list[str]:
        async with client(url, next_address()) as http:
            return [str((await http.post(f"/api/rooms/{room}/reports", json={
                "token": seats[reporter]["token"], "seat": seat, "reason": "abuse",
                "text": "x" * 500})).status_code) for seat in range(SEATS) if seat != reporter]
    statuses = [s for each in await asyncio.gather(*(report_all(r) for r in range(SEATS)))
                for s in each]
    took = time.monotonic() - t0
    hosts = cpu_s(t.stack, "ray-hosts") - hosts0
    cpu = f"gateway {cpu_s(t.stack) - gw0:.2f} s, hosts {hosts:.2f} s"
    pages, largest, read = 0, 0, 0
    async with client(url) as http:
        cursor = None
        while True:
            answer = await http.get("/api/admin/reports",
                                    params={"limit": 100, **({"cursor": cursor} if cursor else {})},
                                    headers={"Authorization": f"Bearer {ADMIN_SECRET}"})
            answer.raise_for_status()
            page = answer.json()
            pages, largest = pages + 1, max(largest, len(answer.content))
            read += len(page["reports"])
            cursor = page.get("next")
            if not cursor:
                break
    keys, r = Keys(config.prefix), aioredis.Redis.from_url(config.redis_url)
    try:
        stored = await r.memory_usage(keys.reports(room)) or 0
        chat = await r.memory_usage(keys.chat(room)) or 0
    finally:
        await r.aclose()
    for sock in sockets:
        await sock.close()
    return {"probe": f"every seat of an 18-seat game reports every other ({SEATS * (SEATS - 1)} "
                     f"reports, an address each; WW_REPORT_BURST={config.report_burst} then one "
                     f"per {config.report_pace:g} s, "
                     f"WW_REPORTS_PER_SEAT={config.reports_per_seat}, "
                     f"WW_REPORTS_PER_ROOM={config.reports_per_room}), {len(living)} seats "
                     f"having said {LINES} lines of {LETTERS} letters; then the operators' read",
            "result": f"{counted(statuses)}; stored: the room's reports {stored / 1024:.0f} KiB "
                      f"(its chat {chat / 1024:.0f} KiB); read: {read} reports in {pages} "
                      f"page(s), the largest {largest / 1024:.0f} KiB",
            "time": f"{took:.1f} s", "cpu": cpu, "rss": "-", "ping": t.pinger.p99(t0),
            "facts": {"statuses": statuses, "stored_bytes": stored, "chat_bytes": chat,
                      "read": read, "pages": pages, "largest_page": largest}}
