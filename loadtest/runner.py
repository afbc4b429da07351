"""Drive Locust (master + workers, web API) from a script, and read its stats per step."""
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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from loadtest.stack import ROOT, free_port, raise_fd_limit

LOCUSTFILE = str(ROOT / "loadtest" / "locustfile.py")


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
    full_env = {**os.environ, **env, "PYTHONPATH": str(ROOT)}
    common = ["-f", LOCUSTFILE]
    master = subprocess.Popen(
        [locust_exe(), *common, "--master", "--master-bind-host", "127.0.0.1",
         "--master-bind-port", str(bind), "--web-host", "127.0.0.1", "--web-port", str(web),
         "--expect-workers", str(n_workers), "--host", host, "--loglevel", "WARNING"],
        cwd=ROOT, env=full_env, stdout=open(log_dir / "master.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True)
    workers = [subprocess.Popen(
        [locust_exe(), *common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(bind),
         "--loglevel", "WARNING"],
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
