"""The Pied Piper (003): wakes after the Witch, charms two players a night (never himself); the
charmed learn who is charmed; he wins alone once every other living player is charmed."""

from rules import outcome
from tests.rules.driver import Game

# seats: 0 wolf, 1 piper, 2 witch, 3 villager, 4 villager, 5 villager
DEAL = ["werewolf", "piper", "witch", "villager", "villager", "villager"]


def to_piper(game: Game, victim=None) -> None:
    if victim is None:
        game.timeout()
    else:
        game.act(0, "wolves.point", [victim])
    game.timeout()  # witch
    assert game.phase == "night.piper"


def test_the_piper_wakes_after_the_witch_and_charms_two_players_never_himself():
    game = Game(DEAL)
    to_piper(game)
    prompt = game.prompts(1)[0]
    assert prompt["action"] == "piper.charm" and (prompt["min"], prompt["max"]) == (0, 2)
    assert 1 not in prompt["choices"]


def test_the_charmed_learn_who_is_charmed_but_not_who_the_piper_is():
    game = Game(DEAL)
    to_piper(game)
    game.act(1, "piper.charm", [3, 4])
    # one event to the Piper and the charmed: told once, at the table as in the review
    assert [(e["to"], e["charmed"]) for e in game.events("charmed")] == [([1, 3, 4], [3, 4])]
    assert game.view(3)["charmed"] == [3, 4] and game.view(5)["charmed"] is None
    assert game.view(3)["seats"][1]["role"] is None


def test_the_piper_wins_alone_when_every_other_living_player_is_charmed():
    game = Game(DEAL)
    to_piper(game)
    game.act(1, "piper.charm", [3, 4])
    game.elect(None)
    game.vote_out(5)
    to_piper(game, victim=2)
    assert game.prompts(1)[0]["choices"] == [0, 2]  # the victim dies only at dawn (D19)
    game.act(1, "piper.charm", [0])
    assert game.deaths()[-1] == (2, "wolves")  # dawn: everyone alive but him is charmed
    assert outcome(game.state).winners == [1]
    assert outcome(game.state).reason == "piper_charmed_all"


def test_a_dead_piper_wins_nothing():
    game = Game(DEAL)
    to_piper(game)
    game.act(1, "piper.charm", [3, 4])
    game.elect(None)
    game.vote_out(1)
    assert game.phase == "night.wolves" and outcome(game.state) is None
