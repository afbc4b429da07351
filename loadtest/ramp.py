"""The ramp: start a stack, grow the number of 18-player tables in steps, hold each, print a table.

    .venv/bin/python -m loadtest.ramp                       # baseline, then both layouts
    .venv/bin/python -m loadtest.ramp --layouts 100 --steps 50,100,250 --hold 60

For each layout (`baseline` = loadtest/baseline.py, `1` = one Ray actor per game, `N` = N games per
Ray actor) it starts the stack (n gateway processes, a private Ray head, the shared Redis under a
random WW_PREFIX) and a Locust master + workers (loadtest/locustfile.py), then for each step:
swarm to `rooms` tables, wait until every new table has connected, reset the stats, hold, and read
Locust's percentiles plus CPU and memory of every component (gateway, Ray hosts, Ray system, Redis,
Locust). It stops at the first step that breaks (p99 broadcast over --break-p99 ms, failures over
--break-errors, any lost/duplicated/reordered event, tables that could not all connect) and writes
results JSON, a markdown table and a PNG plot into --out. Optionally py-spy profiles the busiest
processes of every step (--profile): while its tables arrive and while it holds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import psutil
import redis

from loadtest import stages
from loadtest.core import TABLE_MODELS
from loadtest.measure import client_sockets, cpu_percent, cpu_seconds, percentile, rss_mb
from loadtest.runner import fmt, make_row, pct, start_load
from loadtest.stack import ROOT, tear_down_on_signals

def subscribers_dropped() -> int | None:
    """Clients Redis has disconnected for an overflowing output buffer (a pub/sub reader that fell
    behind; redis-py reconnects it silently), machine-wide; None if Redis could not be asked or
    does not count them (before 7.2; its log says "overcoming of output buffer limits")."""
    try:
        with redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")) as r:
            dropped = r.info("stats").get("client_output_buffer_limit_disconnections")
    except redis.RedisError:
        return None
    return None if dropped is None else int(dropped)


def profile(pids: list, seconds: int, out: Path) -> list:
    """py-spy record (raw collapsed stacks) of each pid, in parallel; returns the files."""
    exe = Path(sys.executable).with_name("py-spy")
    procs, files = [], []
    for comp, pid in pids:
        f = out / f"{comp}-{pid}.txt"
        procs.append(subprocess.Popen(
            [str(exe) if exe.exists() else "py-spy", "record", "-p", str(pid), "-d", str(seconds),
             "-r", "50", "-f", "raw", "-o", str(f), "--nonblocking"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        files.append(f)
    return procs, files


def profile_busiest(a: dict, b: dict, seconds: float, n: int, out: Path):
    """py-spy, for 20 s, the n processes that used the most CPU between snapshots a and b
    (returns at once: (py-spy processes, their files))."""
    _, per_pid = cpu_percent(a, b, seconds)
    busiest = sorted(per_pid.items(), key=lambda kv: -kv[1][1])[:n]
    out.mkdir(parents=True, exist_ok=True)
    return profile([(c, pid) for pid, (c, _v) in busiest], 20, out)


def profile_arrivals(running, lc, n: int, out: Path, warmup: float = 10, window: float = 5):
    """While tables arrive: the n processes busiest over `window` s, `warmup` s into the
    arrivals."""
    time.sleep(warmup)
    components = {**running.components(), "locust": lc.processes()}
    a = cpu_seconds(components)
    time.sleep(window)
    return profile_busiest(a, cpu_seconds(components), window, n, out)


def wait_all(procs: list) -> None:
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def summarize_profile(path: Path, top: int = 12) -> dict:
    """Self and inclusive shares of functions in a py-spy raw (collapsed) file."""
    self_c, incl_c, total = Counter(), Counter(), 0
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        n = int(n)
        total += n
        frames = [f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1]
                  if " (" in f else f for f in stack.split(";")]
        self_c[frames[-1]] += n
        for f in set(frames):
            incl_c[f] += n
    if not total:
        return {}
    return {"samples": total,
            "self": [(f, round(100 * c / total, 1)) for f, c in self_c.most_common(top)],
            "inclusive": [(f, round(100 * c / total, 1)) for f, c in incl_c.most_common(top * 2)]}


class CreationProbe:
    """Opens one room a second (round robin over the gateways) while a step holds: the creation
    latency with the step's rooms running, apart from the tables' own arrival burst. The rooms
    probed stay empty and close as idle lobbies do."""

    def __init__(self, urls: list, every: float = 1.0) -> None:
        self.urls, self.every = urls, every
        self.ms: list = []
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        n = 0
        while not self._stop.wait(self.every):
            url = self.urls[n % len(self.urls)] + "/api/rooms"
            n += 1
            request = urllib.request.Request(url, data=b'{"name": "Probe"}', method="POST",
                                             headers={"Content-Type": "application/json"})
            t0 = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=30) as r:
                    r.read()
                self.ms.append(1000 * (time.perf_counter() - t0))
            except OSError:
                self.failures += 1

    def percentile(self, q: float) -> float | None:
        return percentile(self.ms, q)


def run_layout(layout: str, steps: list, args, out: Path) -> list:
    rows = []
    env = {"WW_LT_MODEL": args.model, "WW_LT_CHAT_INTERVAL": args.chat_interval,
           "WW_LT_NIGHT_CHAT_INTERVAL": args.night_chat_interval,
           "WW_LT_VERIFY_SEATS": str(args.verify_seats), "WW_LT_THINK": args.think,
           "WW_LT_BROADCAST_SAMPLE": str(args.broadcast_sample)}
    with ExitStack() as stack:
        print(f"\n== {layout}: starting the stack", flush=True)
        running, lc = start_load(stack, layout, args, env, out / f"locust-{layout}")
        prev = 0
        for rooms in steps:
            avail = psutil.virtual_memory().available / 2**30
            if avail < args.min_free_gb:
                print(f"== {layout}: stop before {rooms} rooms: {avail:.1f} GB available "
                      f"< --min-free-gb {args.min_free_gb}", flush=True)
                if rows:
                    rows[-1]["broke"] = (rows[-1]["broke"] + "; " if rows[-1]["broke"] else "") + \
                        f"memory: {avail:.1f} GB left"
                break
            t_step = time.monotonic()
            dropped0 = subscribers_dropped()
            lc.reset()
            lc.swarm(rooms, args.spawn_rate, running.urls[0])
            need = 18 * (rooms - prev)
            arrival_profiles = (profile_arrivals(running, lc, args.profile,
                                                 out / f"arrival-{layout}-{rooms}")
                                if args.profile else ([], []))
            connected = lc.wait_connected(rooms, need,
                                          args.spawn_timeout + (rooms - prev) / args.spawn_rate)
            wait_all(arrival_profiles[0])
            spawned_ok = connected >= need
            arrival = lc.stats()  # the new tables' connects and room creations, as they arrived
            time.sleep(args.settle)
            lc.reset()
            comps = {**running.components(), "locust": lc.processes()}
            a = cpu_seconds(comps)
            metrics_before = read_stages(running) if layout != "baseline" else None
            t0 = time.monotonic()
            load0 = os.getloadavg()[0]
            sys0 = psutil.cpu_times()
            prof_files = []
            probe = CreationProbe(running.urls) if layout != "baseline" else None
            if probe:
                probe.start()
            if args.profile and args.hold > 30:
                time.sleep(args.hold - 25)
                mid = cpu_seconds({**running.components(), "locust": lc.processes()})
                pprocs, prof_files = profile_busiest(a, mid, time.monotonic() - t0, args.profile,
                                                     out / f"profile-{layout}-{rooms}")
                time.sleep(max(0.0, args.hold - (time.monotonic() - t0)))
                wait_all(pprocs)
            else:
                time.sleep(args.hold)
            if probe:
                probe.stop()
            comps = {**running.components(), "locust": lc.processes()}
            b = cpu_seconds(comps)
            held = time.monotonic() - t0
            cpu, per_pid = cpu_percent(a, b, held)
            sys1 = psutil.cpu_times()
            busy = sum(sys1) - sum(sys0)
            machine = 100.0 * (1 - (sys1.idle - sys0.idle) / busy) if busy else None
            mem = rss_mb(comps)
            st = lc.stats()
            failures = lc.failures()
            socks = client_sockets(lc.processes())
            row = make_row(layout, rooms, st, failures, cpu, mem, socks, held, spawned_ok,
                           load0, os.getloadavg()[0], time.monotonic() - t_step,
                           args.break_p99, args.break_errors)
            row.update(arrive_connect_p50=pct(arrival.get("connect"), "50%"),
                       arrive_connect_p99=pct(arrival.get("connect"), "99%"),
                       arrive_create_p50=pct(arrival.get("create_room"), "50%"),
                       arrive_create_p99=pct(arrival.get("create_room"), "99%"))
            if probe:
                row.update(held_create_p50=probe.percentile(50),
                           held_create_p99=probe.percentile(99),
                           held_create_n=len(probe.ms), held_create_failures=probe.failures)
            row["profiles"] = {f.name: summarize_profile(f) for f in prof_files}
            row["arrival_profiles"] = {f.name: summarize_profile(f) for f in arrival_profiles[1]}
            if metrics_before is not None:
                metrics_after = read_stages(running)
                if metrics_after is not None:
                    row["stages"] = stages.report(metrics_before, metrics_after)
            dropped1 = subscribers_dropped()
            row["redis_dropped_readers"] = (dropped1 - dropped0 if None not in (dropped0, dropped1)
                                            else None)
            row["machine_cpu_pct"] = round(machine, 1) if machine is not None else None
            row["ours_cpu_pct_of_machine"] = round(sum(cpu.values()) / psutil.cpu_count(), 1)
            row["busiest"] = [(c, pid, round(v, 1)) for pid, (c, v) in
                              sorted(per_pid.items(), key=lambda kv: -kv[1][1])[:4]]
            rows.append(row)
            print(format_row(row), flush=True)
            if row["redis_dropped_readers"] is not None:
                print(f"   Redis dropped {row['redis_dropped_readers']} clients for their output "
                      "buffer during the step", flush=True)
            if row.get("stages"):
                print(stages.format_report(row["stages"]), flush=True)
            (out / "results.json").write_text(json.dumps(ALL + rows, indent=1))
            if row["broke"]:
                print(f"== {layout}: broke at {rooms} rooms: {row['broke']}", flush=True)
                break
            prev = rooms
    return rows


def read_stages(running) -> list | None:
    """The stage metrics of every gateway and host, or None (said) if one could not be read: a
    step's figures do not depend on them."""
    try:
        return stages.read_apart(running.urls, running.ray_address, running.prefix)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"   (stage metrics not read: {e!r})", flush=True)
        return None


HEADER = ("| layout | rooms | sockets | load | arriving: welcome p50/p99, create p50/p99 | "
          "create while held p50/p99 | ack chat p50/p99 | ack act p50/p99 | "
          "broadcast p50/p99 | deliveries/s | frames/s | games | fail | machine CPU % (ours) | "
          "CPU % gw / ray-hosts / "
          "ray-sys / redis / locust | RSS MB gw / ray-hosts / ray-sys / locust | broke |")


def format_row(r: dict) -> str:
    c, m = r["cpu"], r["rss_mb"]
    return (f"| {r['layout']} | {r['rooms']} | {r['sockets']} | {r['load'][1]} | "
            f"{fmt(r.get('arrive_connect_p50'))}/{fmt(r.get('arrive_connect_p99'))}, "
            f"{fmt(r.get('arrive_create_p50'))}/{fmt(r.get('arrive_create_p99'))} | "
            f"{fmt(r.get('held_create_p50'))}/{fmt(r.get('held_create_p99'))} | "
            f"{fmt(r['ack_chat_p50'])}/{fmt(r['ack_chat_p99'])} | "
            f"{fmt(r['ack_act_p50'])}/{fmt(r['ack_act_p99'])} | "
            f"{fmt(r['bcast_p50'])}/{fmt(r['bcast_p99'])} | {r['deliveries_s']} | "
            f"{r['frames_s']} | "
            f"{r['games']} | {r['failures']} | {fmt(r.get('machine_cpu_pct'))} "
            f"({fmt(r.get('ours_cpu_pct_of_machine'))}) | "
            f"{c.get('gateway', 0):.0f} / {c.get('ray-hosts', 0):.0f} / "
            f"{c.get('ray-system', 0):.0f} / "
            f"{c.get('redis', 0):.0f} / {c.get('locust', 0):.0f} | "
            f"{m.get('gateway', 0)} / {m.get('ray-hosts', 0)} / {m.get('ray-system', 0)} / "
            f"{m.get('locust', 0)} | "
            f"{r['broke'] or 'ok'} |")


def ratios(rows: list) -> list:
    """Full stack vs baseline at the same room count, from this run."""
    base = {r["rooms"]: r for r in rows if r["layout"] == "baseline"}
    out = []
    for r in rows:
        b = base.get(r["rooms"])
        if r["layout"] == "baseline" or not b:
            continue

        def per_frame(x):   # server CPU per frame delivered to a client (events, acks, welcome)
            busy = sum(v for k, v in x["cpu"].items() if k not in ("locust", "redis"))
            return busy / max(x["frames_s"], 1e-9)
        out.append({
            "layout": r["layout"], "rooms": r["rooms"],
            "p99_broadcast_ratio": ((r["bcast_p99"] / b["bcast_p99"])
                                    if r["bcast_p99"] and b["bcast_p99"] else None),
            "server_cpu_per_frame_ratio": per_frame(r) / per_frame(b) if b["frames_s"] else None,
            "deliveries_ratio": (r["deliveries_s"] / b["deliveries_s"] if b["deliveries_s"]
                                 else None),
        })
    return out


def plot(rows: list, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    layouts = list(dict.fromkeys(r["layout"] for r in rows))
    for i, lay in enumerate(layouts):
        col = f"C{i}"
        name = lay if lay == "baseline" else f"{lay} game(s)/actor"
        rs = [r for r in rows if r["layout"] == lay]
        x = [r["rooms"] for r in rs]
        axes[0].plot(x, [r["bcast_p99"] for r in rs], "o-", color=col, label=f"{name} p99")
        axes[0].plot(x, [r["bcast_p50"] for r in rs], "x--", color=col, label=f"{name} p50")
        server = [sum(v for k, v in r["cpu"].items() if k != "locust") for r in rs]
        axes[1].plot(x, server, "o-", color=col, label=f"{name} server")
        axes[1].plot(x, [r["cpu"].get("locust", 0) for r in rs], "x--", color=col,
                     label=f"{name} Locust")
        axes[2].plot(x, [sum(r["rss_mb"].values()) / 1024 for r in rs], "o-", color=col, label=name)
    axes[0].axhline(250, color="grey", lw=0.8, ls=":")
    axes[0].set(xlabel="rooms (18 sockets each)", ylabel="broadcast latency ms", yscale="log",
                title="chat broadcast latency")
    axes[1].set(xlabel="rooms", ylabel="CPU % of one core (2 cores = 200)", title="CPU")
    axes[2].set(xlabel="rooms", ylabel="RSS GB (all components)", title="memory")
    for ax in axes:
        ax.set_xscale("log")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle("werewolf load ramp (2 cores, generator on the same box)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


ALL: list = []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ramp 18-player tables in steps; print a table")
    ap.add_argument("--layouts", default="baseline,200",
                    help="comma list: baseline, 1 (one Ray actor per game), N games per actor")
    ap.add_argument("--steps", default="50,100,250,500,1000,2000")
    ap.add_argument("--steps-one-per-actor", default="25,50,100,200",
                    help="steps for layout 1 (a ~50 MB process per room)")
    ap.add_argument("--hold", type=float, default=60)
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--gateways", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="Locust worker processes")
    ap.add_argument("--spawn-rate", type=float, default=10, help="tables started per second")
    ap.add_argument("--spawn-timeout", type=float, default=60)
    ap.add_argument("--warm-actors", type=int, default=2)
    ap.add_argument("--model", default="human", choices=TABLE_MODELS,
                    help="how tables play (loadtest/core.py MODELS); rush = short phases "
                         "(quickplay: loadtest.quickplay)")
    ap.add_argument("--chat-interval", default="", help="override the model's day chat gap (s)")
    ap.add_argument("--night-chat-interval", default="", help="override its night chat gap (s)")
    ap.add_argument("--think", default="", help="override its think time: min,max seconds")
    ap.add_argument("--broadcast-sample", type=float, default=0.25,
                    help="share of chat deliveries timed (every one costs the generator)")
    ap.add_argument("--ws", help="uvicorn WebSocket implementation of the gateways and the "
                                 "baseline (default: each one's own)")
    ap.add_argument("--verify-seats", type=int, default=1)
    ap.add_argument("--baseline-game-seconds", type=float, default=150)
    ap.add_argument("--break-p99", type=float, default=2000)
    ap.add_argument("--break-errors", type=float, default=0.01)
    ap.add_argument("--min-free-gb", type=float, default=3.0, help="stop a layout below this")
    ap.add_argument("--profile", type=int, default=0,
                    help="py-spy the N busiest processes per step")
    ap.add_argument("--out", default=str(ROOT / "loadtest" / "results"))
    args = ap.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"ramp started {time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()}",
          flush=True)
    for layout in args.layouts.split(","):
        steps = args.steps_one_per_actor if layout == "1" else args.steps
        ALL.extend(run_layout(layout, [int(s) for s in steps.split(",")], args, out))
    print("\n" + HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    for r in ALL:
        print(format_row(r))
    rat = ratios(ALL)
    if rat:
        print("\nfull stack / baseline, same run, same room count:")
        for x in rat:
            print(f"  {x['layout']:>22} {x['rooms']:>5} rooms: "
                  f"p99 broadcast x{fmt(x['p99_broadcast_ratio'], 2)}, "
                  f"server CPU per frame delivered x{fmt(x['server_cpu_per_frame_ratio'], 2)}, "
                  f"deliveries/s x{fmt(x['deliveries_ratio'], 2)}")
    (out / "results.json").write_text(json.dumps({"rows": ALL, "ratios": rat, "args": vars(args)},
                                                  indent=1))
    plot(ALL, out / "ramp.png")
    print(f"\nwrote {out}/results.json and {out}/ramp.png; finished "
          f"{time.strftime('%H:%M:%S', time.gmtime())} UTC", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
