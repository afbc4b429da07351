"""The Scapegoat (003): when the day's vote is tied he dies (tied or not, before any mayor's
tie-break), and may name who may vote on the next day."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 scapegoat, 2 villager, 3 villager, 4 villager, 5 villager, 6 villager
DEAL = ["werewolf", "scapegoat", "villager", "villager", "villager", "villager", "villager"]


def test_on_a_tie_the_scapegoat_dies_even_when_he_is_not_among_the_tied():
    game = Game(DEAL)
    game.night()
    game.elect(2)  # a mayor, yet the scapegoat comes first
    game.tied_vote(3, 4)
    assert game.deaths() == [(1, "scapegoat")]
    assert game.phase == "scapegoat" and game.prompts(1)[0]["action"] == "scapegoat.designate"


def test_the_scapegoat_names_who_may_vote_on_the_next_day():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.tied_vote(3, 4)
    game.act(1, "scapegoat.designate", [2, 3])
    assert game.events("scapegoat_voters") == [
        {"kind": "scapegoat_voters", "to": None, "voters": [2, 3], "day": 2}]
    game.night()
    game.ask_to_vote()
    assert [s for s in game.living() if game.prompts(s)] == [2, 3]
    game.act(2, "vote", [4])
    game.act(3, "vote", [4])
    assert game.deaths()[-1] == (4, "vote")  # the phase ends once the named have voted


def test_a_scapegoat_who_names_nobody_restricts_nobody():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.tied_vote(3, 4)
    game.timeout()
    game.night()
    game.ask_to_vote()
    assert all(game.prompts(s) for s in game.living())


def test_once_the_scapegoat_is_dead_ties_go_back_to_the_usual_rule():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.tied_vote(3, 4)
    game.timeout()
    game.night()
    game.tied_vote(3, 4)
    assert game.deaths() == [(1, "scapegoat")] and game.phase.startswith("night")
