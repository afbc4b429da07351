"""Winning: villagers when no wolf lives, wolves when only wolves live, mixed lovers when they are
the last two; checked as soon as a chain of deaths is resolved; the end reveals everything."""

from rules import Outcome, outcome
from tests.rules.driver import Game

SIX = ["werewolf", "villager", "villager", "villager", "villager", "villager"]


def test_no_outcome_while_the_game_runs():
    assert outcome(Game(SIX).state) is None


def test_the_villagers_win_when_no_wolf_is_alive():
    game = Game(SIX)
    game.night(victim=1)
    game.elect(None)
    game.vote_out(0)
    assert outcome(game.state) == Outcome(winners=[1, 2, 3, 4, 5], reason="no_wolves_alive")
    assert game.phase == "over" and game.state.deadline is None


def test_the_wolves_win_when_only_wolves_are_alive():
    game = Game(SIX)
    game.night(victim=1)
    game.elect(None)
    game.vote_out(2)
    game.night(victim=3)
    game.vote_out(4)
    assert game.living() == [0, 5]
    game.night(victim=5)
    assert outcome(game.state) == Outcome(winners=[0], reason="only_wolves_alive")


def test_the_win_is_checked_at_dawn_before_the_day_begins():
    game = Game(SIX)
    game.night(victim=1)
    game.elect(None)
    game.vote_out(2)
    game.night(victim=3)
    game.vote_out(4)
    game.night(victim=5)
    assert [e["phase"] for e in game.events("phase")][-1] == "night.wolves"


def test_the_end_reveals_every_card_and_every_line_of_every_channel():
    game = Game(["werewolf", "villager", "villager", "werewolf", "villager", "villager",
                 "villager", "villager"])
    game.say(0, "wolves here")
    game.night(victim=1)
    game.say(1, "I am dead")
    game.say(2, "morning")
    game.elect(None)
    game.vote_out(0)
    game.night(victim=2)
    game.vote_out(3)
    over = game.events("game_over")[0]
    assert over["to"] is None and over["reason"] == "no_wolves_alive"
    assert over["roles"] == {str(s): r for s, r in enumerate(game.state.roles)}
    assert [(line["channel"], line["text"]) for line in over["chat"]] == [
        ("wolves", "wolves here"), ("dead", "I am dead"), ("day", "morning")]
    assert over["alive"] == game.living()
    view = game.view(4)
    assert [s["role"] for s in view["seats"]] == game.state.roles
    assert set(view["chat"]) == {"wolves", "dead", "day"}
    assert view["outcome"] == {"winners": [1, 2, 4, 5, 6, 7], "reason": "no_wolves_alive"}
    assert view["prompts"] == [] and view["channels"] == [] and view["waiting"] is None
