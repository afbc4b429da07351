"""flooders: `--flooders` guests of lobbies (12 a lobby, their host away) send `settings` frames,
which the room refuses them, as fast as their sockets take them for `--flooders-seconds`, from a
process of their own (issue 34's flood: `loadtest/flooding.py`, which `loadtest.flood` also
measures alone)."""
from __future__ import annotations

from loadtest.abuse.common import Target, counted, cpu_s, next_address, rss_mb, table
from loadtest.flooding import FLOODERS_PER_ROOM, flood_window


def add_arguments(parser) -> None:
    parser.add_argument("--flooders", type=int, default=36, help="sockets flooding `settings`")
    parser.add_argument("--flooders-seconds", type=float, default=10,
                        help="seconds the flooders flood")


async def run(t: Target) -> dict:
    stack, url, count, seconds = t.stack, t.url, t.args.flooders, t.args.flooders_seconds
    targets: list[tuple[str, str]] = []
    while len(targets) < count:  # made now: a lobby closes at its maximum age
        guests = min(FLOODERS_PER_ROOM, count - len(targets))
        lobby = await table(url, guests + 1, next_address())
        targets += [(s["room"], s["token"]) for s in lobby[1:]]
    gw0, rss0 = cpu_s(stack), rss_mb(stack)
    started, ended, stats = await flood_window(stack, url, targets, seconds, reconnect=False)
    closes = counted(code for code, n in stats["closes"].items() for _ in range(n))
    return {"probe": f"{count} sockets flood refused `settings` frames for {seconds:g} s (issue "
                     f"34: 36 of them took another room's ping p99 from 6 ms to 3.5 s)",
            "result": f"{stats['sent']:,} frames sent; the sockets: {closes or 'none closed'}, "
                      f"{stats['open_at_end']} open at the end",
            "time": f"{ended - started:.1f} s", "cpu": f"gateway {cpu_s(stack) - gw0:.2f} s",
            "rss": f"{rss0:.0f} -> {rss_mb(stack):.0f} MB", "ping": t.pinger.p99(started, ended),
            "facts": {"sent": stats["sent"], "closes": stats["closes"],
                      "open_at_end": stats["open_at_end"]}}
