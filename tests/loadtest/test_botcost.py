"""loadtest.botcost plays whole games of bots and prints their cost, with no refused command."""
from loadtest import botcost


def test_a_game_of_bots_is_measured(capsys):
    botcost.main(["--games", "1", "--players", "6"])
    row = capsys.readouterr().out.splitlines()[-1].strip("|").split("|")
    players, games, refused, length, frames, commands, bot_ms, human_ms, _ = (
        float(cell) for cell in row)
    assert (players, games, refused) == (6, 1, 0)
    assert length > 0 and frames > 0 and commands > 0
    assert 0 < bot_ms and 0 < human_ms
