"""Drive Locust (master + workers, web API) from a script against a stack, and read its stats per
step into a row (the ramp's, which the other stepped scripts share).

Locust imports the locustfile as a top-level module (its directory first on the import path);
the locustfile's own `loadtest.*` imports find the package because every launcher here runs
Locust with the repository as its working directory and PYTHONPATH (`locust_env`).
"""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from loadtest.core import MODELS
from loadtest.stack import ROOT, baseline_stack, free_port, raise_fd_limit, real_stack

LOCUSTFILE = str(ROOT / "loadtest" / "locustfile.py")
CHECK_NAMES = ("lost", "duplicated", "reordered", "replay_mismatch")  # the tables' stream checks


def locust_env(env: dict | None = None) -> dict:
    """A Locust process's environment: ours, `env`, and the repository on its import path."""
    return {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)}


def locust_exe() -> str:
    exe = Path(sys.executable).with_name("locust")
    return str(exe) if exe.exists() else "locust"


@dataclass
class LocustCluster:
    url: str
    master: subprocess.Popen
    workers: list

    def pids(self) -> list:
        return [self.master.pid] + [w.pid for w in self.workers]

    def processes(self) -> list:
        out = []
        for pid in self.pids():
            try:
                out.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                pass
        return out

    def post(self, path: str, form: dict | None = None) -> str:
        data = urllib.parse.urlencode(form or {}).encode()
        with urllib.request.urlopen(self.url + path, data=data, timeout=30) as r:
            return r.read().decode()

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=30) as r:
            return r.read().decode()

    def swarm(self, users: int, rate: float, host: str, **options) -> None:
        """`options`: custom `--ww-*` options by their dest name (ww_arrive_at=...), sent with
        the spawn messages to every worker."""
        self.post("/swarm", {"user_count": users, "spawn_rate": rate, "host": host, **options})

    def reset(self) -> None:
        self.post("/stats/reset")

    def stats(self) -> dict:
        """name -> row of /stats/requests/csv (strings), plus "_state" from /stats/requests."""
        rows = {r["Name"]: r for r in csv.DictReader(io.StringIO(self.get("/stats/requests/csv")))}
        j = json.loads(self.get("/stats/requests"))
        rows["_state"] = {"state": j.get("state"), "user_count": j.get("user_count"),
                          "workers": len(j.get("workers") or [])}
        return rows

    def stop(self, timeout: float = 60) -> bool:
        """Stop every user and wait until they are gone (their `finally` blocks have run)."""
        self.post("/stop")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.stats()["_state"]
            if state["state"] == "stopped" and not state["user_count"]:
                return True
            time.sleep(0.5)   # polling Locust's state while its workers stop their users
        return False

    def failures(self) -> list:
        return list(csv.DictReader(io.StringIO(self.get("/stats/failures/csv"))))

    def wait_connected(self, users: int, sockets: int, timeout: float) -> int:
        """Poll until `users` tables run and `sockets` new sockets connected (or timeout);
        return how many connected."""
        deadline = time.monotonic() + timeout
        connected = 0
        while time.monotonic() < deadline:
            time.sleep(2)   # polling Locust's counters while tables connect
            st = self.stats()
            connected = count(st.get("connect")) - count(st.get("connect"), "Failure Count")
            if st["_state"]["user_count"] >= users and connected >= sockets:
                break
        return connected


@contextmanager
def locust_cluster(n_workers: int, env: dict, log_dir: Path, host: str):
    """A Locust master (web API on a free loopback port) and n workers, stopped on exit."""
    raise_fd_limit()
    log_dir.mkdir(parents=True, exist_ok=True)
    web, bind = free_port(), free_port()
    full_env = locust_env(env)
    common = ["-f", LOCUSTFILE]
    master = subprocess.Popen(
        [locust_exe(), *common, "--master", "--master-bind-host", "127.0.0.1",
         "--master-bind-port", str(bind), "--web-host", "127.0.0.1", "--web-port", str(web),
         "--expect-workers", str(n_workers), "--host", host, "--loglevel", "WARNING"],
        cwd=ROOT, env=full_env, stdout=open(log_dir / "master.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True)
    workers = [subprocess.Popen(
        [locust_exe(), *common, "--worker", "--master-host", "127.0.0.1", "--master-port",
         str(bind), "--loglevel", "WARNING"],
        cwd=ROOT, env=full_env, stdout=open(log_dir / f"worker{i}.log", "wb"),
        stderr=subprocess.STDOUT, start_new_session=True) for i in range(n_workers)]
    lc = LocustCluster(f"http://127.0.0.1:{web}", master, workers)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if lc.stats()["_state"]["workers"] >= n_workers:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or master.poll() is not None:
                raise RuntimeError(f"locust master not ready; see {log_dir}/master.log")
            time.sleep(0.5)   # polling processes that are starting
        yield lc
    finally:
        try:
            lc.post("/stop")
        except OSError:
            pass
        for p in [*workers, master]:
            p.terminate()
        for p in [*workers, master]:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)


def pct(row: dict | None, col: str) -> float | None:
    if not row:
        return None
    v = row.get(col)
    try:
        return float(v) if v not in (None, "", "N/A") else None
    except ValueError:
        return None


def count(row: dict | None, col: str = "Request Count") -> int:
    v = pct(row, col)
    return int(v) if v is not None else 0


def start_load(stack: ExitStack, layout: str, args, env: dict, log_dir: Path):
    """The stack of `layout` ("baseline", or N games per Ray actor) and a Locust cluster driving
    it, both closed with `stack`: (running stack, Locust cluster). `args`: gateways, ws,
    baseline_game_seconds, model, warm_actors, workers."""
    if layout == "baseline":
        running = stack.enter_context(baseline_stack(args.gateways, args.baseline_game_seconds,
                                                     ws=args.ws))
    else:
        running = stack.enter_context(real_stack(args.gateways, games_per_actor=int(layout),
                                                 durations=MODELS[args.model].durations or {},
                                                 warm_actors=args.warm_actors, ws=args.ws))
    env = {**env, "WW_LT_GATEWAYS": ",".join(running.urls)}
    return running, stack.enter_context(locust_cluster(args.workers, env, log_dir, running.urls[0]))


def make_row(layout, rooms, st, failures, cpu, mem, socks, held, spawned_ok, load0, load1, step_s,
             break_p99: float, break_errors: float) -> dict:
    """A held step's row from Locust's stats and failures, its CPU % and RSS MB by component, the
    generator's sockets; `broke` says why the step breaks ("" if it held): p99 broadcast over
    `break_p99` ms, failures over `break_errors` of the requests, any stream check."""
    b = st.get("broadcast")
    total_fail = sum(count(r, "Failure Count") for k, r in st.items()
                     if k not in ("_state", "Aggregated"))
    total_req = sum(count(r) for k, r in st.items() if k not in ("_state", "Aggregated"))
    checks = {n: count(st.get(n), "Failure Count") for n in CHECK_NAMES}
    frames = pct(st.get("frames"), "Average Content Size") or 0
    frames_total = frames * count(st.get("frames"))
    row = {
        "layout": layout, "rooms": rooms, "tables": st["_state"]["user_count"], "sockets": socks,
        "hold_s": round(held, 1), "step_s": round(step_s, 1),
        "load": [round(load0, 2), round(load1, 2)],
        "connect_p50": pct(st.get("connect"), "50%"), "connect_p99": pct(st.get("connect"), "99%"),
        "ack_chat_p50": pct(st.get("ack:chat"), "50%"),
        "ack_chat_p99": pct(st.get("ack:chat"), "99%"),
        "ack_act_p50": pct(st.get("ack:act"), "50%"), "ack_act_p99": pct(st.get("ack:act"), "99%"),
        "bcast_p50": pct(b, "50%"), "bcast_p99": pct(b, "99%"),
        "bcast_max": pct(b, "Max Response Time"),
        "deliveries_s": round(count(b) / held, 1), "frames_s": round(frames_total / held, 1),
        "chats_s": round(count(st.get("ack:chat")) / held, 1),
        "games": count(st.get("completed")), "requests": total_req, "failures": total_fail,
        "checks": checks,
        "errors": sorted({f"{f.get('Name')}: {f.get('Error')[:80]}" for f in failures})[:8],
        "cpu": {k: round(v, 1) for k, v in sorted(cpu.items())},
        "rss_mb": {k: round(v) for k, v in sorted(mem.items())},
    }
    broke = []
    if not spawned_ok:
        broke.append("not every table could connect in time")
    if row["bcast_p99"] is not None and row["bcast_p99"] > break_p99:
        broke.append(f"p99 broadcast {row['bcast_p99']:.0f} ms > {break_p99} ms")
    if total_req and total_fail / total_req > break_errors:
        broke.append(f"failures {total_fail}/{total_req}")
    if any(checks.values()):
        broke.append(f"stream checks {checks}")
    if count(b) == 0:
        broke.append("no broadcast measured")
    row["broke"] = "; ".join(broke)
    return row


def fmt(v, nd=0):
    """A figure of a table: `-` for none."""
    return "-" if v is None else f"{v:.{nd}f}"
