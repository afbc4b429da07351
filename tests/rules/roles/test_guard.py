"""The Guard (003, 004): each night names one player the wolves cannot kill that night; the
witch's poison still can. Not himself unless guard_self; not the same player two nights running
when guard_repeat is forbidden."""

from tests.rules.driver import Game

# seats: 0 wolf, 1 guard, 2 witch, 3 seer, 4 villager, 5 villager, 6 villager
DEAL = ["werewolf", "guard", "witch", "seer", "villager", "villager", "villager"]


def test_the_guard_wakes_after_the_seer_and_before_the_wolves():
    game = Game(DEAL)
    game.timeout()  # seer
    assert game.phase == "night.guard"
    assert game.prompts(1) == [{"kind": "prompt", "action": "guard.protect", "min": 0, "max": 1,
                                "choices": [0, 2, 3, 4, 5, 6], "deadline": game.state.deadline}]


def test_a_protected_player_is_not_killed_by_the_wolves_that_night():
    game = Game(DEAL)
    game.night(protect=4, victim=4)
    assert game.deaths() == [] and game.living() == list(range(7))


def test_a_protected_victim_the_witch_also_saves_lives_and_nothing_breaks():
    game = Game(DEAL)
    game.night(protect=4, victim=4, save=True)
    assert game.deaths() == [] and game.phase == "day.election"
    assert game.view(2)["witch"]["life"] is False  # she could not know: the potion is spent


def test_the_poison_still_kills_a_protected_player():
    game = Game(DEAL)
    game.night(protect=5, victim=4, poison=5)
    assert game.deaths() == [(4, "wolves"), (5, "poison")]


def test_the_guard_may_protect_himself_only_with_guard_self():
    game = Game(DEAL, rules={"guard_self": "yes"})
    game.timeout()
    assert 1 in game.prompts(1)[0]["choices"]
    game.act(1, "guard.protect", [1])
    game.act(0, "wolves.point", [1])
    game.timeout()  # witch
    assert game.deaths() == []


def test_with_guard_repeat_forbidden_the_same_player_is_not_protected_two_nights_running():
    game = Game(DEAL, rules={"guard_repeat": "forbidden"})
    game.night(protect=4, victim=5)
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # seer
    assert 4 not in game.prompts(1)[0]["choices"]
    game.timeout()  # protects nobody: the next night anyone again
    game.timeout()
    game.timeout()
    game.vote_out(None)
    game.timeout()
    assert 4 in game.prompts(1)[0]["choices"]


def test_by_default_the_guard_may_protect_the_same_player_again():
    game = Game(DEAL)
    game.night(protect=4, victim=5)
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    assert 4 in game.prompts(1)[0]["choices"]
    assert game.view(1)["guard"] == {"last": 4} and game.view(4)["guard"] is None


def test_protecting_a_lover_does_not_stop_his_grief():
    deal = ["werewolf", "guard", "cupid", "villager", "villager", "villager", "villager"]
    game = Game(deal)
    game.act(2, "cupid.link", [3, 4])
    game.act(1, "guard.protect", [4])
    game.act(0, "wolves.point", [3])
    assert game.deaths() == [(3, "wolves"), (4, "grief")]


def test_witch_told_guarded_yes_the_witch_learns_a_guarded_victim_will_not_die_and_keeps_her_potion(
        ):
    game = Game(DEAL, rules={"witch_told_guarded": "yes"})
    game.night(protect=4, victim=4)
    assert game.events("witch_victim")[-1] == {"kind": "witch_victim", "to": [2], "victim": 4,
                                               "guarded": True}
    assert game.deaths() == [] and game.view(2)["witch"]["life"] is True  # no save was offered
