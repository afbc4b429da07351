"""What every load script reads off the machine: a process tree's CPU and memory by component,
percentiles, the ping -> ack latency of quiet seats, and a private Redis's counters.

A `components` dict maps a component's name ("gateway", "ray-hosts", "ray-system", "redis",
"locust", ...) to its processes (`Running.components()` in loadtest/stack.py gives one, read fresh).
"""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import httpx
import psutil
import redis

# The components that are the server (Redis aside: often the shared one, and the whole process).
SERVER = ("gateway", "ray-hosts", "ray-system")


def family(pid: int) -> list[psutil.Process]:
    """The process and all its descendants ([] once it is gone)."""
    try:
        p = psutil.Process(pid)
        return [p] + p.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def redis_processes(port: int = 6379) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            if ("redis-server" in (p.info["name"] or "")
                    and f":{port}" in " ".join(p.info["cmdline"] or [])):
                out.append(p)
        except psutil.Error:
            pass
    return out


# ---------------------------------------------------------------------------------------- CPU

def cpu_seconds(components: dict) -> dict:
    """component -> {pid: CPU seconds spent so far (user + system)}."""
    out: dict = {}
    for component, processes in components.items():
        out[component] = {}
        for process in processes:
            try:
                times = process.cpu_times()
                out[component][process.pid] = times.user + times.system
            except psutil.Error:
                pass
    return out


def total_cpu_seconds(processes: list) -> float:
    """CPU seconds (user + system) the live ones of `processes` have spent so far, summed."""
    return sum(cpu_seconds({"": processes})[""].values())


def cores_between(before: dict, after: dict, seconds: float) -> dict:
    """component -> cores used between two `cpu_seconds` readings (a process started meanwhile
    counts whole; one that ended meanwhile is not seen)."""
    return {component: sum(t - before.get(component, {}).get(pid, 0.0) for pid, t in now.items())
            / seconds for component, now in after.items()}


def cores_over(read_components: Callable[[], dict], seconds: float) -> dict:
    """component -> cores used over the next `seconds` (components read at each end)."""
    started, before = time.monotonic(), cpu_seconds(read_components())
    time.sleep(seconds)
    return cores_between(before, cpu_seconds(read_components()), time.monotonic() - started)


def cpu_percent(before: dict, after: dict, seconds: float) -> tuple[dict, dict]:
    """Between two `cpu_seconds` readings: (component -> CPU % of one core, pid -> (component,
    CPU %)); a component with no process alive at `after` is left out."""
    by_component, by_pid = Counter(), {}
    for component, now in after.items():
        for pid, t in now.items():
            percent = 100.0 * (t - before.get(component, {}).get(pid, 0.0)) / seconds
            by_component[component] += percent
            by_pid[pid] = (component, percent)
    return dict(by_component), by_pid


# ------------------------------------------------------------------------------------- memory

def rss_mb(components: dict) -> dict:
    """component -> MB of RSS (a component none of whose processes could be read is left out)."""
    out = Counter()
    for component, processes in components.items():
        for process in processes:
            try:
                out[component] += process.memory_info().rss / 2**20
            except psutil.Error:
                pass
    return dict(out)


def total_rss_mb(processes: list) -> float:
    return rss_mb({"": processes}).get("", 0.0)


def rss_by_pid(components: dict) -> dict:
    """pid -> (component, MB of RSS)."""
    out = {}
    for component, processes in components.items():
        for process in processes:
            try:
                out[process.pid] = (component, process.memory_info().rss / 2**20)
            except psutil.Error:
                pass
    return out


def unique_memory(components: dict) -> dict:
    """component -> MB of USS (the pages only that process maps: what stopping it would free; RSS
    counts the libraries a process shares with the others, e.g. every Ray worker's copy of Ray)."""
    out = {}
    for component, processes in components.items():
        total = 0
        for process in processes:
            try:
                total += process.memory_full_info().uss
            except psutil.Error:
                pass
        out[component] = total / 2**20
    return out


def client_sockets(processes: list) -> int:
    """Established TCP connections of `processes` (a load generator's sockets)."""
    n = 0
    for p in processes:
        try:
            n += sum(1 for c in p.net_connections(kind="tcp") if c.status == "ESTABLISHED")
        except psutil.Error:
            pass
    return n


# -------------------------------------------------------------------------------- percentiles

def percentile(values, q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of a list; None when empty."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


class Pinger:
    """Seats of a quiet room (devstack.stack clients), each pinging every `every` seconds; the
    acks' latencies, kept by when they were sent. With `frame`, they send that command instead
    (e.g. a chat line: its ack is the room's answer, not the gateway's). The seats' sends are
    spread evenly over the period, as independent players' are: all at once, 90 chat lines
    queued behind each other every 2 s, and the acks' p99 was the slowest of those bursts."""

    def __init__(self, sockets, every: float = 0.6, frame: dict | None = None) -> None:
        self.sockets, self.every = sockets, every
        self.frame = frame or {"type": "ping"}
        self.samples: list[tuple[float, float]] = []  # (sent at, seconds to the ack)
        self.in_flight: dict[int, float] = {}  # socket's index -> when its unanswered one was sent
        self._tasks = [asyncio.create_task(self._run(i, s, i * every / len(sockets)))
                       for i, s in enumerate(sockets)]

    async def _run(self, index: int, sock, offset: float) -> None:
        await asyncio.sleep(offset)
        while True:
            started = self.in_flight[index] = time.monotonic()
            reply = await sock.request(self.frame, timeout=120)
            del self.in_flight[index]
            if reply["type"] == "ack":
                self.samples.append((started, time.monotonic() - started))
            await asyncio.sleep(max(0.0, self.every - (time.monotonic() - started)))

    def p99(self, since: float, until: float | None = None) -> str:
        """The p99 of the pings sent between `since` and `until` (now), as a table shows it."""
        values = self.latencies(since, until)
        if not values:
            return "-"
        return f"{percentile(values, 99) * 1000:.0f} ms (n={len(values)})"

    def latencies(self, since: float, until: float | None = None) -> list[float]:
        """Seconds to the ack of every ping sent between `since` and `until` (now)."""
        until = until or time.monotonic()
        return [s for t, s in self.samples if since <= t <= until]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


# ----------------------------------------------------------------- a private Redis's counters

@dataclass
class Reading:
    at: float
    cpu: dict  # component -> {pid: cpu seconds}
    calls: int
    usec: int
    bytes_in: int


@dataclass
class Meter:
    """A stack's CPU by component and its private Redis's command counters, read together."""

    running: object
    redis_port: int
    idle_per_s: dict = field(default_factory=dict)  # what the empty stack spends per second

    def _components(self) -> dict:
        found = self.running.components()
        found["redis"] = redis_processes(self.redis_port)  # the private one, not 6379's
        return found

    def read(self) -> Reading:
        cpu = cpu_seconds(self._components())
        with redis.Redis(port=self.redis_port) as r:
            stats = r.info("commandstats")
            calls = sum(v["calls"] for v in stats.values())
            usec = sum(v["usec"] for v in stats.values())
            bytes_in = r.info("stats")["total_net_input_bytes"]
        return Reading(time.monotonic(), cpu, calls, usec, bytes_in)

    def cost(self, before: Reading, after: Reading, idle: bool = True) -> dict:
        """CPU seconds per component between two readings (a process started meanwhile counts
        whole), less the empty stack's own over that time; Redis counters' deltas."""
        seconds = after.at - before.at
        out = {}
        for component, now in after.cpu.items():
            then = before.cpu.get(component, {})
            spent = sum(t - then.get(pid, 0.0) for pid, t in now.items())
            out[component] = spent - (self.idle_per_s.get(component, 0.0) * seconds if idle
                                      else 0.0)
        out["redis_calls"] = after.calls - before.calls
        out["redis_usec"] = after.usec - before.usec
        out["redis_bytes_in"] = after.bytes_in - before.bytes_in
        if idle:
            for counter in ("redis_calls", "redis_usec", "redis_bytes_in"):
                out[counter] -= self.idle_per_s.get(counter, 0.0) * seconds
        out["seconds"] = seconds
        return out

    async def learn_background(self, seconds: float) -> None:
        """What the stack spends per second doing nothing, as it stands now: taken off each step."""
        start = self.read()
        await asyncio.sleep(seconds)
        end = self.read()
        self.idle_per_s = {c: v / (end.at - start.at)
                           for c, v in self.cost(start, end, idle=False).items() if c != "seconds"}

    def memory(self) -> dict:
        found = unique_memory(self._components())
        with redis.Redis(port=self.redis_port) as r:
            found["redis"] = r.info("memory")["used_memory"] / 2**20
        return found


def gateway_sums(urls: list[str], *series: str) -> list[float]:
    """Each of `series` (the start of a metric's lines: a name, or a name and its labels) summed
    over its lines and over the gateways' /metrics."""
    sums = [0.0] * len(series)
    for url in urls:
        for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
            for i, start in enumerate(series):
                if line.startswith(start):
                    sums[i] += float(line.split()[-1])
    return sums
