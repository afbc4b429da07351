"""The honest load the probes run against (`--honest N`, issue 34): N tables in their first day's
discussion (18 seats each, as `common.day_room` makes them, each table from an address of its
own), `--honest-sockets` living seats of each connected, each seat pinging every PING_EVERY s and
saying a chat line every CHAT_EVERY s. A ping's ack is the gateway's answer (its event loop's
latency); a chat line's ack is the room's (the gateway, the room's host and its write).

Their p50 / p99 over the quiet windows (the suite's first and last, and one just before each
probe) and over each probe's run make the second table of the suite: the issue's target is each
probe's p99 within 2x of the quiet one.

The seats play from a process of their own (`python -m loadtest.abuse.honest`, started by
`Honest.start`), as players on other machines would: in the probes' process, a probe's own client
work (its HTTP calls, its sockets' handshakes, its JSON) held the pings' replies in the same event
loop and counted as the server's latency. The two processes share CLOCK_MONOTONIC, so the probes'
`time.monotonic()` bounds the player's samples."""
from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import time

from devstack.stack import connect
from loadtest.abuse.common import day_room, next_address
from loadtest.measure import Pinger, percentile

PING_EVERY = 0.6  # within the gateway's ping limit (2 a second)
CHAT_EVERY = 2.0  # within the room's chat limit (1 line a second)
SETTLE = 2.0  # seconds between a probe's window and the next probe's quiet window
SAMPLES_LINE = 1 << 26  # bytes of one line of samples from the player (~40 bytes a sample)
# This box is a virtual machine: its host takes CPU time from it at moments (steal time, in
# /proc/stat), 30-52 % of it for minutes on end while every honest p99 went to 100-460 ms.
STEAL_EVERY = 0.5  # seconds between two readings of the machine's CPU time
STEAL_LIMIT = 5.0  # % of the CPU time stolen in a window, or its quiet one, past which
                   # `medians` leaves that run of the probe out: what it measured was the host
COLUMNS = ["probe", "seconds", "ping p50 / p99", "ack p50 / p99",
           "p99 / quiet just before (ping, ack)", "p99 / quiet before (ping, ack)",
           "p99 / quiet after (ping, ack)", "CPU stolen (window, quiet before)"]


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
    """The honest tables, their seats pinging and chatting in the player process (`player`);
    their samples, fetched from it as the windows need them."""

    def __init__(self, player: asyncio.subprocess.Process) -> None:
        self.player, self.connected = player, 0
        self.pings: list[tuple[float, float]] = []  # (sent at, seconds to the ack)
        self.chat: list[tuple[float, float]] = []
        self.cpu: list[tuple[float, int, int]] = []  # (when, stolen, all: jiffies since boot)
        self._cpu_readings = asyncio.create_task(self._read_cpu())

    async def _read_cpu(self) -> None:
        while True:
            self._read_cpu_now()
            await asyncio.sleep(STEAL_EVERY)

    def _read_cpu_now(self) -> None:
        self.cpu.append((time.monotonic(), *cpu_jiffies()))

    def stolen(self, since: float, until: float) -> float | None:
        """% of the machine's CPU time its host took between `since` and `until` (the readings
        around them), None without readings there."""
        first = next((r for r in reversed(self.cpu) if r[0] <= since), None)
        last = next((r for r in self.cpu if r[0] >= until), self.cpu[-1] if self.cpu else None)
        if first is None or last is None or last[2] <= first[2]:
            return None
        return 100 * (last[1] - first[1]) / (last[2] - first[2])

    @classmethod
    async def start(cls, url: str, rc, tables: int, sockets: int) -> Honest:
        rooms = await asyncio.gather(*(day_room(url, rc, next_address()) for _ in range(tables)))
        seats = [(seats[0]["room"], seats[s]["token"])
                 for seats, living in rooms for s in living[:sockets]]
        player = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "loadtest.abuse.honest", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, limit=SAMPLES_LINE)
        honest = cls(player)
        ready = await honest._ask({"ws_url": url.replace("http", "ws"), "seats": seats})
        honest.connected = ready["connected"]
        return honest

    async def _ask(self, request: dict) -> dict:
        assert self.player.stdin and self.player.stdout
        self.player.stdin.write(json.dumps(request).encode() + b"\n")
        await self.player.stdin.drain()
        line = await self.player.stdout.readline()
        if not line:
            raise RuntimeError(f"the honest player exited ({await self.player.wait()})")
        return json.loads(line)

    async def _fetch(self) -> dict[str, list[tuple[float, float]]]:
        """Take the samples the player took since the last fetch; answer its requests still
        unanswered, each with its age so far (a lower bound of its latency: the slowest are
        those, and a window that left them out would miss its tail)."""
        new = await self._ask({"samples": True})
        self.pings += map(tuple, new["pings"])
        self.chat += map(tuple, new["chat"])
        return {name: list(map(tuple, pending)) for name, pending in new["in_flight"].items()}

    async def window_after(self, since: float, least: float) -> dict:
        """`window` from `since`, `least` seconds long at least: a probe of a few milliseconds
        leaves too few pings and chat lines to tell, and what it left behind counts too."""
        await asyncio.sleep(max(0.0, since + least - time.monotonic()))
        return await self.window(since, time.monotonic())

    async def quiet_window(self, seconds: float) -> dict:
        """`window` over `seconds` with no probe running, once the last one's aftermath has had
        SETTLE s to pass: the quiet value the next probe is held to, the box as it is then."""
        await asyncio.sleep(SETTLE)
        since = time.monotonic()
        await asyncio.sleep(seconds)
        return await self.window(since, time.monotonic())

    async def window(self, since: float, until: float) -> dict:
        """ms: the p50 and p99 of the pings and the chat acks sent between `since` and
        `until`."""
        pending = await self._fetch()
        pings = [(t, s) for t, s in (*self.pings, *pending["pings"]) if since <= t <= until]
        acks = [(t, s) for t, s in (*self.chat, *pending["chat"]) if since <= t <= until]

        def ms(samples: list[tuple[float, float]], q: float) -> float | None:
            return None if not samples else percentile([s for _, s in samples], q) * 1000

        def slowest(samples: list[tuple[float, float]]) -> list[tuple[float, int]]:
            """When the slowest were asked for (s into the window) and how long they took (ms):
            a tail bunched at one moment of a probe names what in it holds them."""
            worst = sorted(samples, key=lambda sample: sample[1], reverse=True)
            return [(round(t - since, 2), round(s * 1000))
                    for t, s in worst[:max(1, len(samples) // 100)]]
        self._read_cpu_now()  # the window's end, however late the last periodic reading
        return {"seconds": until - since, "pings": len(pings), "acks": len(acks),
                "stolen": self.stolen(since, until),
                "ping_p50": ms(pings, 50), "ping_p99": ms(pings, 99),
                "ack_p50": ms(acks, 50), "ack_p99": ms(acks, 99),
                "ping_slowest": slowest(pings), "ack_slowest": slowest(acks)}

    async def stop(self) -> None:
        self._cpu_readings.cancel()
        try:
            await self._ask({"stop": True})
        finally:
            if self.player.returncode is None:
                await asyncio.wait_for(self.player.wait(), 30)


def cpu_jiffies() -> tuple[int, int]:
    """The machine's CPU time stolen by its host, and all of it, since boot (/proc/stat)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal [guest guest_nice: in user already]
    return fields[7], sum(fields[:8])


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
    def stolen(w: dict | None) -> str:
        return "-" if w is None or w.get("stolen") is None else f"{w['stolen']:.1f} %"
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for name, w, quiet in windows:
        lines.append(f"| {name} | {w['seconds']:.1f} | {pair(w, 'ping')} (n={w['pings']}) | "
                     f"{pair(w, 'ack')} (n={w['acks']}) | "
                     f"{ratio(w, quiet, 'ping')}, {ratio(w, quiet, 'ack')} | "
                     f"{ratio(w, before, 'ping')}, {ratio(w, before, 'ack')} | "
                     f"{ratio(w, after, 'ping')}, {ratio(w, after, 'ack')} | "
                     f"{stolen(w)}, {stolen(quiet)} |")
    return lines


MEDIAN_COLUMNS = ["probe", "runs (left out: host stole > STEAL_LIMIT)", "ping p99, each run (ms)",
                  "ack p99, each run (ms)",
                  "median p99 / quiet just before (ping, ack)", "within 2x in runs (ping, ack)"]


def medians(runs: list[list[dict]]) -> list[str]:
    """The markdown lines of several runs' honest figures (each run: the rows of its `--json`):
    per probe, each run's p99 and the median of its ratios to the quiet window just before it.
    One run's short window holds ~220 acks, its p99 the third-worst: one stall moves it, so the
    target is read on the median of several runs. A run of a probe whose window, or its quiet
    one, had more than STEAL_LIMIT % of the machine's CPU taken by its host is left out."""
    by_probe: dict[str, list[dict]] = {}
    left_out: dict[str, int] = {}
    for rows in runs:
        for row in rows:
            if "honest" not in row or not row.get("quiet"):
                continue
            kept = by_probe.setdefault(row["name"], [])
            if max(row["honest"].get("stolen") or 0, row["quiet"].get("stolen") or 0) \
                    > STEAL_LIMIT:
                left_out[row["name"]] = left_out.get(row["name"], 0) + 1
            else:
                kept.append(row)
    lines = ["| " + " | ".join(MEDIAN_COLUMNS).replace("STEAL_LIMIT", f"{STEAL_LIMIT:g} %")
             + " |", "|" + "---|" * len(MEDIAN_COLUMNS)]
    for name, rows in by_probe.items():
        cells = [name, f"{len(rows)} ({left_out.get(name, 0)})"]
        if not rows:
            lines.append("| " + " | ".join(cells + ["-"] * (len(MEDIAN_COLUMNS) - 2)) + " |")
            continue
        ratios = {}
        for key in ("ping", "ack"):
            cells.append(", ".join(f"{row['honest'][f'{key}_p99']:.0f}" for row in rows))
            ratios[key] = [row["honest"][f"{key}_p99"] / row["quiet"][f"{key}_p99"]
                           for row in rows]
        median = {key: statistics.median(values) for key, values in ratios.items()}
        cells.append(", ".join(f"**{m:.2f}**" if m > 2 else f"{m:.2f}" for m in median.values()))
        cells.append(", ".join(f"{sum(r <= 2 for r in values)} of {len(values)}"
                               for values in ratios.values()))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


async def play() -> None:
    """The player process: seats as the first request names them, then samples on request,
    until asked to stop (one JSON line each way; stdout is the answers' alone)."""
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything else printed goes to stderr
    requests = asyncio.StreamReader(limit=SAMPLES_LINE)
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(requests), sys.stdin)
    setup = json.loads(await requests.readline())
    sockets = [await connect(setup["ws_url"], room, token) for room, token in setup["seats"]]
    gc.freeze()
    pings = Pinger(sockets, PING_EVERY)
    chat = Pinger(sockets, CHAT_EVERY, {"type": "chat", "text": "honest"})
    answers.write(json.dumps({"connected": len(sockets)}).encode() + b"\n")
    sent = {"pings": 0, "chat": 0}
    while line := await requests.readline():
        request = json.loads(line)
        if request.get("stop"):
            await pings.stop()
            await chat.stop()
            await asyncio.gather(*(s.close() for s in sockets))
            answers.write(b"{}\n")
            return
        now, new = time.monotonic(), {"in_flight": {}}
        for name, pinger in (("pings", pings), ("chat", chat)):
            new[name] = pinger.samples[sent[name]:]
            sent[name] += len(new[name])
            new["in_flight"][name] = [(t, now - t) for t in pinger.in_flight.values()]
        answers.write(json.dumps(new).encode() + b"\n")
        # What the sockets received since (devstack's Client keeps every frame: ~330 a second
        # here) is never garbage: out of the collector's reach. Walked, it made this process's
        # full collections 60-101 ms, finding nothing, and every sample in flight counted the
        # pause as the server's (the headers probe's ping p99 of 241 ms, one of them).
        gc.freeze()


if __name__ == "__main__":
    asyncio.run(play())
