"""The Hunter, when he dies by night or by day and whatever killed him, shoots a living player,
who dies with him. Chains resolve completely before the win check."""

import pytest

from rules import IllegalTarget, NotYourTurn
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def test_a_hunter_eaten_at_night_shoots_at_dawn_and_his_target_dies_with_him():
    game = Game(DEAL)
    game.night(victim=3)
    assert game.phase == "hunter"
    assert game.prompts(3) == [{"kind": "prompt", "action": "hunter.shoot",
                                "choices": [0, 1, 2, 4, 5, 6, 7], "min": 1, "max": 1,
                                "deadline": game.state.deadline}]
    assert game.view(5)["waiting"] == {"action": "hunter.shoot", "seats": [3]}
    game.act(3, "hunter.shoot", [0])
    assert game.deaths() == [(3, "wolves"), (0, "hunter")]
    assert game.phase == "day.election"


def test_a_hunter_voted_out_shoots():
    game = Game(DEAL)
    game.night(victim=None)
    game.elect(None)
    game.vote_out(3)
    game.act(3, "hunter.shoot", [6])
    assert game.deaths() == [(3, "vote"), (6, "hunter")]
    assert game.phase == "night.seer"


def test_a_poisoned_hunter_still_shoots():
    game = Game(DEAL)
    game.night(victim=None, poison=3)
    assert game.phase == "hunter"


def test_a_hunter_dying_of_grief_still_shoots():
    game = Game(DEAL)
    game.night(link=[3, 5], victim=5)
    assert game.deaths() == [(5, "wolves"), (3, "grief")]
    assert game.phase == "hunter"


def test_a_hunter_who_lets_time_run_out_shoots_nobody():
    game = Game(DEAL)
    game.night(victim=3)
    game.timeout()
    assert game.deaths() == [(3, "wolves")] and game.phase == "day.election"


def test_the_hunter_shoots_only_the_living_and_only_once():
    game = Game(DEAL)
    game.night(victim=3, poison=7)
    with pytest.raises(IllegalTarget):
        game.act(3, "hunter.shoot", [7])
    with pytest.raises(IllegalTarget):
        game.act(3, "hunter.shoot", [])
    game.act(3, "hunter.shoot", [5])
    with pytest.raises(NotYourTurn):
        game.act(3, "hunter.shoot", [1])


def test_a_hunter_shooting_a_lover_kills_the_other_lover_too():
    game = Game(DEAL)
    game.night(link=[1, 7], victim=3)
    game.act(3, "hunter.shoot", [7])
    assert game.deaths() == [(3, "wolves"), (7, "hunter"), (1, "grief")]


def test_a_hunter_shooting_the_mayor_lets_the_mayor_name_a_successor():
    game = Game(DEAL)
    game.night(victim=None)
    game.elect(5)
    game.vote_out(3)
    game.act(3, "hunter.shoot", [5])
    assert game.phase == "successor"
    game.act(5, "mayor.successor", [7])
    assert game.state.mayor == 7 and game.phase == "night.seer"


def test_the_hunter_shoots_before_the_win_is_checked():
    # The wolf eats the hunter when they are the last two: only the wolf would be left, but the
    # hunter's shot takes him along, nobody is left, and no wolf alive means the village wins.
    game = Game(["werewolf", "hunter", "villager", "villager", "villager", "villager"])
    game.night(victim=2)
    game.elect(None)
    game.vote_out(3)
    game.night(victim=4)
    game.vote_out(5)
    game.night(victim=1)
    assert game.phase == "hunter"
    game.act(1, "hunter.shoot", [0])
    assert game.state.outcome == {"winners": [1, 2, 3, 4, 5], "reason": "no_wolves_alive"}
    assert game.events("game_over")[0]["alive"] == []


def test_a_hunter_is_not_asked_to_shoot_once_no_wolf_lives():
    game = Game(["werewolf", "hunter", "cupid", "villager", "villager", "villager"])
    game.night(link=[0, 1], victim=None)
    game.elect(None)
    game.vote_out(0)
    assert game.deaths() == [(0, "vote"), (1, "grief")]
    assert game.phase == "over" and game.state.outcome["reason"] == "no_wolves_alive"


def test_a_hunter_shooting_a_lover_who_is_mayor_resolves_grief_then_succession():
    game = Game(DEAL)
    game.night(link=[5, 7], victim=None)
    game.elect(5)
    game.vote_out(3)
    game.act(3, "hunter.shoot", [5])
    assert game.deaths() == [(3, "vote"), (5, "hunter"), (7, "grief")]
    assert game.phase == "successor" and game.prompts(5)[0]["choices"] == [0, 1, 2, 4, 6]
    game.act(5, "mayor.successor", [1])
    assert game.state.mayor == 1 and game.phase == "night.seer"


def test_a_hunter_whose_death_leaves_the_mixed_lovers_the_last_two_is_not_asked_to_shoot():
    game = Game(["werewolf", "hunter", "cupid", "villager", "villager", "villager"])
    game.act(2, "cupid.link", [0, 3])
    game.night(victim=4)
    game.elect(None)
    game.vote_out(5)
    game.night(victim=2)
    game.vote_out(1)
    assert game.deaths()[-1] == (1, "vote") and game.phase == "over"
    assert game.state.outcome == {"winners": [0, 3], "reason": "lovers_last_alive"}
