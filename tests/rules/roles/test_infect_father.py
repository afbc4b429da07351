"""Infect Father of Wolves (named by 001; the genre's standard rule): one of the pack; once per
game he may infect the pack's victim instead of letting him die: the victim lives, keeps his
card, and is one of the pack from then on."""

from rules import NotYourTurn, outcome, say
from tests.rules.driver import Game

import pytest

# seats: 0 infect father, 1 seer, 2 witch, 3 guard, 4-7 villagers
DEAL = ["infect_father", "seer", "witch", "guard", "villager", "villager", "villager", "villager"]


def to_infection(game: Game, victim: int) -> None:
    game.timeout()  # seer
    game.timeout()  # guard
    game.act(0, "wolves.point", [victim])
    assert game.phase == "night.wolves"  # his card may grow the pack unseen: full time (D16)
    game.timeout()
    assert game.phase == "night.infect_father"


def test_he_may_infect_the_pack_s_victim_who_lives_and_joins_the_pack():
    game = Game(DEAL)
    to_infection(game, 4)
    prompt = game.prompts(0)[0]
    assert prompt["action"] == "infect_father.infect" and prompt["choices"] == [4]
    game.act(0, "infect_father.infect", [4])
    assert game.phase == "night.infect_father"  # his step lasts its full time
    game.timeout()
    game.timeout()  # witch
    assert game.deaths() == [] and game.state.alive[4]
    assert game.events("infected") == [{"kind": "infected", "to": [4], "wolves": [0, 4]}]
    assert game.events("wolves")[-1] == {"kind": "wolves", "to": [0, 4], "wolves": [0, 4]}
    assert game.view(4)["me"]["role"] == "villager"  # he keeps his card
    assert game.view(4)["wolves"] == [0, 4] and game.view(5)["wolves"] is None
    game.elect(None)
    game.vote_out(None)
    game.act(1, "seer.inspect", [4])
    assert game.events("seer_result")[-1]["role"] == "villager"  # the Seer sees his card
    game.timeout()  # guard
    assert game.phase == "night.wolves"
    assert [p["action"] for p in game.prompts(4)] == ["wolves.point"]
    assert 4 not in game.prompts(0)[0]["choices"]
    game.say(4, "hello pack")
    with pytest.raises(NotYourTurn):
        say(game.state, 5, "me too", game.now)


def test_the_infection_is_once_per_game_and_his_step_still_runs():
    game = Game(DEAL)
    to_infection(game, 4)
    game.act(0, "infect_father.infect", [4])
    game.timeout()
    game.timeout()
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    game.timeout()
    game.act(0, "wolves.point", [5])
    game.act(4, "wolves.point", [5])
    game.timeout()
    assert game.phase == "night.infect_father" and game.prompts(0) == []
    game.timeout()
    game.timeout()
    assert game.deaths() == [(5, "wolves")]


def test_a_protected_victim_is_not_infected_and_the_power_is_spent():
    game = Game(DEAL)
    game.timeout()  # seer
    game.act(3, "guard.protect", [4])
    game.act(0, "wolves.point", [4])
    game.timeout()
    game.act(0, "infect_father.infect", [4])
    game.timeout()
    game.timeout()
    assert game.events("infected") == [] and game.state.memo["infect_father"]["used"]


def test_the_infected_win_with_the_pack_and_the_village_needs_him_dead():
    # seats: 0 infect father, 1-5 villagers
    game = Game(["infect_father", "villager", "villager", "villager", "villager", "villager"])
    game.act(0, "wolves.point", [1])
    game.timeout()
    game.act(0, "infect_father.infect", [1])
    game.timeout()
    game.elect(None)
    game.vote_out(0)
    assert outcome(game.state) is None  # the infected is a wolf: the village has not won
    game.act(1, "wolves.point", [2])
    game.timeout()
    assert game.phase == "day.discussion"  # the dead father's step does not run
    game.vote_out(3)
    game.act(1, "wolves.point", [4])
    game.timeout()
    game.vote_out(5)
    assert outcome(game.state).reason == "only_wolves_alive"
    assert outcome(game.state).winners == [0, 1]
