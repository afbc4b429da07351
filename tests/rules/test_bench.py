"""The engine-only benchmark runs and reports its figures."""

import sys

from rules import bench


def test_the_bench_plays_games_and_prints_games_per_second_and_microseconds(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["rules.bench", "--games", "3", "--seed", "1"])
    bench.main()
    out = capsys.readouterr().out
    assert "3 games in" in out and "games/s" in out and "us/command" in out
    for kind in ("act", "advance", "view"):
        assert f"  {kind} " in out


def test_against_a_revision_the_bench_prints_that_engine_s_figures_too(capfd, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["rules.bench", "--games", "2", "--largest",
                                      "--against", "HEAD"])
    bench.main()
    out = capfd.readouterr().out
    assert out.index("engine of HEAD:") < out.index("this engine:")
    assert out.count("2 games in") == 2
