"""Which ASGI server and WebSocket implementation to run on, chosen by measurement: the bare
baseline room server (loadtest/baseline.py) under each candidate, the same Locust tables in the
same run, server CPU per delivered frame.

    .venv/bin/python -m loadtest.compare --tables 100 --seconds 60

Candidates: uvicorn with each of its WebSocket implementations (websockets-sansio, websockets,
wsproto) and granian (Rust HTTP/WebSocket server, ASGI interface) when it is installed.
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


from loadtest.measure import family, total_cpu_seconds, total_rss_mb
from loadtest.runner import LOCUSTFILE, count, locust_env, locust_exe
from loadtest.stack import ROOT, free_port, raise_fd_limit, wait_http

UVICORN_WS = ("websockets-sansio", "websockets", "wsproto")


def server_command(candidate: str, port: int) -> list[str]:
    if candidate == "granian":
        granian = Path(sys.executable).with_name("granian")
        # Every WebSocket is a request held open: lift granian's default cap (backlog/workers).
        return [str(granian), "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port),
                "--loop", "uvloop", "--backpressure", "200000", "--log-level", "warning",
                "loadtest.baseline:app"]
    return [sys.executable, "-m", "loadtest.baseline", "--port", str(port), "--ws", candidate]


def measure(candidate: str, args, out: Path) -> dict:
    port = free_port()
    env = locust_env({"WW_BASELINE_GAME_SECONDS": str(args.seconds * 3)})
    server = subprocess.Popen(server_command(candidate, port), cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", server)
        idle_rss = total_rss_mb(family(server.pid))
        prefix = out / f"compare-{candidate}"
        locust = subprocess.Popen(
            [locust_exe(), "-f", LOCUSTFILE, "--headless",
             "-u", str(args.tables), "-r", str(args.tables), "-t", f"{args.seconds}s",
             "--host", f"http://127.0.0.1:{port}", "--csv", str(prefix), "--only-summary",
             "--loglevel", "ERROR", "--ww-model", "rush", "--ww-chat-interval", str(args.chat)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        time.sleep(args.warmup)  # tables seated and talking
        per_socket = (total_rss_mb(family(server.pid)) - idle_rss) * 2**20 / (18 * args.tables)
        procs = family(server.pid)
        before = total_cpu_seconds(procs)
        started = time.monotonic()
        time.sleep(args.seconds - args.warmup - 5)
        server_cpu = total_cpu_seconds(procs) - before
        window = time.monotonic() - started
        locust.wait(timeout=args.seconds + 60)
    finally:  # the whole group: granian's workers outlive their parent otherwise
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
    rows = {r["Name"]: r for r in csv.DictReader(open(f"{prefix}_stats.csv"))}
    frames = rows.get("frames")
    # The frames row reports, every 2 s per worker, how many frames arrived (response_length).
    frames_per_s = (float(frames["Average Content Size"]) * count(frames) / args.seconds
                    if frames else 0.0)
    return {"candidate": candidate, "frames_per_s": frames_per_s,
            "server_cpu_pct": 100 * server_cpu / window,
            "us_per_frame": 1e6 * server_cpu / window / frames_per_s if frames_per_s else None,
            "broadcast_p99": rows.get("broadcast", {}).get("99%"),
            "kb_per_socket": per_socket / 1024,
            "failures": count(rows.get("Aggregated"), "Failure Count")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--chat", type=float, default=2.0, help="mean seconds between a player's lines")
    ap.add_argument("--candidates", default=",".join(UVICORN_WS + ("granian",)))
    ap.add_argument("--out", default=str(ROOT / "loadtest" / "results"))
    args = ap.parse_args(argv)
    raise_fd_limit()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    candidates = [c for c in args.candidates.split(",")
                  if c != "granian"
                  or shutil.which("granian", path=str(Path(sys.executable).parent))]
    print(f"{args.tables} tables of 18, rush model, a chat line per player per {args.chat} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| server | frames/s | server CPU % of a core | µs of server CPU per frame | "
          "server RSS KB per socket | p99 broadcast ms | failures |\n|---|---|---|---|---|---|---|")
    for candidate in candidates:
        r = measure(candidate, args, out)
        name = "granian" if candidate == "granian" else f"uvicorn + {candidate}"
        print(f"| {name} | {r['frames_per_s']:.0f} | {r['server_cpu_pct']:.0f} | "
              f"{r['us_per_frame']:.1f} | {r['kb_per_socket']:.0f} | {r['broadcast_p99']} | "
              f"{r['failures']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
