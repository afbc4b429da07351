"""Smoke runs of the load harness, so the load scripts never rot.

* the bare baseline server driven by headless Locust (fast, no Ray);
* the `rush` model: 4 tables of 18 players playing real games to the end through the real stack
  (devstack/stack.py: private Ray head, `werewolf serve`, shared Redis under a random prefix), with
  every seat's stream checked (no duplicate, no reorder, every public event at every seat) and
  every seat re-read with hello since=0 after game_over and compared with what it got live;
* the `human` model: 2 tables for a minute on phases long enough for its think times and chat
  gaps (a human game lasts longer than a smoke test), every stream checked as it goes;
* the `bots` model: a table of 8 seats each played by a `bots.Bot` from its socket's frames, to
  the game's end with no command refused.

No wall-clock thresholds: only counts and the absence of failures are asserted.
"""
from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from loadtest.core import (
    StreamCheck, answer_delay, chat_text, choose_targets, compare_replay, lost_public_events,
    parse_chat_text, SeatState,
)
from loadtest.runner import LOCUSTFILE, locust_env, locust_exe

ROOT = Path(__file__).resolve().parents[2]


def run_locust(host: str, tables: int, tmp_path: Path, *extra: str, limit_s: int = 150,
               games: int = 1) -> dict:
    prefix = tmp_path / "run"
    proc = subprocess.run(
        [locust_exe(), "-f", LOCUSTFILE, "--headless", "-u", str(tables),
         "-r", str(tables), "-t", f"{limit_s}s", "--host", host, "--csv", str(prefix),
         "--only-summary", "--loglevel", "WARNING", "--ww-games", str(games), *extra],
        cwd=ROOT, env=locust_env(), capture_output=True, text=True, timeout=limit_s + 60)
    rows = {r["Name"]: r for r in csv.DictReader(open(f"{prefix}_stats.csv"))}
    failures = list(csv.DictReader(open(f"{prefix}_failures.csv")))
    return {"rows": rows, "failures": failures, "out": proc.stdout + proc.stderr}


def n(rows: dict, name: str, col: str = "Request Count") -> int:
    return int(rows[name][col]) if name in rows else 0


def assert_clean(res: dict, tables: int, players: int = 18, completed: bool = True) -> None:
    rows = res["rows"]
    assert not res["failures"], res["failures"]
    assert n(rows, "Aggregated", "Failure Count") == 0, res["out"][-3000:]
    if completed:
        assert n(rows, "completed") == tables, res["out"][-3000:]
    assert n(rows, "connect") == tables * players
    assert n(rows, "broadcast") > 0
    for check in ("lost", "duplicated", "reordered", "replay_mismatch"):
        assert check not in rows


# ------------------------------------------------------------------ pure pieces (fast)

def test_stream_check_flags_duplicates_and_reorders():
    st = StreamCheck()
    assert st.add(1, "joined") is None
    assert st.add(3, "phase") is None          # gaps are private events of other seats
    assert st.add(3, "phase") == "duplicated"
    assert st.add(2, "chat") == "reordered"
    assert (st.duplicated, st.reordered) == (1, 1)


def test_lost_public_events_and_replay_compare():
    a, b = StreamCheck(), StreamCheck()
    for seq, kind in [(1, "joined"), (2, "role"), (3, "phase")]:
        a.add(seq, kind)
    b.add(1, "joined")
    b.add(4, "role")
    assert lost_public_events({0: a, 1: b}) == {1: [3]}
    assert compare_replay(a, [1, 2, 3, 5], upto=4) == ([], [])
    assert compare_replay(b, [1, 3, 4], upto=4) == ([3], [])


def test_prompt_answers_are_legal():
    import random

    rng = random.Random(1)
    for prompt in ({"action": "cupid.link", "choices": [1, 2, 3], "min": 2, "max": 2},
                   {"action": "vote", "choices": [4, 5], "min": 0, "max": 1},
                   {"action": "vote.request", "choices": [], "min": 0, "max": 0}):
        t = choose_targets(prompt, rng)
        assert prompt["min"] <= len(t) <= prompt["max"] and set(t) <= set(prompt["choices"])
    p = {"action": "vote.request", "deadline": 10_000}
    assert 0 < answer_delay(p, rng, (0.3, 2.0), now_s=0.0) < 10
    assert answer_delay({"action": "vote", "deadline": 1_000}, rng, (0.3, 2.0), now_s=0.0) <= 0.5


def test_chat_lines_carry_their_send_time_and_seat_state_tracks_channels():
    assert parse_chat_text(chat_text(7, 3, 1234.5)) == (1234.5, 7, 3)
    assert parse_chat_text("hello") is None
    s = SeatState(2)
    s.on_event({"kind": "wolves", "wolves": [2, 5]})
    s.on_event({"kind": "phase", "phase": "night.wolves"})
    assert s.chat_channel() == "wolves"
    s.on_event({"kind": "phase", "phase": "day.discussion"})
    assert s.chat_channel() == "day"
    s.on_event({"kind": "death", "seat": 2})
    assert s.chat_channel() is None


# ------------------------------------------------------------------ Locust runs

def test_locust_tables_against_the_bare_baseline(tmp_path):
    from loadtest.stack import baseline_stack

    with baseline_stack(1, game_seconds=6) as running:
        res = run_locust(running.urls[0], 3, tmp_path, "--ww-chat-interval", "2",
                         "--ww-verify-seats", "18", limit_s=60)
    assert_clean(res, 3)
    assert n(res["rows"], "replay") == 3 * 18


# Waits on a loaded machine: the rush bots chat every 3 s after 0.2-1 s think times, near the
# room's chat limit, and a stalled machine bunches their lines (two rate_limited refusals on a
# first try in CI at 88a8a66; its rerun passed).
@pytest.mark.flaky(reruns=1)
@pytest.mark.e2e
def test_rush_tables_play_real_games_through_the_real_stack(stack, tmp_path):
    gateway = stack.start_gateway(games_per_actor=100)    # devstack/stack.py: 2 s phases
    res = run_locust(gateway.url, 4, tmp_path, "--ww-model", "rush", "--ww-chat-interval", "3",
                     "--ww-night-chat-interval", "2", "--ww-think", "0.2,1.0",
                     "--ww-verify-seats", "18", limit_s=150)
    assert_clean(res, 4)
    rows = res["rows"]
    assert n(rows, "replay") == 4 * 18
    assert n(rows, "ack:act") > 0 and n(rows, "ack:chat") > 0


# Long enough for the human model's 2-15 s thinking and 20-40 s chat gaps to happen in a minute.
HUMAN_SMOKE_DURATIONS = {"cupid": 4, "seer": 4, "wolves": 30, "witch": 4, "election": 20,
                         "discussion": 40, "vote": 20, "tiebreak": 10, "hunter": 10,
                         "successor": 10}


@pytest.mark.e2e
def test_human_tables_talk_and_act_through_the_real_stack(stack, tmp_path):
    gateway = stack.start_gateway(games_per_actor=200, durations=HUMAN_SMOKE_DURATIONS)
    res = run_locust(gateway.url, 2, tmp_path, "--ww-model", "human", limit_s=60, games=0)
    assert_clean(res, 2, completed=False)
    rows = res["rows"]
    assert n(rows, "ack:act") > 0 and n(rows, "ack:chat") > 0


# Long enough for the bots' 2-10 s thinking, their lines and their asks to vote (15-45 s into the
# discussion, capped 1 s before its end: a short one has them all ask at once, and those in flight
# when a majority has asked are refused); short enough that a game of 8 ends in a few minutes.
BOTS_SMOKE_DURATIONS = {"cupid": 6, "seer": 8, "wolves": 10, "witch": 8, "election": 10,
                        "discussion": 45, "vote": 10, "tiebreak": 8, "hunter": 8, "successor": 8}


@pytest.mark.e2e
def test_a_bots_table_plays_a_real_game_to_its_end_with_no_command_refused(stack, tmp_path):
    gateway = stack.start_gateway(games_per_actor=10, durations=BOTS_SMOKE_DURATIONS)
    res = run_locust(gateway.url, 1, tmp_path, "--ww-model", "bots", "--ww-players", "8",
                     "--ww-verify-seats", "8", limit_s=600)
    assert_clean(res, 1, players=8)
    rows = res["rows"]
    assert n(rows, "replay") == 8
    assert n(rows, "ack:act") > 8 and n(rows, "ack:chat") > 0
    for refused in ("late_act", "late_chat"):  # a bot acts within its prompts and its phase
        assert refused not in rows, res["out"][-3000:]
