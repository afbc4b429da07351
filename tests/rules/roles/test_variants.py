"""House rules of seeds 002-003 on the seed-000 roles, each value in the spec's words."""

import pytest

from rules import outcome
from tests.rules.driver import EIGHT_SEATS, Game

DEAL = EIGHT_SEATS


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
    assert game.view(2)["witch"] == {"victim": 5, "life": False, "death": True, "guarded": False}


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


def test_witch_told_after_save_no_once_the_life_potion_is_spent_she_no_longer_learns_the_victim():
    game = Game(DEAL, rules={"witch_told_after_save": "no"})
    game.timeout()
    game.night(victim=5, save=True)
    game.elect(None)
    game.vote_out(None)
    game.night(victim=7)
    assert game.events("witch_victim")[-1]["victim"] is None  # she still wakes (D9)
    assert (7, "wolves") in game.deaths()


def test_lovers_kill_restriction_never_a_wolf_lover_does_not_point_at_his_lover():
    game = Game(DEAL, rules={"lovers_kill_restriction": "never"})
    game.act(4, "cupid.link", [0, 5])
    game.timeout()  # seer
    assert 5 not in game.prompts(0)[0]["choices"]
    assert 5 in game.prompts(6)[0]["choices"]  # the rest of the pack is not bound (O28)


def test_lovers_kill_restriction_never_a_witch_lover_does_not_poison_hers():
    game = Game(DEAL, rules={"lovers_kill_restriction": "never"})
    game.act(4, "cupid.link", [2, 5])
    game.night(victim=7)
    game.elect(None)
    game.vote_out(None)
    game.timeout()
    game.act(0, "wolves.point", [1])
    game.act(6, "wolves.point", [1])
    poison = next(p for p in game.prompts(2) if p["action"] == "witch.poison")
    assert 5 not in poison["choices"]


def test_wolves_may_target_anyone_a_wolf_may_point_at_another_wolf_never_himself():
    game = Game(DEAL, rules={"wolves_may_target": "anyone"})
    game.timeout()
    game.timeout()
    assert 6 in game.prompts(0)[0]["choices"] and 0 not in game.prompts(0)[0]["choices"]


def test_first_night_kill_off_nobody_leaves_on_the_first_night():
    deal = ["werewolf", "seer", "witch", "guard", "villager", "villager", "villager"]
    game = Game(deal, rules={"first_night_kill": "off"})
    game.act(1, "seer.inspect", [0])
    assert game.phase == "day.election" and game.deaths() == []  # no guard, wolves, witch
    game.elect(None)
    game.vote_out(None)
    game.timeout()  # seer
    assert game.phase == "night.guard"


@pytest.mark.parametrize("rule", ["revote_then_lot", "revote_then_nobody"])
def test_vote_tie_revote_one_more_vote_among_the_tied(rule):
    game = Game(DEAL, rules={"vote_tie": rule, "mayor": "none"})
    game.timeout()
    game.night()
    game.tied_vote(5, 7)
    assert game.phase == "day.revote"
    assert game.prompts(1)[0]["choices"] == [5, 7] and game.prompts(5)[0]["choices"] == [7]
    game.act(1, "vote", [5])
    game.act(2, "vote", [7])
    game.timeout()  # tied again
    if rule == "revote_then_lot":
        assert game.deaths()[-1][1] == "vote" and game.deaths()[-1][0] in (5, 7)
    else:
        assert game.deaths() == [] and game.phase == "night.seer"


def test_vote_tie_revote_a_clear_revote_eliminates_its_top():
    game = Game(DEAL, rules={"vote_tie": "revote_then_nobody", "mayor": "none"})
    game.timeout()
    game.night()
    game.tied_vote(5, 7)
    game.act(1, "vote", [5])
    game.timeout()
    assert game.deaths() == [(5, "vote")]


def test_vote_tie_lot_a_tie_is_drawn_by_lot_at_once():
    game = Game(DEAL, rules={"vote_tie": "lot"})
    game.timeout()
    game.night()
    game.elect(1)  # a mayor does not break it: the rule is the lot
    game.tied_vote(5, 7)
    assert game.events("vote_result")[-1]["tie"] == [5, 7]
    assert game.deaths()[0] in ((5, "vote"), (7, "vote"))


def test_mayor_candidacy_candidates_only_those_who_stand_may_be_elected():
    game = Game(DEAL, rules={"mayor_candidacy": "candidates"})
    game.timeout()
    game.night()
    assert game.phase == "day.candidacy"
    game.act(1, "mayor.stand", [])
    game.act(5, "mayor.stand", [])
    game.timeout()
    assert game.phase == "day.election" and game.prompts(2)[0]["choices"] == [1, 5]
    assert [e["seat"] for e in game.events("candidate")] == [1, 5]


def test_mayor_candidacy_nobody_standing_leaves_everyone_a_candidate():
    game = Game(DEAL, rules={"mayor_candidacy": "candidates"})
    game.timeout()
    game.night()
    game.timeout()
    assert game.prompts(2)[0]["choices"] == game.living()


def test_election_tie_runoff_then_lot_a_second_vote_between_the_top_players():
    game = Game(DEAL, rules={"election_tie": "runoff_then_lot"})
    game.timeout()
    game.night()
    game.act(1, "mayor.elect", [5])
    game.act(2, "mayor.elect", [7])
    game.timeout()
    assert game.phase == "day.runoff" and game.prompts(3)[0]["choices"] == [5, 7]
    game.act(3, "mayor.elect", [7])
    game.timeout()
    assert game.state.mayor == 7 and game.phase == "day.discussion"


def test_wolves_win_parity_the_pack_wins_once_it_is_as_many_as_the_others():
    deal = ["werewolf", "seer", "villager", "villager", "werewolf", "villager"]
    game = Game(deal, rules={"wolves_win": "parity"})
    game.night(victim=2)
    game.elect(None)
    assert outcome(game.state) is None  # 2 wolves, 3 others
    game.vote_out(3)
    assert outcome(game.state).reason == "wolves_at_parity"  # 2 wolves, 2 others
    assert outcome(game.state).winners == [0, 4]


@pytest.mark.parametrize("rule", ["each_night", "once"])
def test_hunter_night_shot_from_night_2_the_hunter_may_shoot_one_person_dead(rule):
    game = Game(DEAL, rules={"hunter_night_shot": rule})
    game.timeout()  # cupid
    game.night()
    assert "night.hunter" not in [e["phase"] for e in game.events("phase")]  # not on night 1
    game.elect(None)
    game.vote_out(None)
    game.night(poison=5)
    assert game.phase == "night.hunter" and 3 not in game.prompts(3)[0]["choices"]
    game.act(3, "hunter.night_shot", [7])
    assert game.deaths() == [(5, "poison"), (7, "hunter")]  # after the poison
    game.vote_out(None)
    game.night()
    assert (game.phase == "night.hunter") is (rule == "each_night")
