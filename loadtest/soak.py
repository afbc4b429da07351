"""Soak: many rooms of the `human` load model for a long time; does anything grow or leak?

    .venv/bin/python -m loadtest.soak --rooms 500 --minutes 30          # the full run (not in CI)
    .venv/bin/python -m loadtest.soak --rooms 50 --minutes 3 --short-phases --finished-ttl 60

It starts the real stack (private Ray head, `--gateways` gateway processes, a private redis-server
keeping an append-only file: devstack/redis_servers.py) and a Locust cluster playing `--rooms`
18-seat tables back to back (loadtest/locustfile.py, `human` model: 2-15 s to answer a prompt, a
chat line every 20-40 s). Every `--sample` seconds it reads the RSS of every process (gateways,
Ray hosts, Ray's own processes, Redis, Locust) and Redis's used_memory; at the end it prints each
component's RSS first -> last and the steepest per-process slope (MB/min, least squares) over the
whole run and over its settled part (the last `--settled` minutes: the games' length after the
first tables finish, when tables end and new ones arrive at the same rate), the
errors Locust counted (requests failed, and the stream checks: lost, duplicated, reordered
events), the server's CPU per answered command over the settled part (each server component's
user + system seconds against the gateways' `ww_command_seconds_count`: the commands a room
answered, acks and refusals; the frames sent and the Redis commands run per command too), the
Redis memory one finished room holds (MEMORY USAGE of its keys), and whether the keys of the rooms
that finished expired `--finished-ttl` s later (WW_FINISHED_TTL). It writes
soak.json (the samples too) and soak.png (each component's RSS over time) to `--out`.
`--short-phases` plays the `rush` phase durations (a game in ~2 min instead of ~15) so a short run
sees rooms finish and expire; think times and chat stay the human ones. `--durations` sets phase
durations of its own (JSON, seconds). `--model bots` plays the tables as the bots do (issue 33:
each seat a `bots.Bot`, its own think times and lines) instead of at random; the games completed,
their mean length and the chat lines a game had are printed too, to compare the two models.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import psutil
import redis

from actors.store import Keys
from devstack.redis_servers import redis_server
from loadtest.core import MODELS, RUSH_DURATIONS
from loadtest.measure import SERVER as MEASURED_SERVER
from loadtest.measure import Meter, gateway_sums, rss_by_pid
from loadtest.runner import count, locust_cluster
from loadtest.stack import real_stack, tear_down_on_signals


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, MB) points; 0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0


SERVER = (*MEASURED_SERVER, "redis")
# The gateways' series read per command: the commands a room answered (acks and refusals), frames.
COUNTED = ("ww_command_seconds_count", "ww_ws_messages_out_total")


def per_command(first: dict, last: dict) -> dict:
    """Between two readings ({"reading": a capacity Meter's Reading, "commands", "frames"}): each
    server component's CPU per answered command (µs), the frames and Redis calls per command and
    the rates. A process is counted over the part of the window it lived through both readings;
    one that started or died inside it is left out (its share is small next to the window's)."""
    before, after = first["reading"], last["reading"]
    commands = last["commands"] - first["commands"]
    seconds = after.at - before.at
    spent = {comp: sum(cpu - before.cpu.get(comp, {})[pid]
                       for pid, cpu in after.cpu.get(comp, {}).items()
                       if pid in before.cpu.get(comp, {}))
             for comp in SERVER}
    out = {f"{comp}_us": round(1e6 * cpu / commands) if commands else None
           for comp, cpu in spent.items()}
    out["server_us"] = round(1e6 * sum(spent.values()) / commands) if commands else None
    out["cores"] = round(sum(spent.values()) / seconds, 2) if seconds else None
    out["commands_per_s"] = round(commands / seconds, 1) if seconds else None
    out["frames_per_command"] = (round((last["frames"] - first["frames"]) / commands, 1)
                                 if commands else None)
    out["redis_calls_per_command"] = (round((after.calls - before.calls) / commands, 2)
                                      if commands else None)
    return out


def finished_rooms(r: redis.Redis, prefix: str) -> set[str]:
    found = set()
    keys = Keys(prefix)
    # a room's directory hash, not its other keys
    for key in r.scan_iter(keys.room("*"), count=1000):
        code = keys.code_of(key.decode())
        if r.hget(key, "status") in (b"finished", b"broken"):
            found.add(code)
    return found


def room_keys(prefix: str, code: str) -> list[str]:
    keys = Keys(prefix)
    return [keys.room(code), keys.state(code), keys.log(code), keys.tokens(code), keys.chat(code)]


def plot(series: dict, comp_of: dict, redis_mem: list, settled_from: float, path: Path) -> None:
    """Each component's RSS summed over its processes, minute by minute, and Redis's used_memory."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    totals: dict[str, dict[float, float]] = defaultdict(lambda: defaultdict(float))
    for pid, points in series.items():
        for minute, mb in points:
            totals[comp_of[pid]][round(minute, 2)] += mb
    fig, ax = plt.subplots(figsize=(10, 5))
    for comp, by_minute in sorted(totals.items()):
        xs = sorted(by_minute)
        ax.plot(xs, [by_minute[x] for x in xs], label=f"{comp} RSS")
    ax.plot([m for m, _ in redis_mem], [mb for _, mb in redis_mem], ls="--",
            label="Redis used_memory")
    ax.axvline(settled_from, color="grey", lw=0.8, ls=":", label="settled part")
    ax.set(xlabel="minutes", ylabel="MB (all processes of a component)", title="soak: memory")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--sample", type=float, default=60, help="seconds between RSS samples")
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="Locust worker processes")
    parser.add_argument("--games-per-actor", type=int, default=200)
    parser.add_argument("--spawn-rate", type=float, default=5)
    parser.add_argument("--finished-ttl", type=int, default=120)
    parser.add_argument("--short-phases", action="store_true")
    parser.add_argument("--durations", default="",
                        help='phase durations, JSON {"discussion": 60, ...} (seconds)')
    parser.add_argument("--model", default="human", choices=("human", "bots"),
                        help="how the tables play (loadtest/core.py MODELS)")
    parser.add_argument("--settled", type=float, default=None,
                        help="minutes at the end whose slope says whether memory levelled off "
                             "(default: the second half)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ww-soak"))
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["WW_FINISHED_TTL"] = str(args.finished_ttl)  # the gateways pass it to the hosts
    durations = (json.loads(args.durations) if args.durations else RUSH_DURATIONS
                 if args.short_phases else (MODELS[args.model].durations or {}))
    env = {"WW_LT_MODEL": args.model, "WW_LT_VERIFY_SEATS": "18"}
    series: dict[int, list] = defaultdict(list)  # pid -> [(minute, MB)]
    comp_of: dict[int, str] = {}
    redis_mem: list[tuple[float, float]] = []
    settled_from = args.minutes - (args.settled if args.settled is not None else args.minutes / 2)
    work: dict[str, dict] = {}  # "settled" and "end": the server's CPU and the gateways' counts
    with ExitStack() as stack:
        server = stack.enter_context(redis_server(appendfsync="everysec"))
        r = redis.Redis.from_url(server.url)
        running = stack.enter_context(real_stack(args.gateways,
                                                 games_per_actor=args.games_per_actor,
                                                 durations=durations, redis_url=server.url))
        lc = stack.enter_context(locust_cluster(
            args.workers, {**env, "WW_LT_GATEWAYS": ",".join(running.urls)}, args.out / "locust",
            running.urls[0]))
        lc.swarm(args.rooms, args.spawn_rate, running.urls[0])
        meter = Meter(running, server.port)  # the private Redis's process, not 6379's
        started = time.monotonic()
        end = started + args.minutes * 60
        finished_seen: dict[str, float] = {}
        while True:
            minute = (time.monotonic() - started) / 60
            for pid, (comp, mb) in rss_by_pid(
                    running.components() | {"locust": lc.processes(),
                                            "redis": [psutil.Process(server.process.pid)]}).items():
                series[pid].append((minute, mb))
                comp_of[pid] = comp
            if "settled" not in work and minute >= settled_from or time.monotonic() >= end:
                commands, frames = gateway_sums(running.urls, *COUNTED)
                work["settled" if "settled" not in work else "end"] = {
                    "reading": meter.read(), "commands": commands, "frames": frames}
            redis_mem.append((minute, r.info("memory")["used_memory"] / 2**20))
            for code in finished_rooms(r, running.prefix):
                finished_seen.setdefault(code, time.monotonic())
            st = lc.stats()
            print(f"{minute:5.1f} min: {st['_state']['user_count']} tables, "
                  f"{len(finished_seen)} rooms finished, redis {redis_mem[-1][1]:.1f} MB, "
                  "failures "
                  f"{sum(count(row, 'Failure Count') for n, row in st.items() if n != '_state')}",
                  flush=True)
            if time.monotonic() >= end:
                break
            time.sleep(min(args.sample, max(0.0, end - time.monotonic())))  # the sampling period
        stats = lc.stats()
        failures = lc.failures()
        per_room = []
        # the latest to finish: the first ones' keys have expired in a run longer than their TTL
        for code in sorted(finished_seen, key=finished_seen.__getitem__)[-50:]:
            keys = room_keys(running.prefix, code)
            if r.exists(*keys):
                per_room.append(sum(r.memory_usage(k) or 0 for k in keys))
        lc.post("/stop")
        last_finish = max(finished_seen.values(), default=time.monotonic())
        # the TTL runs out
        time.sleep(max(0.0, last_finish + args.finished_ttl + 5 - time.monotonic()))
        left = [code for code in finished_seen
                if r.exists(*room_keys(running.prefix, code))]
        errors = sum(count(row, "Failure Count") for name, row in stats.items()
                     if name != "_state")
    by_comp: dict[str, dict] = defaultdict(lambda: {"first": 0.0, "last": 0.0, "max_slope": 0.0,
                                                    "max_settled_slope": 0.0, "procs": 0})
    for pid, points in series.items():
        c = by_comp[comp_of[pid]]
        c["first"] += points[0][1]
        c["last"] += points[-1][1]
        c["procs"] += 1
        if len(points) >= 3:  # a process started mid-run (a new host) has no trend yet
            c["max_slope"] = max(c["max_slope"], slope(points))
        settled = [pt for pt in points if pt[0] >= settled_from]
        if len(settled) >= 3:
            c["max_settled_slope"] = max(c["max_settled_slope"], slope(settled))
    redis_settled = [pt for pt in redis_mem if pt[0] >= settled_from]
    games = stats.get("completed")
    report = {"rooms": args.rooms, "minutes": args.minutes, "model": args.model,
              "durations": durations, "errors": errors,
              "games_completed": count(games),
              "game_seconds": (round(float(games["Average Response Time"]) / 1000)
                               if games else None),
              "chat_lines_per_game": (round(float(games["Average Content Size"]), 1)
                                      if games else None),
              "failures": failures, "components": by_comp,
              "redis_used_mb": [round(redis_mem[0][1], 1), round(redis_mem[-1][1], 1)],
              "redis_slope_mb_per_min": round(slope(redis_mem), 3),
              "settled_from_minute": settled_from,
              "redis_settled_slope_mb_per_min": round(slope(redis_settled), 3),
              "samples": {str(pid): {"component": comp_of[pid], "points": points}
                          for pid, points in series.items()},
              "redis_used_mb_samples": redis_mem,
              "finished_rooms": len(finished_seen),
              "bytes_per_finished_room": (round(sum(per_room) / len(per_room))
                                          if per_room else None),
              "finished_rooms_with_keys_after_ttl": len(left),
              "per_command_settled": (per_command(work["settled"], work["end"])
                                      if "end" in work else None)}
    (args.out / "soak.json").write_text(json.dumps(report, indent=1))
    plot(series, comp_of, redis_mem, settled_from, args.out / "soak.png")
    print(f"\nsoak: {args.rooms} rooms, {args.minutes} min, {args.model} model"
          f"{' (rush phase durations)' if args.short_phases and not args.durations else ''}"
          f"{f' (durations {args.durations})' if args.durations else ''}")
    print(f"games completed: {report['games_completed']}, {report['game_seconds']} s long and "
          f"{report['chat_lines_per_game']} chat lines each on average")
    print(f"{'component':<12}{'procs':>6}{'RSS first MB':>14}{'last MB':>10}"
          f"{'max slope MB/min':>18}"
          f"{'settled slope':>15}  (settled: from minute {settled_from:.0f})")
    for comp, c in sorted(by_comp.items()):
        print(f"{comp:<12}{c['procs']:>6}{c['first']:>14.0f}{c['last']:>10.0f}"
              f"{c['max_slope']:>18.2f}"
              f"{c['max_settled_slope']:>15.2f}")
    print(f"errors: {errors} ({len(failures)} kinds); Redis used_memory "
          f"{report['redis_used_mb'][0]} -> "
          f"{report['redis_used_mb'][1]} MB ({report['redis_slope_mb_per_min']} MB/min, settled "
          f"{report['redis_settled_slope_mb_per_min']})")
    print(f"finished rooms: {len(finished_seen)}, {report['bytes_per_finished_room']} bytes of "
          "Redis each; "
          f"{len(left)} still had keys {args.finished_ttl} s after finishing")
    cost = report["per_command_settled"]
    if cost:
        print(f"server CPU per answered command, settled part: {cost['server_us']} µs (gateway "
              f"{cost['gateway_us']}, hosts {cost['ray-hosts_us']}, "
              f"Ray's own {cost['ray-system_us']}, "
              f"Redis {cost['redis_us']}); {cost['commands_per_s']} commands/s, "
              f"{cost['frames_per_command']} frames and "
              f"{cost['redis_calls_per_command']} Redis calls "
              f"per command, {cost['cores']} cores")
    return 0 if errors == 0 and not left else 1


if __name__ == "__main__":
    raise SystemExit(main())
