"""loadtest.welcomecost: the whole view against the welcome's bounded one, for a seat and a
spectator (what is measured, not how fast: no wall-clock figure is asserted)."""
from __future__ import annotations

from actors.room_data import WELCOME_CHAT_LINES
from loadtest.welcomecost import main, measure


def test_each_socket_kind_is_measured_whole_and_bounded_and_the_bound_is_smaller():
    rows = measure(lines=WELCOME_CHAT_LINES * 3, repeat=3)
    assert [(r["who"], r["view"]) for r in rows] == [
        (who, view) for who in ("seat", "spectator")
        for view in ("whole", f"last {WELCOME_CHAT_LINES}")]
    for whole, bounded in zip(rows[::2], rows[1::2]):
        assert bounded["bytes"] * 2 < whole["bytes"]
        assert all(r[step] > 0 for r in (whole, bounded)
                   for step in ("build", "encode", "decode"))


def test_the_command_prints_its_table(capsys):
    main(["--lines", "150", "--repeat", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| socket | view | bytes |") and len(lines) == 6
