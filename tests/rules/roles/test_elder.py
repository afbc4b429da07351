"""The Elder (003): survives the wolves' first attack, dies of the second. Killed by the village
(vote, Hunter's bullet, poison) every non-wolf card loses its power."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 elder, 2 witch, 3 seer, 4 hunter, 5 villager, 6 villager, 7 idiot
DEAL = ["werewolf", "elder", "witch", "seer", "hunter", "villager", "villager", "idiot"]


def test_the_elder_survives_the_first_attack_and_nobody_is_told():
    game = Game(DEAL)
    game.night(victim=1)
    assert game.deaths() == [] and game.state.alive[1]
    night = game.log[game.log.index(game.events("phase")[0]):]
    assert {e["kind"] for e in night} == {"phase", "prompt", "prompt_closed", "pointed",
                                          "witch_victim"}


def test_the_second_attack_kills_the_elder():
    game = Game(DEAL)
    game.night(victim=1)
    game.elect(None)
    game.vote_out(None)
    game.night(victim=1)
    assert game.deaths() == [(1, "wolves")]
    assert game.events("powers_lost") == []  # the wolves are not the village


def test_a_saved_attack_costs_the_elder_nothing():
    game = Game(DEAL)
    game.night(victim=1, save=True)
    game.elect(None)
    game.vote_out(None)
    game.night(victim=1)
    assert game.deaths() == [] and game.state.alive[1]  # the spare life was still there


def test_the_village_voting_out_the_elder_takes_every_villager_power():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.vote_out(1)
    assert game.deaths() == [(1, "vote")]
    assert game.events("powers_lost") == [{"kind": "powers_lost", "to": None, "seat": 1}]
    assert game.phase == "night.wolves"  # no seer any more
    game.act(0, "wolves.point", [4])
    assert game.phase == "day.discussion"  # no witch step, and the hunter does not shoot
    assert game.deaths()[-1] == (4, "wolves")


def test_the_poisoned_elder_dies_at_once_and_the_penalty_follows():
    game = Game(DEAL)
    game.night(poison=1)
    assert game.deaths() == [(1, "poison")] and game.events("powers_lost")


def test_a_revealed_idiot_dies_when_the_village_loses_its_powers():
    game = Game(DEAL)
    game.night()
    game.elect(None)
    game.vote_out(7)
    assert game.events("idiot_revealed") and game.state.alive[7]
    game.night()
    game.vote_out(1)
    assert game.deaths() == [(1, "vote"), (7, "powers_lost")]
