"""Latency through the real gateway (issue 3): room creation, action -> ack, chat -> broadcast.

    .venv/bin/python -m loadtest.latency            # both layouts, 1 and 100 concurrent rooms

For each hosting layout (`WW_GAMES_PER_ACTOR=1`: one Ray actor per game; `=100`) it starts the real
stack (private Ray head, gateway processes, shared Redis under a random prefix), runs 1 and then 100
concurrent 18-player tables playing real games with the Locust harness (loadtest/locustfile.py:
HTTP + WebSocket, the same tables as the ramp), and while each load holds it creates
`--probe-rooms` extra rooms one after another over HTTP to time room creation. It prints p50/p99 of:
room creation (POST /api/rooms), act -> ack, chat -> ack, and chat -> arrival at every other reader.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import psutil

from loadtest.core import TABLE_MODELS
from loadtest.measure import cpu_percent, cpu_seconds, percentile
from loadtest.runner import count, pct, start_load
from loadtest.stack import ROOT


def probe_room_creation(url: str, n: int, gap: float, out: list, stop: threading.Event,
                        errors: list | None = None) -> None:
    for i in range(n):
        if stop.is_set():
            return
        body = json.dumps({"name": f"probe{i}"}).encode()
        req = urllib.request.Request(url + "/api/rooms", data=body,
                                     headers={"content-type": "application/json"})
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                r.read()
                if r.status == 201:
                    out.append(1000 * (time.perf_counter() - t0))
        except OSError as e:
            if errors is not None:
                errors.append(f"{type(e).__name__} after {time.perf_counter() - t0:.1f}s")
        stop.wait(gap)


def measure(layout: int, loads: list, args, out: Path) -> list:
    rows = []
    with ExitStack() as stack:
        running, lc = start_load(stack, str(layout), args, {"WW_LT_VERIFY_SEATS": "1",
                                                              "WW_LT_MODEL": args.model},
                                 out / f"latency-{layout}")
        prev = 0
        for rooms in loads:
            lc.reset()
            lc.swarm(rooms, args.spawn_rate, running.urls[0])
            lc.wait_connected(rooms, 18 * (rooms - prev), 120 + rooms / args.spawn_rate)
            time.sleep(3)
            lc.reset()
            comps = {**running.components(), "locust": lc.processes()}
            a = cpu_seconds(comps)
            load0 = os.getloadavg()[0]
            created: list = []
            probe_errors: list = []
            stop = threading.Event()
            prober = threading.Thread(target=probe_room_creation,
                                      args=(running.urls[0], args.probe_rooms,
                                            max(0.5, args.hold / (args.probe_rooms + 1)), created,
                                            stop, probe_errors))
            t0 = time.monotonic()
            prober.start()
            time.sleep(args.hold)
            stop.set()
            prober.join(timeout=60)
            held = time.monotonic() - t0
            cpu, _ = cpu_percent(a, cpu_seconds({**running.components(), "locust": lc.processes()}),
                                 held)
            st = lc.stats()
            fails = sum(count(r, "Failure Count") for k, r in st.items()
                        if k not in ("_state", "Aggregated"))
            row = {
                "layout": f"games_per_actor={layout}", "rooms": rooms,
                "create_p50": percentile(created, 50), "create_p99": percentile(created, 99),
                "create_n": len(created),
                "act_p50": pct(st.get("ack:act"), "50%"), "act_p99": pct(st.get("ack:act"), "99%"),
                "act_n": count(st.get("ack:act")),
                "chat_ack_p50": pct(st.get("ack:chat"), "50%"),
                "chat_ack_p99": pct(st.get("ack:chat"), "99%"),
                "bcast_p50": pct(st.get("broadcast"), "50%"),
                "bcast_p99": pct(st.get("broadcast"), "99%"),
                "bcast_n": count(st.get("broadcast")), "failures": fails,
                "failure_kinds": sorted({f"{x.get('Name')}: {x.get('Error', '')[:60]} "
                                         f"x{x.get('Occurrences')}"
                                         for x in lc.failures()}),
                "probe_errors": probe_errors[:5], "machine_mem_used_gb":
                    round((psutil.virtual_memory().total
                           - psutil.virtual_memory().available) / 2**30, 1),
                "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
                "cpu": {k: round(v, 1) for k, v in sorted(cpu.items())},
            }
            rows.append(row)
            print(fmt_row(row), flush=True)
            prev = rooms
    return rows


def f(v):
    return "-" if v is None else f"{v:.0f}"


HEADER = ("| layout | rooms | room creation p50/p99 ms (n) | act->ack p50/p99 ms (n) | "
          "chat->ack p50/p99 ms | chat->broadcast p50/p99 ms (n) | failures | load 1-min |")


def fmt_row(r: dict) -> str:
    return (f"| {r['layout']} | {r['rooms']} | {f(r['create_p50'])}/{f(r['create_p99'])} "
            f"({r['create_n']}) | "
            f"{f(r['act_p50'])}/{f(r['act_p99'])} ({r['act_n']}) | "
            f"{f(r['chat_ack_p50'])}/{f(r['chat_ack_p99'])} | "
            f"{f(r['bcast_p50'])}/{f(r['bcast_p99'])} ({r['bcast_n']}) | {r['failures']} | "
            f"{r['load'][1]} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layouts", default="1,100", help="games per Ray actor, comma list")
    ap.add_argument("--rooms", default="1,100", help="concurrent tables, comma list")
    ap.add_argument("--hold", type=float, default=60)
    ap.add_argument("--probe-rooms", type=int, default=20)
    ap.add_argument("--gateways", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--spawn-rate", type=float, default=10)
    ap.add_argument("--warm-actors", type=int, default=2)
    ap.add_argument("--model", default="rush", choices=TABLE_MODELS,
                    help="the tables' load model and the stack's phase durations")
    ap.add_argument("--ws", help="the gateways' WebSocket implementation (default: theirs)")
    ap.add_argument("--out", default=str(ROOT / "loadtest" / "results"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"latency run {time.strftime('%H:%M:%S', time.gmtime())} UTC, "
          f"load {os.getloadavg()}", flush=True)
    rows = []
    for layout in args.layouts.split(","):
        rows += measure(int(layout), [int(x) for x in args.rooms.split(",")], args, out)
    print("\n" + HEADER + "\n|" + "---|" * (HEADER.count("|") - 1))
    for r in rows:
        print(fmt_row(r))
    for r in rows:
        if r["failure_kinds"] or r["probe_errors"]:
            print(f"{r['layout']} {r['rooms']} rooms: {r['failure_kinds']} "
                  f"probe: {r['probe_errors']}")
    (out / "latency.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
