"""Prometheus metrics of one gateway process (its own registry, so several apps can live in one
test process). `werewolf serve` runs prometheus_client's multiprocess mode
(PROMETHEUS_MULTIPROC_DIR, one directory per replica shared by its uvicorn workers): whichever
worker answers `/metrics` reports the sum over all of them, so one scrape per replica is enough."""
from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from actors import GROUP_BUCKETS, LATENCY_BUCKETS as _LATENCY_BUCKETS

_QUEUE_BUCKETS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        live = "livesum"  # a gauge is the sum over the replica's living workers
        self.sockets = Gauge("ww_ws_open_sockets", "Open WebSocket sessions", registry=r,
                             multiprocess_mode=live)
        self.rooms = Gauge("ww_rooms_with_listeners",
                           "Rooms with at least one socket in this replica (summed over its "
                           "workers)", registry=r, multiprocess_mode=live)
        self.messages_in = Counter("ww_ws_messages_in_total", "Client frames received, by type",
                                   ["type"], registry=r)
        self.messages_out = Counter("ww_ws_messages_out_total", "Frames sent to clients, by type",
                                    ["type"], registry=r)
        self.errors = Counter("ww_ws_errors_total", "Error frames sent, by code", ["code"],
                              registry=r)
        self.refused_here = Counter("ww_ws_refused_here_total",
                                    "Commands refused rate_limited by the socket's copy of the "
                                    "room's limit, without a trip to the room, by type", ["type"],
                                    registry=r)
        self.dropped = Counter("ww_ws_dropped_total",
                               "Sockets closed because their send queue overflowed", registry=r)
        self.command_seconds = Histogram("ww_command_seconds",
                                         "Round trip of a client command to its ack or error",
                                         ["type"], buckets=_LATENCY_BUCKETS, registry=r)
        self.http_seconds = Histogram("ww_http_request_seconds", "HTTP request latency",
                                      ["method", "route", "status"], buckets=_LATENCY_BUCKETS,
                                      registry=r)
        self.loop_lag = Histogram("ww_loop_lag_seconds",
                                  "How late this process's event loop ran a timer "
                                  "(busy or blocked)",
                                  buckets=_LATENCY_BUCKETS, registry=r)
        self.ack_wait = Histogram("ww_ack_wait_seconds",
                                  "From a command's reply reaching this process to its ack leaving "
                                  "the socket", buckets=_LATENCY_BUCKETS, registry=r)
        self.welcome_seconds = Histogram("ww_welcome_seconds",
                                         "hello received -> welcome (and replay) sent, by stage",
                                         ["stage"], buckets=_LATENCY_BUCKETS, registry=r)
        self.late_joins = Counter("ww_ws_late_joins_total",
                                  "Sockets whose queue joined the room's channel after events past "
                                  "their welcome were published (those are read from the log)",
                                  registry=r)
        self.events_read = Counter("ww_redis_events_read_total",
                                   "Room events this process read from Redis (pub/sub messages "
                                   "and refills from the log)", registry=r)
        self.socket_queue = Histogram("ww_socket_queue_frames",
                                      "Frames a socket's writer found queued when it woke "
                                      "(written in one pass)",
                                      buckets=_QUEUE_BUCKETS, registry=r)
        self.inbox_push = Histogram("ww_inbox_push_requests",
                                    "Requests in one pipeline of pushes to hosts' inboxes",
                                    buckets=GROUP_BUCKETS, registry=r)
        self.requests_waiting = Gauge("ww_requests_waiting",
                                      "Requests to hosts waiting for their reply", registry=r,
                                      multiprocess_mode=live)
        # Hot path: one child per label value, bound once. The events written through as they
        # arrive (`Session.write_through`: a frame each) are counted in a plain int, added to the
        # counter by `flush` (every second, and before an exposition): in multiprocess mode an
        # inc is a lock and a write to a mapped file.
        self.out_event = self.messages_out.labels("event")
        self.events_written = 0
        self.welcome_stages = {stage: self.welcome_seconds.labels(stage)
                               for stage in ("subscribe", "welcome", "replay", "total")}


    def flush(self) -> None:
        """Add the events counted since the last flush to their counter."""
        if self.events_written:
            written, self.events_written = self.events_written, 0
            self.out_event.inc(written)

    def text(self) -> bytes:
        """The exposition of this process, or in multiprocess mode of every worker of the
        replica."""
        self.flush()
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged)
        return generate_latest(merged)

    @staticmethod
    def process_exited() -> None:
        """A worker that stops drops its live gauges from the replica's sums."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            mark_process_dead(os.getpid())
