"""Metrics of a game host process (prometheus_client, a registry of its own, read through
`GameHost.metrics()`), and the event-loop lag probe that hosts and gateways share."""
from __future__ import annotations

import asyncio
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
LAG_INTERVAL = 0.25  # seconds between two probes of the event loop


class HostMetrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.loop_lag = Histogram("ww_host_loop_lag_seconds",
                                  "How late the host's event loop ran a timer (busy or blocked loop)",
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
        self.mailbox = Gauge("ww_host_mailbox_requests",
                             "Requests waiting in the mailboxes of all rooms here", registry=r)
        self.mailbox_max = Gauge("ww_host_mailbox_max_requests",
                                 "Requests waiting in the fullest mailbox here", registry=r)

    def observe_persist(self, seconds: float, requests: int) -> None:
        self.persist_seconds.observe(seconds)
        self.persist_requests.observe(requests)

    def text(self) -> str:
        return generate_latest(self.registry).decode()


async def watch_loop_lag(observe: Callable[[float], None], interval: float = LAG_INTERVAL) -> None:
    """Forever: sleep `interval`, report how much later than asked the loop woke us."""
    loop = asyncio.get_running_loop()
    while True:
        start = loop.time()
        await asyncio.sleep(interval)
        observe(max(0.0, loop.time() - start - interval))
