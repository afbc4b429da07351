"""Quick play (issue 23): N strangers press play within T seconds; how fast is each one seated,
and is every table filled right?

    .venv/bin/python -m loadtest.quickplay                          # 2,000 players within 60 s
    .venv/bin/python -m loadtest.quickplay --players 300 --window 20 --hold 120

It starts the real stack (loadtest/stack.py: a private Ray head, `--gateways` gateways on a fresh
WW_PREFIX of the shared Redis, the per-address limits off, quick play's included) and a Locust
master + workers running the `quickplay` model (loadtest/locustfile.py: one user per player). The
players are spawned first, each then waits for its own uniform random moment of the window, loads
the home page (GET / and GET /api/tables), presses play (POST /api/quickplay with a press id;
`--double-press` of them click twice), opens its socket and plays its seat as the `human` model
does. Then:

- presses: when every press has been answered (or `--press-timeout` after the window), every
  room a press was seated in is read (GET /api/rooms/{room}): tables formed, tables full, their
  sizes, **overfilled** tables (more players than the preset's size) and **doubly seated** presses
  (one press given two seats, two presses given one (room, seat), or a seat held by another
  name than the press's), press -> seat latency from the players' own clocks (exact percentiles);
- play: Locust's stats are reset and the games go on for `--hold` seconds (0: until every game
  that started has ended; a lobby short of its preset's minimum never starts and is counted
  apart), then the same rows the ramp reports for the `human` model (welcome, acks, broadcast,
  stream checks), per-player outcomes, and the public events any seat of a finished table missed.

Writes `results.json` and `quickplay.md` into --out, and prints the table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import psutil

from devstack.stack import TEST_DURATIONS
from loadtest.core import MODELS, RUSH_DURATIONS
from loadtest.measure import cpu_percent, cpu_seconds, percentile, rss_mb
from loadtest.runner import count, locust_cluster, pct
from loadtest.stack import ROOT, raise_fd_limit, real_stack, tear_down_on_signals

CHECK_NAMES = ("lost", "duplicated", "reordered", "replay_mismatch", "double_seated")
PLAY_ROWS = ("connect", "ack:chat", "ack:act", "broadcast", "completed", "replay")
POLL = 1.0  # seconds between two reads of the press logs (a script's poll, not a test's sleep)


def durations_of(spec: str) -> dict:
    """--durations: "default" (the server's), "rush" (RUSH_DURATIONS), "test" (2 s phases) or
    JSON {"discussion": 30, ...}."""
    if spec == "default":
        return {}
    if spec == "rush":
        return dict(RUSH_DURATIONS)
    if spec == "test":
        return dict(TEST_DURATIONS)
    return json.loads(spec)


def read_logs(directory: Path) -> tuple[list, list]:
    """(press records, game-end records) of every Locust process so far."""
    presses, overs = [], []
    for path in directory.glob("players-*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line being written
            (presses if record.get("type") == "press" else overs).append(record)
    return presses, overs


def get_json(url: str, timeout: float = 30) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def read_facts(urls: list, rooms: list) -> dict:
    """room -> its lobby facts (None: gone), read over the gateways in turn, 8 at a time."""
    def one(i_room):
        i, room = i_room
        return room, get_json(f"{urls[i % len(urls)]}/api/rooms/{room}")
    with ThreadPoolExecutor(8) as pool:
        return dict(pool.map(one, enumerate(rooms)))


def seat_report(presses: list, facts: dict, size: int, least: int) -> dict:
    """Presses, tables and the two counts that must be 0 (overfilled, doubly seated)."""
    seated = [p for p in presses if p["ms"] is not None]
    ms = [p["ms"] for p in seated]
    by_room: dict = defaultdict(list)
    holders: dict = defaultdict(set)  # (room, seat) -> presses given it
    twice = 0
    for p in presses:
        seats = {tuple(a) for a in p["answers"] if len(a) == 2}
        twice += len(seats) > 1  # one press, two seats
        for room, seat in seats:
            holders[(room, seat)].add(p["press"])
        if seats:
            room, seat = min(seats)
            by_room[room].append((seat, p["name"]))
    shared = sum(1 for who in holders.values() if len(who) > 1)  # two presses, one seat
    wrong_name = 0  # a press's seat held by another name in the room's own facts
    players = {}
    for room, taken in by_room.items():
        f = facts.get(room)
        names = {pl["seat"]: pl["name"] for pl in (f or {}).get("players", [])}
        players[room] = len(names)
        wrong_name += sum(1 for seat, name in taken if f and names.get(seat) != name)
    sizes = Counter(players.values())
    statuses = Counter((facts.get(room) or {}).get("status", "gone") for room in by_room)
    return {
        "presses": len(presses), "seated": len(seated),
        "unseated": len(presses) - len(seated),
        "double_clicks": sum(1 for p in presses if p["clicks"] > 1),
        "retried": sum(1 for p in presses if len(p["answers"]) > p["clicks"]),
        "answers": dict(Counter(str(a[0]) if len(a) == 1 else "200" for p in presses
                                for a in p["answers"])),
        "press_ms_p50": percentile(ms, 50), "press_ms_p99": percentile(ms, 99),
        "press_ms_max": max(ms, default=None),
        "press_span_s": round((max(p["t0"] for p in presses) - min(p["t0"] for p in presses))
                              / 1000, 1) if presses else None,
        "tables_formed": len(by_room),
        "tables_full": sum(1 for n in players.values() if n == size),
        "table_sizes": {str(k): v for k, v in sorted(sizes.items())},
        "tables_short": sum(1 for n in players.values() if n < least),  # never start by themselves
        "statuses": dict(statuses),
        "overfilled": sum(1 for room, n in players.items()
                          if n > size or len(by_room[room]) > size),
        "doubly_seated": twice + shared + wrong_name,
        "doubly_seated_parts": {"one_press_two_seats": twice, "two_presses_one_seat": shared,
                                "seat_held_by_another_name": wrong_name},
        "facts_missing": sum(1 for room in by_room if facts.get(room) is None),
        "size": size, "min_players": least,
    }


def lost_across_seats(overs: list) -> int:
    """Public events that one player of a finished table got and another did not (each seat
    reads from seq 1, so every seat must hold every public event up to `game_over`)."""
    by_room: dict = defaultdict(list)
    for o in overs:
        if o["outcome"] == "completed":
            by_room[o["room"]].append(set(o["public"]))
    lost = 0
    for seen in by_room.values():
        union = set().union(*seen)
        lost += sum(len(union - s) for s in seen)
    return lost


def locust_rows(st: dict, names: tuple) -> dict:
    return {name: {"n": count(st.get(name)), "fail": count(st.get(name), "Failure Count"),
                   "p50": pct(st.get(name), "50%"), "p99": pct(st.get(name), "99%")}
            for name in names if st.get(name)}


def failures_of(st: dict) -> int:
    return sum(count(r, "Failure Count") for k, r in st.items()
               if k not in ("_state", "Aggregated"))


def wait_presses(logs: Path, players: int, until: float) -> list:
    """Every player's press record (or those there are at `until`)."""
    while True:
        presses, _ = read_logs(logs)
        if len(presses) >= players or time.time() > until:
            return presses
        time.sleep(POLL)


def wait_games(logs: Path, urls: list, seated: list, least: int, until: float) -> dict:
    """Until every seated player whose table started (or will: a lobby of at least the preset's
    minimum counts down) has ended its game, or `until`: {"short": players at a lobby that cannot
    start, "pending": players still playing at `until`}."""
    started: set = set()  # rooms seen past their lobby: not read again (the reads cost the stack)
    while True:
        _, overs = read_logs(logs)
        done = {o["press"] for o in overs}
        pending = [p for p in seated if p["press"] not in done]
        rooms = sorted({p["room"] for p in pending} - started)
        facts = read_facts(urls, rooms) if rooms else {}
        started |= {room for room, f in facts.items() if f and f["status"] != "lobby"}
        short = {room for room, f in facts.items()
                 if f and f["status"] == "lobby" and len(f["players"]) < least}
        waiting = [p for p in pending if p["room"] not in short]
        if not waiting or time.time() > until:
            return {"short": len(pending) - len(waiting), "pending": len(waiting)}
        time.sleep(5 * POLL)


def caught_up(lc, answers: int, timeout: float = 15) -> dict:
    """Locust's stats once the master counts every press answered (its workers report every
    3 s): the press phase's rows complete before they are reset."""
    deadline = time.monotonic() + timeout
    while True:
        st = lc.stats()
        if count(st.get("quickplay")) >= answers or time.monotonic() > deadline:
            return st
        time.sleep(POLL)


def run(args) -> dict:
    from actors.tables import Kind
    import rules

    kind = Kind(args.preset, args.language)
    size, least = kind.size(), rules.min_players(kind.settings())
    model = MODELS["quickplay"]
    out = Path(args.out)
    logs = out / "presses"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    gateway_env = {"WW_QUICK_PLAYS_PER_ADDRESS": "0"}
    if args.countdown is not None:
        gateway_env["WW_PUBLIC_COUNTDOWN"] = str(args.countdown)
    result: dict = {"args": vars(args),
                    "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
                    "load_before": os.getloadavg()}
    with ExitStack() as stack:
        print(f"quick play: starting the stack ({args.gateways} gateways)", flush=True)
        running = stack.enter_context(real_stack(
            args.gateways, games_per_actor=args.games_per_actor,
            durations=durations_of(args.durations), warm_actors=args.warm_actors,
            env=gateway_env))
        env = {"WW_LT_MODEL": "quickplay", "WW_LT_GATEWAYS": ",".join(running.urls),
               "WW_LT_PRESET": args.preset, "WW_LT_LANGUAGE": args.language,
               "WW_LT_ARRIVAL_WINDOW": str(args.window), "WW_LT_GAMES": "1",
               "WW_LT_PRESS_LOG": str(logs), "WW_LT_DOUBLE_PRESS": str(args.double_press),
               "WW_LT_VERIFY_SEATS": str(args.verify_seats), "WW_LT_THINK": args.think,
               "WW_LT_CHAT_INTERVAL": args.chat_interval,
               "WW_LT_NIGHT_CHAT_INTERVAL": args.night_chat_interval,
               "WW_LT_BROADCAST_SAMPLE": str(args.broadcast_sample)}
        if args.max_game:
            env["WW_LT_MAX_GAME"] = str(args.max_game)
        lc = stack.enter_context(locust_cluster(args.workers, env, out / "locust", running.urls[0]))
        # Every player exists before the window opens, then waits for its own moment of it.
        arrive_at = time.time() + args.players / args.spawn_rate + 3
        print(f"quick play: {args.players} players pressing within {args.window:g} s from "
              f"{time.strftime('%H:%M:%S', time.gmtime(arrive_at))} UTC", flush=True)
        lc.swarm(args.players, args.spawn_rate, running.urls[0], ww_arrive_at=f"{arrive_at:.3f}")
        while time.time() < arrive_at:
            time.sleep(POLL)
        comps = {**running.components(), "locust": lc.processes()}
        cpu0, sys0, t0 = cpu_seconds(comps), psutil.cpu_times(), time.monotonic()
        presses = wait_presses(logs, args.players, arrive_at + args.window + args.press_timeout)
        pressed_s = time.monotonic() - t0
        comps = {**running.components(), "locust": lc.processes()}
        cpu, _ = cpu_percent(cpu0, cpu_seconds(comps), pressed_s)
        sys1 = psutil.cpu_times()
        busy = sum(sys1) - sum(sys0)
        arrival = caught_up(lc, sum(len(p["answers"]) for p in presses))
        arrival_failures = lc.failures()
        rooms = sorted({a[0] for p in presses for a in p["answers"] if len(a) == 2})
        facts = read_facts(running.urls, rooms)
        result["seats"] = seat_report(presses, facts, size, least)
        result["seats"]["unanswered"] = args.players - len(presses)
        result["arrival"] = {
            "seconds": round(pressed_s, 1), "load": os.getloadavg()[0],
            "machine_cpu_pct": (round(100 * (1 - (sys1.idle - sys0.idle) / busy), 1)
                                if busy else None),
            "cpu": {k: round(v, 1) for k, v in sorted(cpu.items())},
            "rss_mb": {k: round(v) for k, v in sorted(rss_mb(comps).items())},
            "rows": locust_rows(arrival, ("home", "tables", "quickplay", *PLAY_ROWS)),
            "failures": failures_of(arrival),
            "errors": sorted({f"{f.get('Name')}: {(f.get('Error') or '')[:100]}"
                              for f in arrival_failures})[:10],
        }
        print(format_seats(result["seats"]), flush=True)

        # The games: measured apart from the presses, as the ramp holds a step after its arrivals.
        lc.reset()
        t1 = time.monotonic()
        cpu0 = cpu_seconds({**running.components(), "locust": lc.processes()})
        seated = [{"press": p["press"],
                   "room": min(tuple(a) for a in p["answers"] if len(a) == 2)[0]}
                  for p in presses if p["ms"] is not None]
        if args.hold:
            time.sleep(args.hold)
            waited = {"short": None, "pending": None}
        else:
            print("quick play: playing until every started game has ended", flush=True)
            waited = wait_games(logs, running.urls, seated, least,
                                time.time() + (args.max_game or model.max_game) + 120)
        held = time.monotonic() - t1
        comps = {**running.components(), "locust": lc.processes()}
        cpu, _ = cpu_percent(cpu0, cpu_seconds(comps), held)
        st = lc.stats()
        play_failures = lc.failures()
        # Every player logs how its game went as it ends, or as it is stopped: stop them all.
        stopped = lc.stop()
        _, overs = read_logs(logs)
        checks = {name: count(arrival.get(name), "Failure Count")
                  + count(st.get(name), "Failure Count")
                  for name in CHECK_NAMES}
        checks["lost"] += lost_across_seats(overs)
        result["play"] = {
            "seconds": round(held, 1), "load": os.getloadavg()[0], **waited,
            "outcomes": dict(Counter(o["outcome"] for o in overs)),
            "players_connected": sum(1 for o in overs if o["connected"]),
            "players_logged": len({o["press"] for o in overs}), "locust_stopped": stopped,
            "rows": locust_rows(st, PLAY_ROWS + ("late_act", "late_chat")),
            "checks": checks, "failures": failures_of(st),
            "errors": sorted({f"{f.get('Name')}: {(f.get('Error') or '')[:100]}"
                              for f in play_failures})[:10],
            "cpu": {k: round(v, 1) for k, v in sorted(cpu.items())},
            "rss_mb": {k: round(v) for k, v in sorted(rss_mb(comps).items())},
        }
    result["finished_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    return result


def fmt(v, nd=0) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def p50_99(row: dict | None) -> str:
    return "-" if not row or not row["n"] else f"{fmt(row['p50'])}/{fmt(row['p99'])} (n={row['n']})"


def format_seats(s: dict) -> str:
    return (f"presses {s['presses']} (double clicks {s['double_clicks']}), seated {s['seated']}, "
            f"tables formed {s['tables_formed']}, full {s['tables_full']}, "
            f"sizes {s['table_sizes']}, "
            f"press->seat p50/p99 {fmt(s['press_ms_p50'])}/{fmt(s['press_ms_p99'])} ms, "
            f"overfilled {s['overfilled']}, doubly seated {s['doubly_seated']}")


def markdown(r: dict) -> str:
    a, s, p = r["args"], r["seats"], r["play"]
    arr, ar = r["arrival"]["rows"], r["arrival"]
    c, pc = ar["cpu"], p["cpu"]
    rows = [
        ("players, window", f"{a['players']} within {a['window']:g} s "
                            f"({a['preset']}, {a['language']}), "
                            f"{a['gateways']} gateways, {a['workers']} Locust workers"),
        ("presses (answers by status)", f"{s['presses']} ({s['answers']}); double clicks "
                                        f"{s['double_clicks']}; unanswered {s['unanswered']}"),
        ("seated", f"{s['seated']} (unseated {s['unseated']}), pressed over {s['press_span_s']} s"),
        ("tables formed / full (size)", f"{s['tables_formed']} / {s['tables_full']} ({s['size']}); "
                                        f"sizes {s['table_sizes']}; statuses {s['statuses']}"),
        ("**overfilled**", str(s["overfilled"])),
        ("**doubly seated**", f"{s['doubly_seated']} {s['doubly_seated_parts']}"),
        ("press -> seat p50 / p99 / max ms", f"{fmt(s['press_ms_p50'])} / "
                                             f"{fmt(s['press_ms_p99'])} / "
                                             f"{fmt(s['press_ms_max'])}"),
        ("POST quickplay p50/p99 ms (Locust)", p50_99(arr.get("quickplay"))),
        ("GET home, GET tables p50/p99 ms",
         f"{p50_99(arr.get('home'))}, {p50_99(arr.get('tables'))}"),
        ("while pressing: welcome, ack chat, ack act p50/p99 ms",
         f"{p50_99(arr.get('connect'))}, {p50_99(arr.get('ack:chat'))}, "
         f"{p50_99(arr.get('ack:act'))}"),
        ("while pressing: machine CPU %, CPU % gw / ray-hosts / ray-sys / redis / locust",
         f"{fmt(ar['machine_cpu_pct'])}; {c.get('gateway', 0):.0f} / "
         f"{c.get('ray-hosts', 0):.0f} / "
         f"{c.get('ray-system', 0):.0f} / {c.get('redis', 0):.0f} / {c.get('locust', 0):.0f}"),
        ("play measured", f"{p['seconds']} s after the last answer (hold {a['hold']:g}); outcomes "
                          f"{p['outcomes']}; at a lobby short of {s['min_players']}: {p['short']}"),
        ("play: welcome p50/p99 ms", p50_99(p["rows"].get("connect"))),
        ("play: ack chat / ack act p50/p99 ms", f"{p50_99(p['rows'].get('ack:chat'))}, "
                                                f"{p50_99(p['rows'].get('ack:act'))}"),
        ("play: broadcast p50/p99 ms", p50_99(p["rows"].get("broadcast"))),
        ("play: games completed (players), length p50 ms",
         f"{fmt((p['rows'].get('completed') or {}).get('n'))}, "
         f"{fmt((p['rows'].get('completed') or {}).get('p50'))}"),
        ("stream checks", str(p["checks"])),
        ("failures (pressing, playing)", f"{ar['failures']}, {p['failures']}: "
                                         f"{ar['errors'] + p['errors']}"),
        ("play: CPU % gw / ray-hosts / ray-sys / redis / locust",
         f"{pc.get('gateway', 0):.0f} / {pc.get('ray-hosts', 0):.0f} / "
         f"{pc.get('ray-system', 0):.0f} / "
         f"{pc.get('redis', 0):.0f} / {pc.get('locust', 0):.0f}"),
        ("load average before, pressing, end",
         f"{r['load_before'][0]:.2f}, {ar['load']:.2f}, {p['load']:.2f}"),
    ]
    lines = [f"Quick play, {r['started_utc']} - {r['finished_utc']} UTC", "",
             "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="N players press quick play within T seconds")
    ap.add_argument("--players", type=int, default=2000)
    ap.add_argument("--window", type=float, default=60, help="seconds within which they press")
    ap.add_argument("--preset", default="seed_000")
    ap.add_argument("--language", default="en")
    ap.add_argument("--gateways", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="Locust worker processes")
    ap.add_argument("--games-per-actor", type=int, default=200)
    ap.add_argument("--warm-actors", type=int, default=2)
    ap.add_argument("--spawn-rate", type=float, default=100,
                    help="players created per second before the window opens (each then waits "
                         "for its moment)")
    ap.add_argument("--double-press", type=float, default=0.05,
                    help="share of players who click twice (one press id sent twice at once)")
    ap.add_argument("--press-timeout", type=float, default=120,
                    help="seconds after the window for the last presses to be answered")
    ap.add_argument("--hold", type=float, default=0,
                    help="seconds of play measured after the presses (0: until every started "
                         "game has ended)")
    ap.add_argument("--durations", default="default",
                    help='phase durations: default (the server\'s), rush, test (2 s) or JSON')
    ap.add_argument("--countdown", type=int, help="WW_PUBLIC_COUNTDOWN (default: the server's)")
    ap.add_argument("--max-game", type=float, default=0,
                    help="seconds before a game counts as timed out (default: the model's)")
    ap.add_argument("--think", default="", help="override the model's think time: min,max s")
    ap.add_argument("--chat-interval", default="", help="override its day chat gap (s)")
    ap.add_argument("--night-chat-interval", default="", help="override its night chat gap (s)")
    ap.add_argument("--broadcast-sample", type=float, default=0.25,
                    help="share of chat deliveries timed (every one costs the generator)")
    ap.add_argument("--verify-seats", type=int, default=1,
                    help="seats of a table (on average) re-read with since=0 after its game")
    ap.add_argument("--out", default=str(ROOT / "loadtest" / "results" / "quickplay"))
    args = ap.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    raise_fd_limit()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = run(args)
    (out / "results.json").write_text(json.dumps(result, indent=1))
    md = markdown(result)
    (out / "quickplay.md").write_text(md)
    print("\n" + md)
    print(f"wrote {out}/results.json and {out}/quickplay.md", flush=True)
    bad = result["seats"]["overfilled"] or result["seats"]["doubly_seated"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
