"""The Witch learns whom the wolves chose; a life potion (herself included) and a death potion,
each once per game; both in one night allowed."""

import pytest

from rules import IllegalTarget, NotYourTurn
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def to_witch(game: Game, victim: int | None) -> None:
    game.timeout()
    game.timeout()
    if victim is None:
        game.timeout()
    else:
        game.act(0, "wolves.point", [victim])
        game.act(6, "wolves.point", [victim])
    assert game.phase == "night.witch"


def test_the_witch_learns_the_victim_and_nobody_else_does():
    game = Game(DEAL)
    to_witch(game, 5)
    assert game.events("witch_victim") == [{"kind": "witch_victim", "to": [2], "victim": 5}]
    assert game.view(2)["witch"] == {"victim": 5, "life": True, "death": True, "guarded": False}
    assert game.view(5)["witch"] is None
    assert {p["action"]: p["choices"] for p in game.prompts(2)} == {
        "witch.save": [5], "witch.poison": [0, 1, 2, 3, 4, 5, 6, 7]}


def test_the_life_potion_saves_the_victim():
    game = Game(DEAL)
    to_witch(game, 5)
    game.act(2, "witch.save", [5])
    game.act(2, "witch.poison", [])
    game.timeout()
    assert game.deaths() == [] and game.phase == "day.election"
    assert game.view(2)["witch"] == {"victim": 5, "life": False, "death": True, "guarded": False}


def test_the_witch_may_save_herself():
    game = Game(DEAL)
    to_witch(game, 2)
    game.act(2, "witch.save", [2])
    game.timeout()
    assert game.deaths() == []


def test_the_life_potion_is_used_once_per_game():
    game = Game(DEAL)
    to_witch(game, 5)
    game.act(2, "witch.save", [5])
    game.timeout()
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # seer
    game.act(0, "wolves.point", [7])
    game.act(6, "wolves.point", [7])
    assert [p["action"] for p in game.prompts(2)] == ["witch.poison"]
    with pytest.raises(NotYourTurn):
        game.act(2, "witch.save", [7])


def test_the_death_potion_kills_anyone_once_per_game():
    game = Game(DEAL)
    to_witch(game, None)
    assert [p["action"] for p in game.prompts(2)] == ["witch.poison"]  # nobody to save
    game.act(2, "witch.poison", [6])
    game.timeout()
    assert game.deaths() == [(6, "poison")]
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    game.act(0, "wolves.point", [7])
    assert [p["action"] for p in game.prompts(2)] == ["witch.save"]


def test_the_witch_may_use_both_potions_in_one_night():
    game = Game(DEAL)
    to_witch(game, 5)
    game.act(2, "witch.save", [5])
    game.act(2, "witch.poison", [0])
    game.timeout()
    assert game.phase == "day.election"
    assert game.deaths() == [(0, "poison")]


def test_the_victim_dies_before_the_poisoned():
    game = Game(DEAL)
    to_witch(game, 5)
    game.act(2, "witch.save", [])
    game.act(2, "witch.poison", [7])
    game.timeout()
    assert game.deaths() == [(5, "wolves"), (7, "poison")]


def test_the_witch_may_save_only_the_victim_and_poison_whomever_she_wishes_herself_included():
    game = Game(DEAL)
    to_witch(game, 5)
    with pytest.raises(IllegalTarget):
        game.act(2, "witch.save", [7])
    game.act(2, "witch.poison", [2])  # من تشاء: "whomever she wishes" (seed 000)
    game.timeout()
    assert game.deaths() == [(5, "wolves"), (2, "poison")]


def test_a_witch_with_no_potion_left_still_takes_her_full_time():
    game = Game(DEAL)
    to_witch(game, 5)
    game.act(2, "witch.save", [5])
    game.act(2, "witch.poison", [6])
    game.timeout()
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    game.act(0, "wolves.point", [7])
    assert game.phase == "night.witch" and game.prompts(2) == []
    deadline = game.state.deadline
    game.timeout()
    assert game.now == deadline and game.phase == "day.discussion"
    assert game.view(2)["witch"] == {"victim": 7, "life": False, "death": False, "guarded": False}


def test_the_witch_step_lasts_its_full_time_however_fast_she_answers():
    """Her step ends at its deadline whether she has potions to use or not: the clock tells the
    table nothing about them (D9)."""
    ends = {}
    for spent in (False, True):
        game = Game(DEAL)
        if spent:
            to_witch(game, 5)
            game.act(2, "witch.save", [5])
            game.act(2, "witch.poison", [6])
            game.timeout()
            game.elect(None)
            game.vote_out(None)
            game.timeout()  # seer
            game.act(0, "wolves.point", [7])
        else:
            to_witch(game, 5)
        opened = game.now
        assert game.phase == "night.witch"
        for prompt in game.prompts(2):
            game.act(2, prompt["action"], [])
        assert game.phase == "night.witch" and game.prompts(2) == []
        game.timeout()
        ends[spent] = game.now - opened
    assert ends[False] == ends[True] == Game(DEAL).settings.durations["witch"] * 1000


def test_a_dead_witch_no_longer_wakes():
    game = Game(DEAL)
    to_witch(game, 2)
    game.timeout()
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    game.act(0, "wolves.point", [7])
    game.act(6, "wolves.point", [7])
    assert game.phase == "day.discussion"
