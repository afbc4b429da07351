from loadtest import botplay


def test_the_benchmark_prints_each_match_up_and_no_refused_command(capsys):
    assert botplay.main(["--games", "2", "--roles", "--tables", "seed_004/6"]) == 0
    out = capsys.readouterr().out
    for matchup in botplay.MATCHUPS:
        assert matchup in out
    assert "per role (plausible)" in out
    assert out.rstrip().endswith("refused commands: 0")


def test_one_match_up_alone_prints_only_its_own_rates(capsys):
    args = ["--games", "3", "--roles", "--tables", "every_card_b/14", "--matchups", "plausible"]
    assert botplay.main(args) == 0
    out = capsys.readouterr().out
    assert "plausible" in out and "random_village" not in out and "plausible - random" not in out
    assert "per role (plausible)" in out
