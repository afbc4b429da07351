"""A dying Mayor names a successor among the living, or the village loses its mayor."""

import pytest

from rules import IllegalTarget
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def mayor_dies_at_dawn_of_night_two() -> Game:
    game = Game(DEAL)
    game.night(victim=None)
    game.elect(5)
    game.vote_out(None)
    game.night(victim=5)
    assert game.phase == "successor"
    return game


def test_a_dying_mayor_names_a_living_successor():
    game = mayor_dies_at_dawn_of_night_two()
    assert game.prompts(5)[0]["choices"] == [0, 1, 2, 3, 4, 6, 7]
    events = game.act(5, "mayor.successor", [1])
    assert {"kind": "mayor", "to": None, "seat": 1, "how": "successor"} in events
    assert game.state.mayor == 1 and game.view(7)["seats"][1]["mayor"] is True
    assert game.phase == "day.discussion"


def test_the_successor_must_be_alive():
    game = mayor_dies_at_dawn_of_night_two()
    with pytest.raises(IllegalTarget):
        game.act(5, "mayor.successor", [5])


def test_a_mayor_who_names_nobody_in_time_leaves_the_village_without_mayor():
    game = mayor_dies_at_dawn_of_night_two()
    events = game.timeout()
    assert {"kind": "mayor", "to": None, "seat": None, "how": "none"} in events
    assert game.state.mayor is None and game.phase == "day.discussion"


def test_the_successor_s_vote_counts_twice():
    game = mayor_dies_at_dawn_of_night_two()
    game.act(5, "mayor.successor", [1])
    game.ask_to_vote()
    events = game.act(1, "vote", [0])
    assert events[-1]["tally"] == {"0": 2}


def test_a_mayor_hunter_shoots_first_then_names_his_successor():
    game = Game(DEAL)
    game.night(victim=None)
    game.elect(3)
    game.vote_out(None)
    game.night(victim=3)
    assert game.phase == "hunter"
    game.act(3, "hunter.shoot", [7])
    assert game.phase == "successor"
    assert 7 not in game.prompts(3)[0]["choices"]
    game.act(3, "mayor.successor", [2])
    assert game.state.mayor == 2
