"""The scale-out command: the balancer config it runs, its report, and one small run of it (one
capped node behind HAProxy on a capped Redis Cluster) so the command never rots. Counts only: no
figure is judged (the curve itself is a benchmark, loadtest/README.md)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from loadtest.scaleout import CGROUP_ROOT, cpu_caps, write_report
from loadtest.stack import haproxy_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_balancer_is_the_shipped_config_with_this_runs_bind_and_servers():
    text = haproxy_config(18123, [("node1", "10.1.2.1"), ("node2", "10.1.2.2")])
    assert "bind 127.0.0.1:18123" in text and "bind :80" not in text
    assert "resolvers" not in text  # by address: no Docker DNS here
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    assert servers == [["server", "node1", "10.1.2.1:8000"],
                       ["server", "node2", "10.1.2.2:8000"]] * 2
    assert "balance hash var(txn.room)" in text  # the room affinity under test is the shipped one


@pytest.mark.skipif(os.geteuid() != 0 or not (CGROUP_ROOT / "cpu").is_dir(),
                    reason="cgroup v1's cpu controller, writable by root")
def test_a_cap_is_its_cores_per_period():
    with cpu_caps(10_000) as make:
        cap = make("period-test", 0.15)
        assert (cap.dirs[0] / "cpu.cfs_period_us").read_text().strip() == "10000"
        assert (cap.dirs[0] / "cpu.cfs_quota_us").read_text().strip() == "1500"
    assert not cap.dirs[0].exists()


def row(k: int, rooms: int, broke: str = "") -> dict:
    return {"k": k, "rooms": rooms, "sockets": rooms * 18, "ack_chat_p50": 5, "ack_chat_p99": 50,
            "bcast_p50": 5, "bcast_p99": 40, "frames_s": 10.0, "commands_s": 1.0,
            "node_ms_per_command": 1.5, "checks": {"lost": 0},
            "failures": 0, "node_cores": {i: 0.2 for i in range(1, k + 1)},
            "hosts_per_node": {}, "sockets_per_node": {}, "redis_shard_cores": [0.01] * 3,
            "cpu": {"locust": 3.0}, "broke": broke}


def report(points: dict, out: Path) -> tuple[str, dict]:
    """The report's table and results.json for `points` (k -> runs -> step rows)."""
    args = Namespace(node_cpu=0.25, redis_cpu=0.25, cpu_period_ms=100, hold=120, break_p99=500)
    write_report(points, None, args, out)
    return (out / "scaleout.md").read_text(), json.loads((out / "results.json").read_text())


def test_the_report_sets_each_k_against_k_times_rooms_of_one(tmp_path):
    points = {1: [[row(1, 50), row(1, 100, "p99 broadcast 900 ms > 500 ms")]],
              2: [[row(2, 100), row(2, 150)]], 3: [[row(3, 120), row(3, 200, "failures")]]}
    table, results = report(points, tmp_path)
    assert "| 1 | 50 | 50 | 50-50 | 50 | 1.00 |" in table
    assert "| 2 | 150 | 150 | 150-150 | 100 | 1.50 |" in table
    assert "| 3 | 120 | 120 | 120-120 | 150 | 0.80 |" in table
    assert results["held"] == {"1": 50, "2": 150, "3": 120}
    assert (tmp_path / "scaleout.png").stat().st_size > 0


def test_rooms_of_k_is_the_median_of_its_runs_with_their_spread(tmp_path):
    # k = 1: runs held 60, 80 and 0 (its first step broke); k = 2: 160, 120, 160
    points = {1: [[row(1, 60), row(1, 80, "failures")], [row(1, 60), row(1, 80)],
                  [row(1, 60, "p99 broadcast 700 ms > 500 ms")]],
              2: [[row(2, 120), row(2, 160)], [row(2, 120), row(2, 160, "failures")],
                  [row(2, 120), row(2, 160)]]}
    table, results = report(points, tmp_path)
    assert "the median of 3 run(s)" in table
    assert "| 1 | 60, 80, 0 | 60 | 0-80 | 60 | 1.00 |" in table
    assert "| 2 | 160, 120, 160 | 160 | 120-160 | 120 | 1.33 |" in table
    assert results["held"] == {"1": 60, "2": 160}
    assert results["runs_held"] == {"1": [60, 80, 0], "2": [160, 120, 160]}
    # every run's steps are listed, held or broken
    assert table.count("| 1 | 80 | 1440 |") == 2 and table.count("| 2 | 160 | 2880 |") == 3


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("haproxy") or not shutil.which("ip"),
                    reason="network namespaces and cgroups need root; the balancer is haproxy")
def test_one_capped_node_holds_a_few_rooms_through_haproxy(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "loadtest.scaleout", "--nodes", "1", "--steps-per-node", "2",
         "--node-cpu", "1", "--redis-cpu", "1",  # caps still set, a core each: the starts are quick
         "--hold", "10", "--settle", "2", "--spawn-rate", "1", "--workers", "1", "--no-churn",
         "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ((first,),) = json.loads((tmp_path / "results.json").read_text())["points"]["1"]
    assert first["rooms"] == 2 and first["sockets_per_node"]["1"] == 36
    assert first["node_cores"]["1"] > 0 and first["hosts_per_node"]["1"] >= 1
    assert not any(first["checks"].values())
    assert not [p for p in Path("/sys/fs/cgroup/cpu").iterdir() if p.name.startswith("ww")
                and p.name.endswith("-redis0")], "a CPU cap was left behind"
