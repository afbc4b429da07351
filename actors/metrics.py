"""Metrics of a game host process, and the event-loop lag probe that hosts and gateways share.

Each host keeps them in a prometheus_client registry of its own (read through `GameHost.metrics()`,
e.g. by loadtest/stages.py). Inside Ray, `export_to_ray` also feeds them to Ray's metrics API,
which every Ray node's metrics agent serves on its `--metrics-export-port` with a `ray_` prefix
(`ray_ww_host_rooms{host=...}`): the cluster's Prometheus scrapes the Ray nodes as it scrapes the
gateways, and no host process needs a port of its own."""
from __future__ import annotations

import asyncio
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
LAG_INTERVAL = 0.25  # seconds between two probes of the event loop
EXPORT_INTERVAL = 5.0  # seconds between two copies of the gauges to Ray (it exports every 10 s)


class HostMetrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.loop_lag = Histogram("ww_host_loop_lag_seconds",
                                  "How late the host's event loop ran a timer "
                                  "(busy or blocked loop)",
                                  buckets=LATENCY_BUCKETS, registry=r)
        self.persist_seconds = Histogram("ww_host_persist_seconds",
                                         "One room persist (snapshot + events, one Lua call)",
                                         buckets=LATENCY_BUCKETS, registry=r)
        self.persist_requests = Histogram("ww_host_persist_requests",
                                          "Requests made durable by one persist (group commit)",
                                          buckets=GROUP_BUCKETS, registry=r)
        self.inbox_requests = Histogram("ww_host_inbox_requests",
                                        "Requests taken from the inbox at once",
                                        buckets=GROUP_BUCKETS, registry=r)
        self.rooms = Gauge("ww_host_rooms", "Rooms held", registry=r)
        self.players = Gauge("ww_host_players", "Players seated in the rooms held", registry=r)
        self.restarts = Counter("ww_host_restarts", "Restarts of this host's process by Ray "
                                "(1 in the process that replaced a dead one)", registry=r)
        self.mailbox = Gauge("ww_host_mailbox_requests",
                             "Requests waiting in the mailboxes of all rooms here", registry=r)
        self.mailbox_max = Gauge("ww_host_mailbox_max_requests",
                                 "Requests waiting in the fullest mailbox here", registry=r)

        self._ray: dict | None = None  # Ray's counterparts, once exported

    def observe_persist(self, seconds: float, requests: int) -> None:
        self.persist_seconds.observe(seconds)
        self.persist_requests.observe(requests)
        if self._ray:
            self._ray["persist_seconds"].observe(seconds)
            self._ray["persist_requests"].observe(requests)

    def observe_lag(self, seconds: float) -> None:
        self.loop_lag.observe(seconds)
        if self._ray:
            self._ray["loop_lag"].observe(seconds)

    def text(self) -> str:
        return generate_latest(self.registry).decode()

    def export_to_ray(self, host: str) -> None:
        """From now on, observations also go to Ray's metrics, tagged with the host's name."""
        from ray.util import metrics as ray_metrics

        def histogram(metric: Histogram, buckets) -> object:
            return ray_metrics.Histogram(metric._name, metric._documentation, list(buckets),
                                         tag_keys=("host",))

        self._ray = {
            "loop_lag": histogram(self.loop_lag, LATENCY_BUCKETS),
            "persist_seconds": histogram(self.persist_seconds, LATENCY_BUCKETS),
            "persist_requests": histogram(self.persist_requests, GROUP_BUCKETS),
            **{name: ray_metrics.Gauge(getattr(self, name)._name,
                                       getattr(self, name)._documentation, tag_keys=("host",))
               for name in self._GAUGES},
            "restarts": ray_metrics.Counter(self.restarts._name, self.restarts._documentation,
                                            tag_keys=("host",)),
        }
        for metric in self._ray.values():
            metric.set_default_tags({"host": host})
        if self.restarts._value.get():
            self._ray["restarts"].inc(self.restarts._value.get())

    _GAUGES = ("rooms", "players", "mailbox", "mailbox_max")

    def copy_gauges(self) -> None:
        """Ray's gauges hold what was last set: copy the sampled values of ours."""
        for name in self._GAUGES:
            for sample in getattr(self, name).collect()[0].samples:
                self._ray[name].set(sample.value)


async def export_gauges(metrics: HostMetrics, interval: float = EXPORT_INTERVAL) -> None:
    """Forever: copy the host's gauges to Ray's every `interval`."""
    while True:
        metrics.copy_gauges()
        await asyncio.sleep(interval)


async def watch_loop_lag(observe: Callable[[float], None], interval: float = LAG_INTERVAL) -> None:
    """Forever: sleep `interval`, report how much later than asked the loop woke us."""
    loop = asyncio.get_running_loop()
    while True:
        start = loop.time()
        await asyncio.sleep(interval)
        observe(max(0.0, loop.time() - start - interval))
