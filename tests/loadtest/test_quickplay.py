"""The quick-play load run at small scale, so the model and its measurement never rot: 22
strangers press play within 5 s (`python -m loadtest.quickplay` on its own private stack: Ray
head, two gateways, the shared Redis under a fresh prefix), then play their seats for a while on
2 s phases. Every press is seated, none twice, no table overfilled, a table of 18 forms (the 4
left over wait at a second, short of seed 000's minimum). Counts only: no wall-clock threshold."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loadtest.quickplay import lost_across_seats, seat_report

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = 22


def press(pid: str, name: str, *answers, clicks: int = 1) -> dict:
    return {"press": pid, "name": name, "t0": 0.0, "ms": 5.0 if answers else None,
            "clicks": clicks, "answers": [list(a) for a in answers]}


def test_the_report_counts_overfilled_tables_and_doubly_seated_presses():
    facts = {"AAAA": {"status": "running",
                      "players": [{"seat": i, "name": f"n{i}"} for i in range(3)]},
             "BBBB": {"status": "lobby", "players": [{"seat": 0, "name": "n3"}]}}
    clean = [press(f"p{i}", f"n{i}", ("AAAA", i)) for i in range(3)] + [
        press("p3", "n3", ("BBBB", 0), ("BBBB", 0), clicks=2)]
    report = seat_report(clean, facts, size=3, least=2)
    assert (report["overfilled"], report["doubly_seated"], report["tables_full"]) == (0, 0, 1)
    assert (report["tables_short"], report["double_clicks"], report["seated"]) == (1, 1, 4)
    bad = clean + [press("p4", "n4", ("AAAA", 2)),                  # a seat given twice
                   press("p5", "n5", ("BBBB", 1), ("AAAA", 9), clicks=2)]  # one press, two seats
    facts["AAAA"]["players"].append({"seat": 3, "name": "n4"})     # and a 4th player at 3 seats
    report = seat_report(bad, facts, size=3, least=2)
    assert report["overfilled"] == 1
    assert report["doubly_seated_parts"] == {"one_press_two_seats": 1, "two_presses_one_seat": 1,
                                             "seat_held_by_another_name": 2}


def test_public_events_one_player_missed_are_counted_across_its_table():
    overs = [{"room": "AAAA", "outcome": "completed", "public": [1, 2, 3]},
             {"room": "AAAA", "outcome": "completed", "public": [1, 3]},
             {"room": "BBBB", "outcome": "completed", "public": [1]},
             {"room": "BBBB", "outcome": "stopped", "public": []}]
    assert lost_across_seats(overs) == 1


@pytest.mark.e2e
def test_strangers_pressing_play_fill_tables_of_18_exactly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "loadtest.quickplay", "--players", str(PLAYERS), "--window", "5",
         "--gateways", "2", "--workers", "1", "--warm-actors", "1", "--spawn-rate", "40",
         "--double-press", "0.25", "--durations", "test", "--think", "0.2,1.0",
         "--chat-interval", "3", "--night-chat-interval", "2", "--hold", "6",
         "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads((tmp_path / "results.json").read_text())
    seats, play = result["seats"], result["play"]
    assert seats["presses"] == seats["seated"] == PLAYERS, seats
    assert seats["overfilled"] == 0 and seats["doubly_seated"] == 0, seats
    assert seats["facts_missing"] == 0
    assert seats["tables_full"] == PLAYERS // 18, seats
    assert seats["table_sizes"] == {"4": 1, "18": 1}, seats
    assert seats["double_clicks"] > 0  # the same press id sent twice got one seat
    arrival = result["arrival"]
    assert arrival["rows"]["quickplay"]["n"] == PLAYERS + seats["double_clicks"]
    assert arrival["rows"]["home"]["n"] == arrival["rows"]["tables"]["n"] == PLAYERS
    assert arrival["failures"] == 0 and play["failures"] == 0, (arrival["errors"], play["errors"])
    # every player opened its socket; the full tables started by themselves and played
    assert play["players_connected"] == PLAYERS, play["outcomes"]
    assert not any(play["checks"].values()), play["checks"]
    acts = sum(run["rows"].get("ack:act", {"n": 0})["n"] for run in (arrival, play))
    assert acts > 0
