"""loadtest.stages reads what happened between two scrapes: histogram percentiles, gauges as they
are, counters as what they added."""
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from loadtest import stages


def scrape(late_joins: int, waits: list[float], sockets: int) -> str:
    registry = CollectorRegistry()
    Counter("ww_ws_late_joins", "late", registry=registry).inc(late_joins)
    histogram = Histogram("ww_ack_wait_seconds", "ack", buckets=(0.01, 0.1, 1.0), registry=registry)
    for wait in waits:
        histogram.observe(wait)
    Gauge("ww_requests_waiting", "waiting", registry=registry).set(sockets)
    return generate_latest(registry).decode()


def test_a_window_reports_percentiles_of_what_it_saw_and_what_counters_added():
    before = scrape(3, [0.005] * 50, 0)
    after = scrape(5, [0.005] * 50 + [0.05] * 99 + [0.5], 0)
    report = stages.report([before, before], [after, after])  # two processes, summed
    assert report["ww_ws_late_joins"] == {"added": 4}
    assert report["ww_ack_wait_seconds"] == {"p50": 0.1, "p99": 0.1, "count": 200}
    shown = stages.format_report(report)
    assert "ww_ws_late_joins                           +4 in the window" in shown
