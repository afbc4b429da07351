"""The Village Idiot (003): voted to death, his card turns up and he lives on, without a vote;
the wolves, the poison and a second vote kill him."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 idiot, 2 witch, 3 villager, 4 villager, 5 villager, 6 villager
DEAL = ["werewolf", "idiot", "witch", "villager", "villager", "villager", "villager"]


def test_the_idiot_voted_out_shows_his_card_and_lives():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.vote_out(1)
    assert game.deaths() == [] and game.state.alive[1]
    assert game.events("idiot_revealed") == [
        {"kind": "idiot_revealed", "to": None, "seat": 1, "role": "idiot"}]
    assert game.view(3)["seats"][1]["role"] == "idiot"  # everybody sees his card


def test_a_revealed_idiot_no_longer_votes_but_still_talks_and_asks_to_vote():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.vote_out(1)
    game.night()
    game.say(1, "I told you so")
    assert [p["action"] for p in game.prompts(1)] == ["vote.request"]
    game.timeout()
    assert game.prompts(1) == [] and 1 not in game.view(3)["waiting"]["seats"]
    assert 1 in game.prompts(3)[0]["choices"]


def test_the_second_vote_kills_the_idiot():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.vote_out(1)
    game.night()
    game.vote_out(1)
    assert game.deaths() == [(1, "vote")]


def test_the_wolves_and_the_poison_kill_the_idiot_normally():
    game = Game(DEAL)
    game.night(victim=1)
    assert game.deaths() == [(1, "wolves")]
    game = Game(DEAL)
    game.night(poison=1)
    assert game.deaths() == [(1, "poison")]


def test_a_mayor_s_tie_break_on_the_idiot_counts_as_the_vote():
    game = Game(DEAL)
    game.night()
    game.elect(3)
    game.ask_to_vote()
    game.act(3, "vote", [1])  # the mayor: 2
    game.act(5, "vote", [0])
    game.act(6, "vote", [0])
    game.timeout()
    assert game.phase == "day.tiebreak"
    game.act(3, "mayor.tiebreak", [1])
    assert game.events("idiot_revealed") and game.state.alive[1]
