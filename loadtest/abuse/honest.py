"""The honest load the probes run against (`--honest N`, issue 34): N tables in their first day's
discussion (18 seats each, as `common.day_room` makes them, each table from an address of its
own), `--honest-sockets` living seats of each connected, each seat pinging every PING_EVERY s and
saying a chat line every CHAT_EVERY s. A ping's ack is the gateway's answer (its event loop's
latency); a chat line's ack is the room's (the gateway, the room's host and its write).

Their p50 / p99 over the quiet windows (the suite's first and last, and one just before each
probe) and over each probe's run make the second table of the suite: the issue's target is each
probe's p99 within 2x of the quiet one."""
from __future__ import annotations

import asyncio
import time

from devstack.stack import connect
from loadtest.abuse.common import day_room, next_address
from loadtest.measure import Pinger, percentile

PING_EVERY = 0.6  # within the gateway's ping limit (2 a second)
CHAT_EVERY = 2.0  # within the room's chat limit (1 line a second)
SETTLE = 2.0  # seconds between a probe's window and the next probe's quiet window
COLUMNS = ["probe", "seconds", "ping p50 / p99", "ack p50 / p99",
           "p99 / quiet just before (ping, ack)", "p99 / quiet before (ping, ack)",
           "p99 / quiet after (ping, ack)"]


def add_arguments(parser) -> None:
    parser.add_argument("--honest", type=int, default=0,
                        help="honest tables playing while the probes run (0: none)")
    parser.add_argument("--honest-sockets", type=int, default=3,
                        help="connected seats of each honest table (each pings and chats)")
    parser.add_argument("--honest-window", type=float, default=5,
                        help="seconds each probe's window lasts at least (its aftermath counts)")
    parser.add_argument("--quiet-before", type=float, default=5,
                        help="seconds of quiet measured just before each probe, after "
                             f"{SETTLE:g} s for the last one's aftermath (0: none)")


class Honest:
    """The honest tables' sockets, their pings and their chat lines."""

    def __init__(self, sockets: list) -> None:
        self.sockets = sockets
        self.pings = Pinger(sockets, PING_EVERY)
        self.chat = Pinger(sockets, CHAT_EVERY, {"type": "chat", "text": "honest"})

    @classmethod
    async def start(cls, url: str, rc, tables: int, sockets: int) -> Honest:
        rooms = await asyncio.gather(*(day_room(url, rc, next_address()) for _ in range(tables)))
        ws_url = url.replace("http", "ws")
        return cls([await connect(ws_url, seats[0]["room"], seats[s]["token"])
                    for seats, living in rooms for s in living[:sockets]])

    async def window_after(self, since: float, least: float) -> dict:
        """`window` from `since`, `least` seconds long at least: a probe of a few milliseconds
        leaves too few pings and chat lines to tell, and what it left behind counts too."""
        await asyncio.sleep(max(0.0, since + least - time.monotonic()))
        return self.window(since, time.monotonic())

    async def quiet_window(self, seconds: float) -> dict:
        """`window` over `seconds` with no probe running, once the last one's aftermath has had
        SETTLE s to pass: the quiet value the next probe is held to, the box as it is then."""
        await asyncio.sleep(SETTLE)
        since = time.monotonic()
        await asyncio.sleep(seconds)
        return self.window(since, time.monotonic())

    def window(self, since: float, until: float) -> dict:
        """ms: the pings' and the chat acks' p50 and p99 between `since` and `until`."""
        pings, acks = self.pings.latencies(since, until), self.chat.latencies(since, until)

        def ms(values: list[float], q: float) -> float | None:
            return None if not values else percentile(values, q) * 1000
        # When the slowest acks were asked for (s into the window) and how long they took (ms):
        # a tail bunched at one moment of a probe names what in it holds them.
        slowest = sorted(((s, t) for t, s in self.chat.samples if since <= t <= until),
                         reverse=True)[:max(1, len(acks) // 100)]
        return {"seconds": until - since, "pings": len(pings), "acks": len(acks),
                "ping_p50": ms(pings, 50), "ping_p99": ms(pings, 99),
                "ack_p50": ms(acks, 50), "ack_p99": ms(acks, 99),
                "ack_slowest": [(round(t - since, 2), round(s * 1000)) for s, t in slowest]}

    async def stop(self) -> None:
        await self.pings.stop()
        await self.chat.stop()
        for s in self.sockets:
            await s.close()


def table(rows: list[dict]) -> list[str]:
    """The markdown lines of the honest tables' figures: the quiet window first, then each probe,
    then the quiet window after the probes if there is one (`rows`: the suite's rows; those with
    an `honest` window). Each p99 against the quiet window just before that probe (`quiet`, with
    `--quiet-before`: the box as it was when the probe began) and against the suite's first and
    last ones: on a shared machine they differ, and how much tells the noise."""
    windows = [(row["name"], row["honest"], row.get("quiet")) for row in rows if "honest" in row]
    before = windows[0][1]
    after = {name: w for name, w, _ in windows}.get("idle, after")

    def pair(w: dict, key: str) -> str:
        p50, p99 = w[f"{key}_p50"], w[f"{key}_p99"]
        return "-" if p99 is None else f"{p50:.0f} / {p99:.0f} ms"

    def ratio(w: dict, quiet: dict | None, key: str) -> str:
        if quiet is None or w[f"{key}_p99"] is None or not quiet[f"{key}_p99"]:
            return "-"
        return f"{w[f'{key}_p99'] / quiet[f'{key}_p99']:.2f}"
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for name, w, quiet in windows:
        lines.append(f"| {name} | {w['seconds']:.1f} | {pair(w, 'ping')} (n={w['pings']}) | "
                     f"{pair(w, 'ack')} (n={w['acks']}) | "
                     f"{ratio(w, quiet, 'ping')}, {ratio(w, quiet, 'ack')} | "
                     f"{ratio(w, before, 'ping')}, {ratio(w, before, 'ack')} | "
                     f"{ratio(w, after, 'ping')}, {ratio(w, after, 'ack')} |")
    return lines
