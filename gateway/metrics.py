"""Prometheus metrics of one gateway process (its own registry, so several apps can live in one
test process). With `--workers N` each worker answers `/metrics` for itself."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.sockets = Gauge("ww_ws_open_sockets", "Open WebSocket sessions", registry=r)
        self.rooms = Gauge("ww_rooms_with_listeners",
                           "Rooms with at least one socket in this process", registry=r)
        self.messages_in = Counter("ww_ws_messages_in_total", "Client frames received, by type",
                                   ["type"], registry=r)
        self.messages_out = Counter("ww_ws_messages_out_total", "Frames sent to clients, by type",
                                    ["type"], registry=r)
        self.errors = Counter("ww_ws_errors_total", "Error frames sent, by code", ["code"],
                              registry=r)
        self.dropped = Counter("ww_ws_dropped_total",
                               "Sockets closed because their send queue overflowed", registry=r)
        self.command_seconds = Histogram("ww_command_seconds",
                                         "Round trip of a client command to its ack or error",
                                         ["type"], buckets=_LATENCY_BUCKETS, registry=r)
        self.http_seconds = Histogram("ww_http_request_seconds", "HTTP request latency",
                                      ["method", "route", "status"], buckets=_LATENCY_BUCKETS,
                                      registry=r)
        # Hot path: one child per label value, bound once.
        self.out_event = self.messages_out.labels("event")
