from loadtest import botplay


def test_the_benchmark_prints_each_match_up_and_no_refused_command(capsys):
    assert botplay.main(["--games", "2", "--roles", "--tables", "seed_004/6"]) == 0
    out = capsys.readouterr().out
    for matchup in botplay.MATCHUPS:
        assert matchup in out
    assert "per role (plausible)" in out
    assert out.rstrip().endswith("refused commands: 0")
