"""Cupid (first night only) links two players, himself allowed; each lover learns the other's
name, not role; when one lover dies the other dies of grief at once."""

import pytest

from rules import IllegalTarget, outcome
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def test_each_lover_learns_the_other_lover_but_not_the_role():
    game = Game(DEAL)
    events = game.act(4, "cupid.link", [1, 5])
    lovers = [e for e in events if e["kind"] == "lovers"]
    assert lovers == [{"kind": "lovers", "to": [1, 4, 5], "lovers": [1, 5]}]
    assert game.view(1)["lover"] == 5 and game.view(5)["lover"] == 1
    assert game.view(1)["seats"][5]["role"] is None
    assert game.view(4)["linked"] == [1, 5] and game.view(4)["lover"] is None
    assert game.view(7)["lover"] is None and game.view(7)["linked"] is None


def test_cupid_may_link_himself():
    game = Game(DEAL)
    game.act(4, "cupid.link", [4, 7])
    assert game.view(4)["lover"] == 7 and game.view(7)["lover"] == 4


def test_cupid_self_allowed_he_is_on_his_own_menu_forbidden_he_is_not():
    assert 4 in Game(DEAL).prompts(4)[0]["choices"]
    game = Game(DEAL, rules={"cupid_self": "forbidden"})
    assert game.prompts(4)[0]["choices"] == [0, 1, 2, 3, 5, 6, 7]
    with pytest.raises(IllegalTarget):
        game.act(4, "cupid.link", [4, 7])


def test_cupid_links_exactly_two_distinct_players():
    game = Game(DEAL)
    for targets in ([], [3], [3, 3], [1, 2, 3]):
        with pytest.raises(IllegalTarget):
            game.act(4, "cupid.link", targets)
    assert game.phase == "night.cupid"


def test_cupid_wakes_on_the_first_night_only():
    game = Game(DEAL)
    game.night(link=[5, 7], inspect=0, victim=None)
    game.elect(None)
    game.vote_out(None)
    assert game.phase == "night.seer"
    assert [e["phase"] for e in game.events("phase")].count("night.cupid") == 1


def test_cupid_who_lets_time_run_out_links_nobody():
    game = Game(DEAL)
    game.timeout()
    assert game.phase == "night.seer"
    assert game.state.memo.get("cupid") is None and game.events("lovers") == []


def test_a_lover_eaten_at_night_takes_the_other_with_him_by_grief_at_dawn():
    game = Game(DEAL)
    game.night(link=[5, 7], inspect=0, victim=5)
    assert game.deaths() == [(5, "wolves"), (7, "grief")]


def test_a_lover_voted_out_takes_the_other_with_him_at_once():
    game = Game(DEAL)
    game.night(link=[1, 7], inspect=0, victim=None)
    game.elect(None)
    game.vote_out(7)
    assert game.deaths() == [(7, "vote"), (1, "grief")]


def test_two_wolf_lovers_stay_wolves_and_win_with_the_pack():
    game = Game(["werewolf", "cupid", "villager", "villager", "villager", "villager", "werewolf",
                 "villager"])
    game.night(link=[0, 6], victim=2)
    game.elect(None)
    game.vote_out(3)
    game.night(victim=4)
    game.vote_out(5)
    game.night(victim=7)
    game.vote_out(1)
    assert game.state.outcome == {"winners": [0, 6], "reason": "only_wolves_alive"}


def test_two_villager_lovers_die_together_but_stay_with_the_village():
    game = Game(DEAL)
    game.night(link=[5, 7], inspect=0, victim=None)
    game.elect(None)
    game.vote_out(0)
    game.night(victim=None)
    game.vote_out(6)
    assert game.state.outcome["reason"] == "no_wolves_alive"
    assert {5, 7} <= set(game.state.outcome["winners"])


def test_lovers_team_every_pair_two_villager_lovers_leave_the_village_and_play_as_a_team():
    game = Game(DEAL, rules={"lovers_team": "every_pair"})
    game.night(link=[5, 7], inspect=0, victim=None)
    game.elect(None)
    game.vote_out(0)
    game.night(victim=None)
    game.vote_out(6)
    assert game.state.outcome["reason"] == "no_wolves_alive"
    assert not {5, 7} & set(game.state.outcome["winners"])


def test_lovers_team_every_pair_two_villager_lovers_win_as_the_last_two_alive():
    game = Game(["werewolf", "cupid", "villager", "villager", "villager", "villager"],
                rules={"lovers_team": "every_pair"})
    game.night(link=[4, 5], victim=1)
    game.elect(None)
    game.vote_out(2)
    game.night(victim=3)
    game.vote_out(0)
    assert outcome(game.state).reason == "lovers_last_alive"
    assert outcome(game.state).winners == [4, 5]


def test_mixed_lovers_win_when_they_are_the_last_two_alive():
    game = Game(["werewolf", "cupid", "villager", "villager", "villager", "villager"])
    game.night(link=[0, 5], victim=1)
    game.elect(None)
    game.vote_out(2)
    game.night(victim=3)
    game.vote_out(4)
    assert game.state.outcome == {"winners": [0, 5], "reason": "lovers_last_alive"}


def test_a_mixed_lover_does_not_win_with_his_card_s_side():
    game = Game(["werewolf", "cupid", "villager", "villager", "villager", "villager"])
    game.night(link=[0, 5], victim=None)
    game.elect(None)
    game.vote_out(0)
    assert game.deaths() == [(0, "vote"), (5, "grief")]
    assert game.state.outcome == {"winners": [1, 2, 3, 4], "reason": "no_wolves_alive"}
