"""Soak: many rooms of the `human` load model for a long time; does anything grow or leak?

    .venv/bin/python -m loadtest.soak --rooms 500 --minutes 30          # the full run (not in CI)
    .venv/bin/python -m loadtest.soak --rooms 50 --minutes 3 --short-phases --finished-ttl 60

It starts the real stack (private Ray head, `--gateways` gateway processes, a private redis-server
keeping an append-only file: tests/redis_servers.py) and a Locust cluster playing `--rooms`
18-seat tables back to back (loadtest/locustfile.py, `human` model: 2-15 s to answer a prompt, a
chat line every 20-40 s). Every `--sample` seconds it reads the RSS of every process (gateways,
Ray hosts, Ray's own processes, Redis, Locust) and Redis's used_memory; at the end it prints each
component's RSS first -> last and the steepest per-process slope (MB/min, least squares), the
errors Locust counted (requests failed, and the stream checks: lost, duplicated, reordered
events), the Redis memory one finished room holds (MEMORY USAGE of its keys), and whether the
keys of the rooms that finished expired `--finished-ttl` s later (WW_FINISHED_TTL).
`--short-phases` plays the `rush` phase durations (a game in ~2 min instead of ~15) so a short run
sees rooms finish and expire; think times and chat stay the human ones.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import psutil
import redis

from actors.store import Keys
from loadtest.core import MODELS, RUSH_DURATIONS
from loadtest.runner import count, locust_cluster
from loadtest.stack import real_stack
from loadtest.stack import _interrupt
from tests.redis_servers import redis_server


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (minute, MB) points; 0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / var if var else 0.0


def sample(components: dict, redis_pid: int) -> dict:
    out = {}
    for comp, procs in {**components, "redis": [psutil.Process(redis_pid)]}.items():
        for p in procs:
            try:
                out[p.pid] = (comp, p.memory_info().rss / 2**20)
            except psutil.Error:
                pass
    return out


def finished_rooms(r: redis.Redis, prefix: str) -> set[str]:
    found = set()
    keys = Keys(prefix)
    for key in r.scan_iter(keys.room("*"), count=1000):  # a room's directory hash, not its other keys
        code = keys.code_of(key.decode())
        if r.hget(key, "status") in (b"finished", b"broken"):
            found.add(code)
    return found


def room_keys(prefix: str, code: str) -> list[str]:
    keys = Keys(prefix)
    return [keys.room(code), keys.state(code), keys.log(code), keys.tokens(code), keys.chat(code)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--sample", type=float, default=60, help="seconds between RSS samples")
    parser.add_argument("--gateways", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="Locust worker processes")
    parser.add_argument("--games-per-actor", type=int, default=200)
    parser.add_argument("--spawn-rate", type=float, default=5)
    parser.add_argument("--finished-ttl", type=int, default=120)
    parser.add_argument("--short-phases", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ww-soak"))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # a `timeout` still tears everything down
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["WW_FINISHED_TTL"] = str(args.finished_ttl)  # the gateways pass it to the hosts
    durations = RUSH_DURATIONS if args.short_phases else (MODELS["human"].durations or {})
    env = {"WW_LT_MODEL": "human", "WW_LT_VERIFY_SEATS": "18"}
    series: dict[int, list] = defaultdict(list)  # pid -> [(minute, MB)]
    comp_of: dict[int, str] = {}
    redis_mem: list[tuple[float, float]] = []
    with ExitStack() as stack:
        server = stack.enter_context(redis_server(appendfsync="everysec"))
        r = redis.Redis.from_url(server.url)
        running = stack.enter_context(real_stack(args.gateways, games_per_actor=args.games_per_actor,
                                                 durations=durations, redis_url=server.url))
        lc = stack.enter_context(locust_cluster(
            args.workers, {**env, "WW_LT_GATEWAYS": ",".join(running.urls)}, args.out / "locust",
            running.urls[0]))
        lc.swarm(args.rooms, args.spawn_rate, running.urls[0])
        started = time.monotonic()
        end = started + args.minutes * 60
        finished_seen: dict[str, float] = {}
        while True:
            minute = (time.monotonic() - started) / 60
            for pid, (comp, mb) in sample(running.components() | {"locust": lc.processes()},
                                          server.process.pid).items():
                series[pid].append((minute, mb))
                comp_of[pid] = comp
            redis_mem.append((minute, r.info("memory")["used_memory"] / 2**20))
            for code in finished_rooms(r, running.prefix):
                finished_seen.setdefault(code, time.monotonic())
            st = lc.stats()
            print(f"{minute:5.1f} min: {st['_state']['user_count']} tables, "
                  f"{len(finished_seen)} rooms finished, redis {redis_mem[-1][1]:.1f} MB, "
                  f"failures {sum(count(row, 'Failure Count') for n, row in st.items() if n != '_state')}",
                  flush=True)
            if time.monotonic() >= end:
                break
            time.sleep(min(args.sample, max(0.0, end - time.monotonic())))  # the sampling period
        stats = lc.stats()
        failures = lc.failures()
        per_room = []
        for code in list(finished_seen)[:50]:
            per_room.append(sum(r.memory_usage(k) or 0 for k in room_keys(running.prefix, code)))
        lc.post("/stop")
        last_finish = max(finished_seen.values(), default=time.monotonic())
        time.sleep(max(0.0, last_finish + args.finished_ttl + 5 - time.monotonic()))  # the TTL runs out
        left = [code for code in finished_seen
                if r.exists(*room_keys(running.prefix, code))]
        errors = sum(count(row, "Failure Count") for name, row in stats.items() if name != "_state")
    by_comp: dict[str, dict] = defaultdict(lambda: {"first": 0.0, "last": 0.0, "max_slope": 0.0, "procs": 0})
    for pid, points in series.items():
        c = by_comp[comp_of[pid]]
        c["first"] += points[0][1]
        c["last"] += points[-1][1]
        c["procs"] += 1
        if len(points) >= 3:  # a process started mid-run (a new host) has no trend yet
            c["max_slope"] = max(c["max_slope"], slope(points))
    report = {"rooms": args.rooms, "minutes": args.minutes, "errors": errors,
              "failures": failures, "components": by_comp,
              "redis_used_mb": [round(redis_mem[0][1], 1), round(redis_mem[-1][1], 1)],
              "redis_slope_mb_per_min": round(slope(redis_mem), 3),
              "finished_rooms": len(finished_seen),
              "bytes_per_finished_room": round(sum(per_room) / len(per_room)) if per_room else None,
              "finished_rooms_with_keys_after_ttl": len(left)}
    (args.out / "soak.json").write_text(json.dumps(report, indent=1))
    print(f"\nsoak: {args.rooms} rooms, {args.minutes} min, human model"
          f"{' (rush phase durations)' if args.short_phases else ''}")
    print(f"{'component':<12}{'procs':>6}{'RSS first MB':>14}{'last MB':>10}{'max slope MB/min':>18}")
    for comp, c in sorted(by_comp.items()):
        print(f"{comp:<12}{c['procs']:>6}{c['first']:>14.0f}{c['last']:>10.0f}{c['max_slope']:>18.2f}")
    print(f"errors: {errors} ({len(failures)} kinds); Redis used_memory {report['redis_used_mb'][0]} -> "
          f"{report['redis_used_mb'][1]} MB ({report['redis_slope_mb_per_min']} MB/min)")
    print(f"finished rooms: {len(finished_seen)}, {report['bytes_per_finished_room']} bytes of Redis each; "
          f"{len(left)} still had keys {args.finished_ttl} s after finishing")
    return 0 if errors == 0 and not left else 1


if __name__ == "__main__":
    raise SystemExit(main())
