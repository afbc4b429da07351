"""House rules of seeds 002-003 on the seed-000 roles, each value in the spec's words."""

import pytest

from rules import outcome
from tests.rules.driver import Game

DEAL = ["werewolf", "seer", "witch", "hunter", "cupid", "villager", "werewolf", "villager"]


@pytest.mark.parametrize("trigger, cause, shoots", [
    ("any", "poison", True), ("attack_or_exile", "wolves", True),
    ("attack_or_exile", "poison", False), ("attack_or_exile", "vote", True),
    ("exile_only", "wolves", False), ("exile_only", "vote", True)])
def test_hunter_trigger_the_hunter_shoots_only_for_the_causes_it_covers(trigger, cause, shoots):
    game = Game(DEAL, rules={"hunter_trigger": trigger})
    game.timeout()  # cupid
    game.night(victim=3 if cause == "wolves" else 5, poison=3 if cause == "poison" else None)
    if cause == "vote":
        game.elect(None)
        game.vote_out(3)
    assert (3, cause) in game.deaths()
    assert (game.phase == "hunter") is shoots


def test_hunter_trigger_attack_or_exile_a_hunter_dying_of_grief_does_not_shoot():
    game = Game(DEAL, rules={"hunter_trigger": "attack_or_exile"})
    game.act(4, "cupid.link", [3, 5])
    game.night(victim=5)
    assert game.deaths() == [(5, "wolves"), (3, "grief")] and game.phase == "day.election"


def test_witch_potions_per_night_1_using_one_potion_closes_the_other():
    game = Game(DEAL, rules={"witch_potions_per_night": 1})
    game.timeout()
    game.night(victim=5, save=True)
    assert game.phase == "day.election" and game.deaths() == []
    assert game.view(2)["witch"] == {"victim": 5, "life": False, "death": True}


def test_witch_potions_per_night_2_both_potions_in_one_night():
    game = Game(DEAL)
    game.timeout()
    game.night(victim=5, save=True, poison=7)
    assert game.deaths() == [(7, "poison")]


def test_mayor_none_the_day_has_no_election_and_a_tie_eliminates_nobody():
    game = Game(DEAL, rules={"mayor": "none"})
    game.timeout()
    game.night()
    assert game.phase == "day.discussion"
    game.ask_to_vote()
    game.act(1, "vote", [5])
    game.act(2, "vote", [7])
    game.timeout()
    assert game.deaths() == [] and game.phase == "night.seer"


def test_lovers_vote_restriction_a_lover_may_not_vote_against_the_other():
    game = Game(DEAL, rules={"lovers_vote_restriction": "not_against_each_other"})
    game.act(4, "cupid.link", [1, 5])
    game.night()
    game.elect(None)
    game.ask_to_vote()
    assert 5 not in game.prompts(1)[0]["choices"] and 1 not in game.prompts(5)[0]["choices"]
    assert 5 in game.prompts(2)[0]["choices"]


def test_lovers_learn_role_each_lover_learns_the_other_s_card():
    game = Game(DEAL, rules={"lovers_learn_role": "yes"})
    game.act(4, "cupid.link", [1, 6])
    assert game.events("lovers") == [{"kind": "lovers", "to": [1, 4, 6], "lovers": [1, 6],
                                      "roles": {"1": "seer", "6": "werewolf"}}]


def test_wolves_win_kill_side_the_pack_wins_once_every_plain_villager_is_dead():
    deal = ["werewolf", "seer", "villager", "villager", "werewolf", "hunter"]
    game = Game(deal, rules={"wolves_win": "kill_side"})
    game.night(victim=2)
    game.elect(None)
    game.vote_out(3)
    assert outcome(game.state).reason == "village_side_killed"
    assert outcome(game.state).winners == [0, 4]


def test_wolves_win_kill_all_the_pack_needs_every_villager_dead():
    deal = ["werewolf", "seer", "villager", "villager", "werewolf", "hunter"]
    game = Game(deal, rules={"wolves_win": "kill_all"})
    game.night(victim=2)
    game.elect(None)
    game.vote_out(3)
    assert outcome(game.state) is None
