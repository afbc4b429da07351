"""loadtest.fanout at its smallest: one room of 18 sockets, two rounds, bare uvicorn; a server
whose package is missing is skipped with a note (the figures themselves are a benchmark's)."""
from __future__ import annotations

from loadtest import fanout


def test_a_round_reaches_every_socket_of_the_room_and_the_report_has_its_row():
    report = fanout.run(["uvicorn-websockets"], rooms=1, rounds=2, warmup=1, idle_seconds=0)
    assert report["rooms"] == 1 and report["sockets"] == fanout.SEATS and report["cores"] >= 1
    assert report["python"].count(".") == 2 and report["skipped"] == {}
    (row,) = report["rows"]
    assert row["server"] == "uvicorn-websockets"
    assert row["frames"] == 2 * fanout.SEATS  # the measured rounds only, each to all 18
    assert row["server_cpu"] >= 0 and row["seconds"] > 0 and row["idle_cores"] == 0
    assert "| uvicorn-websockets | 36 |" in fanout.render(report)


def test_a_server_that_cannot_be_imported_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setitem(fanout.NEEDS, "picows", ("no_such_module_for_fanout",))
    report = fanout.run(["picows"], rooms=1, rounds=1, warmup=0, idle_seconds=0)
    assert report["rows"] == []
    assert "no_such_module_for_fanout" in report["skipped"]["picows"]
    note = "| picows | skipped: not importable: no_such_module_for_fanout |"
    assert note in fanout.render(report)
