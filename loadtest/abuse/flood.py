"""flood: one seat's socket sends `--flood` chat commands over `--flood-seconds`: refused by the
gateway, reaching the room, and the hosts' and the gateway's CPU over `--flood-window` seconds,
then over as long again with nothing sent."""
from __future__ import annotations

import asyncio
import time

import orjson

from actors.room import RATE_LIMITS
from devstack.stack import connect
from gateway.ws import LOCAL_BURST_FACTOR
from loadtest.abuse.common import Target, cpu_s, metric, rss_mb


SHARED = ("day",)  # a seat of the shared day room floods


def add_arguments(parser) -> None:
    parser.add_argument("--flood", type=int, default=5000, help="chat commands of the flood")
    parser.add_argument("--flood-seconds", type=float, default=1.0,
                        help="the flood's commands are spread over this long")
    parser.add_argument("--flood-window", type=float, default=10,
                        help="seconds the flood's CPU is counted over, from its first command")


async def run(t: Target) -> dict:
    """`count` chat commands of one seat's socket, spread over `seconds` (in batches of 50), then
    the rest of `window`; then a quiet window as long, for the same processes' CPU at rest."""
    stack, url, pinger, shared = t.stack, t.url, t.pinger, t.shared
    count, seconds, window = t.args.flood, t.args.flood_seconds, t.args.flood_window
    seats, living = await shared.day()
    seat, room = living[-1], seats[0]["room"]
    sock = await connect(url.replace("http", "ws"), room, seats[seat]["token"])
    burst, rate = RATE_LIMITS["chat"]

    def answered() -> list[dict]:
        return [f for f in sock.frames if f.get("type") in ("ack", "error")
                and str(f.get("id", "")).startswith("flood")]

    async def counters() -> tuple[float, float]:  # chat frames read; refused by the socket's copy
        return (await metric(url, "ww_ws_messages_in_total", 'type="chat"'),
                await metric(url, "ww_ws_refused_here_total", 'type="chat"'))
    read0, here0 = await counters()
    hosts0, gw0, rss0 = cpu_s(stack, "ray-hosts"), cpu_s(stack), rss_mb(stack)
    t0 = time.monotonic()
    for start in range(0, count, 50):
        for i in range(start, min(count, start + 50)):
            await sock.send_raw(orjson.dumps({"type": "chat", "id": f"flood{i}",
                                              "text": f"flood {i}"}).decode())
        await asyncio.sleep(max(0.0, t0 + seconds * (start + 50) / count - time.monotonic()))
    sent_in = time.monotonic() - t0
    while len(answered()) < count and not sock._reader.done() \
            and time.monotonic() - t0 < window + 120:
        await asyncio.sleep(0.1)  # polling the socket's record for the last reply
    answered_in = time.monotonic() - t0
    closed = sock.ws.close_code if sock._reader.done() else None
    await asyncio.sleep(max(0.0, window - answered_in))  # the rest of the window: its aftermath
    spent = time.monotonic() - t0
    hosts, gateway = cpu_s(stack, "ray-hosts") - hosts0, cpu_s(stack) - gw0
    read, here = (a - b for a, b in zip(await counters(), (read0, here0)))
    replies = answered()
    await sock.close()
    quiet0, quiet_gw0, t1 = cpu_s(stack, "ray-hosts"), cpu_s(stack), time.monotonic()
    await asyncio.sleep(spent)  # as long again, nothing sent: the same processes at rest
    quiet, quiet_gw = cpu_s(stack, "ray-hosts") - quiet0, cpu_s(stack) - quiet_gw0
    acked = sum(r["type"] == "ack" for r in replies)
    limited = sum(r.get("code") == "rate_limited" for r in replies)
    reached = read - here
    # What the socket's copy lets through at most: its burst, then the rate, while frames came.
    allowed = burst * LOCAL_BURST_FACTOR + rate * answered_in
    return {"probe": f"one seat's socket sends {count:,} chat commands in {seconds:g} s, as fast "
                     f"as it may (before, issue 24: 5,000 refusals/s cost a host 2.8 s of CPU in "
                     f"10 s)",
            "result": f"sent in {sent_in:.2f} s; "
                      + (f"all answered in {answered_in:.2f} s" if closed is None else
                         f"the socket closed {closed} after {len(replies)} answers "
                         f"({answered_in:.2f} s)")
                      + f": {read:.0f} read, {here:.0f} refused by the gateway "
                      f"(ww_ws_refused_here_total), {reached:.0f} reached the room ({acked} "
                      f"acked); {limited} x rate_limited answered",
            "time": f"{spent:.1f} s window",
            "cpu": f"hosts {hosts:.2f} s, gateway {gateway:.2f} s (the next {spent:.0f} s, quiet: "
                   f"{quiet:.2f} s, {quiet_gw:.2f} s)",
            "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": pinger.p99(t0, t1),
            "facts": {"sent": count, "read": read, "answered": len(replies), "acked": acked,
                      "closed": closed, "rate_limited": limited, "refused_here": here,
                      "reached": reached, "allowed_through": allowed, "answered_in": answered_in,
                      "host_cpu": hosts, "gateway_cpu": gateway, "quiet_host_cpu": quiet,
                      "quiet_gateway_cpu": quiet_gw, "window": spent}}
