"""lobbies: one address opens lobbies, a socket in each, until refused; one IPv6 /56 through many
/64s; the first lobby closes at its maximum age, connected or not."""
from __future__ import annotations

import time

from devstack.stack import connect
from gateway.limits import SITE_SHARE
from loadtest.abuse.common import (Target, client, counted, cpu_s, next_address, rss_mb,
                                   until_finished)


async def run(t: Target) -> list[dict]:
    """Held lobbies cannot fill the server: per address, per IPv6 /56, and by their age."""
    stack, url, pinger, config = t.stack, t.url, t.pinger, t.config
    max_age = t.args.lobby_max_age
    ws_url = url.replace("http", "ws")
    limit = config.open_lobbies_per_address
    holder, rows = next_address(), []
    rss0, cpu0, t0 = rss_mb(stack), cpu_s(stack), time.monotonic()
    opened, sockets, statuses, refusal = [], [], [], {}
    async with client(url, holder) as http:
        for i in range(2 * limit + 1):  # until refused
            asked = time.monotonic()  # the room's age counts from before this (its creation)
            answer = await http.post("/api/rooms", json={"name": f"Holder{i}"})
            statuses.append(answer.status_code)
            if answer.status_code != 201:
                refusal = answer.json()["detail"]
                break
            seat = answer.json()
            opened.append((asked, seat))
            sockets.append(await connect(ws_url, seat["room"], seat["token"]))
    async with client(url) as other:
        other_status = (await other.post("/api/rooms", json={"name": "Elsewhere"})).status_code
    took = time.monotonic() - t0
    rows.append({
        "probe": f"one address opens lobbies, a socket connected in each, until refused "
                 f"(WW_OPEN_LOBBIES_PER_ADDRESS={limit})",
        "result": f"{counted(statuses)} (`{refusal.get('code')}`: {refusal.get('message')}); "
                  f"another address meanwhile: {other_status}",
        "time": f"{took:.1f} s", "cpu": f"{cpu_s(stack) - cpu0:.2f} s",
        "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": pinger.p99(t0),
        "facts": {"statuses": statuses, "refusal": refusal, "other": other_status}})

    t1, site_cap = time.monotonic(), limit * SITE_SHARE
    site = [f"2001:db8:ab:cd{i:02x}::1" for i in range(site_cap + 4)]  # one /56, a /64 each
    v6 = []
    for address in site:
        async with client(url, address) as http:
            v6.append((await http.post("/api/rooms", json={"name": "Site"})).status_code)
    async with client(url, "2001:db8:ab:ce00::1") as http:  # the next /56
        far = (await http.post("/api/rooms", json={"name": "Far"})).status_code
    rows.append({
        "probe": f"one IPv6 /56 opens a lobby from each of {len(site)} /64s "
                 f"(it holds {SITE_SHARE} x {limit})",
        "result": f"{counted(v6)}; another /56: {far}",
        "time": f"{time.monotonic() - t1:.1f} s", "rss": "-", "ping": pinger.p99(t1),
        "facts": {"statuses": v6, "site_cap": site_cap, "other_site": far}})

    made, first = opened[0]
    closed = await until_finished(url, first["room"], made, max_age + 120)
    for when, seat in opened[1:]:
        await until_finished(url, seat["room"], when, max_age + 120)
    watched = sockets[0]
    seen = [f.get("kind") or f.get("type") for f in watched.frames[1:]]
    socket_state = (f"closed {watched.ws.close_code}" if watched._reader.done()
                    else "still open") + (f", frames after its welcome: {counted(seen)}" if seen
                                          else ", nothing received after its welcome")
    # What its host's next command hears (a socket in the lobby was told nothing of its close).
    told = await watched.request({"type": "settings", "durations": {"vote": 31}}) \
        if not watched._reader.done() else {"type": "closed"}
    told = f"{told['type']} {told.get('code') or ''}".strip()
    async with client(url, holder) as http:
        again = (await http.post("/api/rooms", json={"name": "Holder again"})).status_code
    async with client(url) as other:
        other_after = (await other.post("/api/rooms", json={"name": "Elsewhere"})).status_code
    for s in sockets:
        await s.close()
    rows.append({
        "probe": f"the first of those lobbies, its socket connected (WW_LOBBY_MAX_AGE={max_age})",
        "result": f"finished {closed:.1f} s after it was asked for; its socket: {socket_state}; "
                  f"its host's next command (settings): {told}; then the holder opens a lobby: "
                  f"{again}; another address: {other_after}",
        "time": f"{closed:.1f} s", "rss": f"{rss_mb(stack):.0f} MB", "ping": pinger.p99(made),
        "facts": {"closed_after": closed, "max_age": max_age,
                  "socket_open": not watched._reader.done(),
                  "frames_after_welcome": seen, "host_command": told, "holder_again": again,
                  "other_after": other_after}})
    return rows
