"""The capacity command: its model as arithmetic on given unit costs, and one small run of the
whole measurement on the real stack so the command never rots (counts only: no figure is judged)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from loadtest.capacity import SEATS, model

ROOT = Path(__file__).resolve().parents[2]


def measured(gateway_us: float, host_us: float, redis_us: float, mb_socket: float = 0.05) -> dict:
    unit = {"gateway_us": gateway_us, "ray-hosts_us": host_us, "redis_us": redis_us,
            "redis_calls": 10.0}
    idle = {"gateway_us": 1.0, "ray-hosts_us": 0.1, "redis_us": 0.1, "redis_calls": 0.01}
    memory = {"empty": {"gateway": 100.0, "ray-hosts": 200.0, "redis": 1.0},
              "lobbies": {"gateway": 100.0 + mb_socket * 36, "ray-hosts": 201.0, "redis": 1.5},
              "playing": {"gateway": 110.0, "ray-hosts": 202.0, "redis": 2.0}}
    return {"units": {"frame": unit, "command_chat": unit, "idle_socket_second": idle},
            "memory": memory, "rooms": 1, "sockets": 36}


def args(**over) -> argparse.Namespace:
    return argparse.Namespace(**{"headroom": 0.5, "sockets_per_gateway": 20_000,
                                 "frames_per_room": 6.5,
                                 "commands_per_room": 0.65, "games_per_actor": 200, **over})


def test_ten_times_the_rooms_need_ten_times_the_processes():
    rows = model(measured(gateway_us=50, host_us=400, redis_us=20), args())
    small, large = rows[1], rows[2]
    assert [r["rooms"] for r in rows] == [1_000, 10_000, 100_000]
    for key in ("gateway_processes", "host_cores", "redis_shards"):
        assert 9 * small[key] <= large[key] <= 11 * small[key] + 1, key
    assert large["host_actors"] == 100_000 // 200


def test_the_limit_that_binds_first_is_named():
    cheap_cpu = model(measured(gateway_us=1, host_us=1, redis_us=1), args())[2]
    assert cheap_cpu["gateway_bound"] == "sockets per process"
    assert cheap_cpu["gateway_processes"] == 100_000 * SEATS // 20_000
    assert cheap_cpu["binds_first"] == "sockets per gateway process"
    busy_hosts = model(measured(gateway_us=1, host_us=5_000, redis_us=1), args())[2]
    assert busy_hosts["binds_first"] == "game-host CPU"


@pytest.mark.e2e
def test_the_capacity_command_measures_every_unit_on_the_real_stack(tmp_path):
    out = tmp_path / "capacity.json"
    subprocess.run([sys.executable, "-m", "loadtest.capacity", "--rooms", "2", "--idle-seconds",
                    "1",
                    "--settle-seconds", "1", "--lines", "5", "--out", str(out)],
                   cwd=ROOT, check=True, timeout=600)
    data = json.loads(out.read_text())
    units = data["measured"]["units"]
    for name in ("create_room", "join", "welcome", "idle_socket_second", "chat_18", "chat_6",
                 "frame", "command_chat", "vote_round", "replayed_event"):
        assert name in units, name
    assert units["chat_18"]["frames_per_command"] > units["chat_6"]["frames_per_command"] >= 6
    assert units["replayed_event"]["count"] > 0
    assert [row["rooms"] for row in data["model"]] == [1_000, 10_000, 100_000]
