"""The Seer looks at one player's card each night; only she learns it."""

import pytest

from rules import IllegalTarget, NotYourTurn
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def test_the_seer_sees_one_card_and_only_she_learns_it():
    game = Game(DEAL)
    game.timeout()  # cupid
    events = game.act(1, "seer.inspect", [6])
    assert {"kind": "seer_result", "to": [1], "seat": 6, "role": "werewolf"} in events
    assert game.view(1)["seer_results"] == [{"seat": 6, "role": "werewolf", "night": 1}]
    assert game.view(1)["seats"][6]["role"] is None  # a result is not a revealed card
    assert game.view(0)["seer_results"] is None
    assert game.phase == "night.wolves"


def test_the_seer_inspects_one_other_living_player():
    game = Game(DEAL)
    game.timeout()
    with pytest.raises(IllegalTarget):
        game.act(1, "seer.inspect", [1])
    with pytest.raises(IllegalTarget):
        game.act(1, "seer.inspect", [])
    with pytest.raises(IllegalTarget):
        game.act(1, "seer.inspect", [5, 6])


def test_the_seer_results_accumulate_night_after_night():
    game = Game(DEAL)
    game.night(inspect=0, victim=None)
    game.elect(None)
    game.vote_out(None)
    game.night(inspect=3, victim=None)
    assert game.view(1)["seer_results"] == [{"seat": 0, "role": "werewolf", "night": 1},
                                            {"seat": 3, "role": "hunter", "night": 2}]


def test_a_seer_who_lets_time_run_out_sees_nothing():
    game = Game(DEAL)
    game.timeout()
    game.timeout()
    assert game.phase == "night.wolves" and game.events("seer_result") == []


def test_a_dead_seer_no_longer_wakes():
    game = Game(DEAL)
    game.night(inspect=0, victim=1)
    game.elect(None)
    game.vote_out(None)
    assert game.phase == "night.wolves"
    with pytest.raises(NotYourTurn):
        game.act(1, "seer.inspect", [0])


def test_the_seer_sees_the_trickster_wolf_as_a_plain_villager():
    game = Game(["trickster_wolf", "seer", "villager", "villager", "villager", "villager"])
    game.act(1, "seer.inspect", [0])
    assert game.events("seer_result")[-1]["role"] == "villager"
    assert game.prompts(0)[0]["action"] == "wolves.point"  # he hunts with the pack
    assert game.events("wolves") == [{"kind": "wolves", "to": [0], "wolves": [0]}]


def test_the_trickster_wolf_takes_one_of_the_pack_s_seats():
    from rules import Settings, roles_in_play
    settings = Settings.from_json({"roles": ["trickster_wolf", "seer"]})
    assert roles_in_play(8, settings) == {"werewolf": 1, "seer": 1, "trickster_wolf": 1,
                                          "villager": 5}


def test_the_talkative_seer_tells_everybody_the_role_she_saw_not_whose():
    deal = ["werewolf", "seer", "villager", "villager", "villager", "villager"]
    game = Game(deal, rules={"seer_kind": "talkative"})
    game.act(1, "seer.inspect", [0])
    assert game.events("talkative_seer") == [{"kind": "talkative_seer", "to": None,
                                              "role": "werewolf"}]


def test_a_talkative_seer_who_lets_time_run_out_is_announced_as_having_seen_nothing():
    deal = ["werewolf", "seer", "villager", "villager", "villager", "villager"]
    game = Game(deal, rules={"seer_kind": "talkative"})
    game.timeout()
    assert game.events("talkative_seer") == [{"kind": "talkative_seer", "to": None, "role": None}]


def test_seer_result_wolf_or_not_the_seer_learns_only_whether_the_card_is_a_werewolf():
    deal = ["werewolf", "seer", "witch", "villager", "villager", "villager"]
    game = Game(deal, rules={"seer_result": "wolf_or_not"})
    game.act(1, "seer.inspect", [2])
    assert game.events("seer_result")[-1]["role"] == "not_werewolf"
    game.night(victim=3)
    game.elect(None)
    game.vote_out(None)
    game.act(1, "seer.inspect", [0])
    assert game.events("seer_result")[-1]["role"] == "werewolf"


def test_talkative_announce_at_dawn_the_table_hears_it_when_the_night_ends():
    deal = ["werewolf", "seer", "villager", "villager", "villager", "villager"]
    game = Game(deal, rules={"seer_kind": "talkative", "talkative_announce": "at_dawn"})
    game.act(1, "seer.inspect", [0])
    assert game.events("talkative_seer") == []
    game.act(0, "wolves.point", [2])
    assert game.events("talkative_seer") == [{"kind": "talkative_seer", "to": None,
                                              "role": "werewolf"}]
    assert game.log.index(game.events("talkative_seer")[0]) < game.log.index(
        game.events("death")[0])


def test_seer_first_night_random_not_wolf_she_is_shown_one_random_non_werewolf():
    deal = ["werewolf", "seer", "trickster_wolf", "villager", "villager", "villager", "villager",
            "villager"]
    for seed in range(8):
        game = Game(deal, seed=seed, rules={"seer_first_night": "random_not_wolf"})
        assert game.phase == "night.wolves" and game.prompts(1) == []
        (result,) = game.events("seer_result")
        assert result["seat"] in (3, 4, 5, 6, 7) and result["role"] == "villager"


def test_seer_first_night_none_she_first_wakes_on_night_2():
    deal = ["werewolf", "seer", "villager", "villager", "villager", "villager"]
    game = Game(deal, rules={"seer_first_night": "none"})
    assert game.phase == "night.wolves"
    game.timeout()
    game.elect(None)
    game.vote_out(None)
    assert game.phase == "night.seer"
