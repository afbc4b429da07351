"""Where a command waits, stage by stage: the gateways' /metrics and every game host's
`GameHost.metrics()`, read at the start and the end of a window, as percentiles of what happened
in between (from the histogram buckets: "<= bucket bound").

    .venv/bin/python -m loadtest.stages --gateways http://127.0.0.1:P1,http://127.0.0.1:P2 \\
        --ray-address 127.0.0.1:R --prefix PREFIX --seconds 30

The ramp (loadtest/ramp.py) reads them around every step's hold and prints them with the step.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families

# (metric, label filter) in the order a command meets them, then the welcome and the loops.
STAGES = (
    ("ww_inbox_push_requests", None),
    ("ww_host_inbox_requests", None),
    ("ww_host_mailbox_max_requests", None),
    ("ww_host_persist_seconds", None),
    ("ww_host_persist_requests", None),
    ("ww_command_seconds", None),
    ("ww_ack_wait_seconds", None),
    ("ww_socket_queue_frames", None),
    ("ww_welcome_seconds", ("stage", "total")),
    ("ww_welcome_seconds", ("stage", "welcome")),
    ("ww_welcome_seconds", ("stage", "subscribe")),
    ("ww_loop_lag_seconds", None),
    ("ww_host_loop_lag_seconds", None),
    ("ww_ws_late_joins", None),  # counters: how many in the window
    ("ww_ws_dropped", None),
)


def buckets(texts: list[str]) -> dict:
    """(metric, labels) -> {le: cumulative count} summed over every process; gauges as
    {"value"}, counters as {"total"}."""
    out: dict = defaultdict(lambda: defaultdict(float))
    for text in texts:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = {k: v for k, v in sample.labels.items() if k != "le"}
                if sample.name.endswith("_bucket"):
                    key = (family.name, tuple(sorted(labels.items())))
                    out[key][float(sample.labels["le"])] += sample.value
                elif family.type == "gauge":
                    out[(family.name, tuple(sorted(labels.items())))]["value"] += sample.value
                elif family.type == "counter" and sample.name.endswith("_total"):
                    out[(family.name, tuple(sorted(labels.items())))]["total"] += sample.value
    return out


def percentile(before: dict, after: dict, q: float) -> float | None:
    bounds = sorted(b for b in after if b != "value")
    counts = [after[b] - before.get(b, 0.0) for b in bounds]
    total = counts[-1] if counts else 0
    if total <= 0:
        return None
    for bound, cumulative in zip(bounds, counts):
        if cumulative >= q * total:
            return bound
    return bounds[-1]


def read(gateways: list[str], hosts: list) -> list[str]:
    texts = []
    for url in gateways:
        with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=60) as r:  # a busy loop
            texts.append(r.read().decode())
    if hosts:
        import ray

        texts += ray.get([h.metrics.remote() for h in hosts], timeout=30)
    return texts


def read_apart(gateways: list[str], ray_address: str | None, prefix: str) -> list[str]:
    """`read`, with the hosts read by a child process: a Ray driver that stays attached outlives
    its cluster badly (it exits the whole process 60 s after the head is gone), and the ramp
    stops one stack's head before it starts the next layout's."""
    texts = read(gateways, [])
    if ray_address:
        child = subprocess.run([sys.executable, "-m", "loadtest.stages", "--ray-address",
                                ray_address,
                                "--prefix", prefix, "--dump-hosts"],
                               capture_output=True, text=True, timeout=120, check=True)
        texts += json.loads(child.stdout)
    return texts


def host_handles(ray_address: str | None, prefix: str, namespace: str = "werewolf") -> list:
    if not ray_address:
        return []
    import ray

    from loadtest.stack import ray_driver

    if not ray.is_initialized():
        ray_driver(address=ray_address, namespace=namespace, log_to_driver=False)
    names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
             if a["namespace"] == namespace and a["name"].startswith(f"{prefix}-host-")]
    return [ray.get_actor(name, namespace=namespace) for name in names]


def report(before: list[str], after: list[str]) -> dict:
    """stage name -> {"p50", "p99", "count"} (a gauge: {"value"}; a counter: {"added"})."""
    a, b = buckets(before), buckets(after)
    out = {}
    for metric, label in STAGES:
        matches = [key for key in b if key[0] == metric and (label is None or label in key[1])]
        for key in matches:
            name = metric + (f"{{{','.join(v for _, v in key[1])}}}" if key[1] else "")
            if "value" in b[key]:
                out[name] = {"value": b[key]["value"]}
            elif "total" in b[key]:
                out[name] = {"added": int(b[key]["total"] - a.get(key, {}).get("total", 0.0))}
            else:
                inf = b[key].get(float("inf"), 0.0) - a.get(key, {}).get(float("inf"), 0.0)
                out[name] = {"p50": percentile(a.get(key, {}), b[key], 0.5),
                             "p99": percentile(a.get(key, {}), b[key], 0.99), "count": int(inf)}
    return out


def format_report(stages: dict) -> str:
    lines = []
    for name, v in stages.items():
        if "value" in v:
            lines.append(f"  {name:42} now {v['value']:g}")
        elif "added" in v:
            lines.append(f"  {name:42} +{v['added']} in the window")
        elif v["count"]:
            lines.append(f"  {name:42} p50 <= {v['p50']:g}  p99 <= {v['p99']:g}  ({v['count']})")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gateways", default="", help="comma-separated gateway base URLs")
    ap.add_argument("--ray-address", help="also read every game host of --prefix")
    ap.add_argument("--prefix", default="ww")
    ap.add_argument("--namespace", default="werewolf")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--dump-hosts", action="store_true",
                    help="print the hosts' metrics texts as a JSON list, and exit")
    args = ap.parse_args(argv)
    hosts = host_handles(args.ray_address, args.prefix, args.namespace)
    if args.dump_hosts:
        print(json.dumps(read([], hosts)))
        return 0
    gateways = args.gateways.split(",")
    before = read(gateways, hosts)
    time.sleep(args.seconds)  # the window measured
    print(format_report(report(before, read(gateways, hosts))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
