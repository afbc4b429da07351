"""Seed 004's table and cards (roles-spec 1.8-1.13, 2.14, 3.4, 5.1): scenarios, one per rule and
setting value, on fixed deals with a fake clock."""

import random

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from rules import BadFrame, Settings, declaration, start_game
from rules.presets import recommended_setup
from rules.roles.house import EXILE
from rules.settings import deal, max_players, min_players
import tests.rules.random_games as random_games
from tests.rules.driver import NAMES, T0, Game

RULES_004 = dict(Settings.from_json({"preset": "seed_004"}).rules)
RULES_004.pop("wolf_count")  # the driver gives the deal's own count


def game(deal_, **rules):
    return Game(deal_, rules={**RULES_004, **rules})


def through_day(g, target=None):
    """A day without a timer problem: the discussion runs out, then everyone votes `target`."""
    g.vote_out(target)


# the table


@pytest.mark.parametrize("n, wolves, roles", [
    (4, 1, ("seer",)), (5, 1, ("seer", "guard")), (6, 1, ("seer", "guard")),
    (7, 2, ("seer", "guard", "medium")), (8, 2, ("seer", "guard", "medium", "traitor")),
    (11, 3, ("seer", "guard", "medium", "traitor")),
    (14, 4, ("seer", "guard", "medium", "traitor")),
    (18, 5, ("seer", "guard", "medium", "traitor")),
    (20, 5, ("seer", "guard", "medium", "traitor"))])
def test_the_004_preset_deals_recommended_setup_for_each_table_size(n, wolves, roles):
    table = Settings.from_json({"preset": "seed_004"})
    assert recommended_setup(n) == roles
    dealt = deal(n, table)
    assert dealt["werewolf"] == wolves and all(dealt[r] == 1 for r in roles)
    assert sum(dealt.values()) == n


def test_the_faq_s_tables_four_five_and_seven():
    table = Settings.from_json({"preset": "seed_004"})
    assert deal(4, table) == {"werewolf": 1, "seer": 1, "villager": 2}
    assert deal(5, table) == {"werewolf": 1, "seer": 1, "guard": 1, "villager": 2}
    assert deal(7, table) == {"werewolf": 2, "seer": 1, "guard": 1, "medium": 1, "villager": 2}


def test_the_declaration_gives_the_client_the_recommended_table_from_the_dealing_code():
    preset = next(p for p in declaration()["presets"] if p["id"] == "seed_004")
    assert sorted(preset["by_size"], key=int) == [str(n) for n in range(4, 21)]
    assert preset["by_size"]["9"] == deal(9, Settings.from_json({"preset": "seed_004"}))


def test_004_seats_four_to_twenty_and_refuses_three():
    table = Settings.from_json({"preset": "seed_004"})
    assert (min_players(table), max_players(table)) == (4, 20)
    start_game(NAMES[:4], table, 1, T0)
    start_game([f"p{i}" for i in range(20)], table, 1, T0)
    with pytest.raises(BadFrame):
        start_game(NAMES[:3], table, 1, T0)


def test_changing_the_roles_makes_the_table_custom_with_fixed_roles():
    table = Settings.from_json({"preset": "seed_004"}).change({"roles": ["seer", "fox"]})
    assert table.preset is None and deal(9, table)["fox"] == 1 and "guard" not in deal(9, table)


def test_no_mayor_and_nobody_dies_on_the_first_night():
    g = game(["werewolf", "seer", "guard", "villager", "villager"])
    assert g.phase == "night.seer"  # no Guard, no wolves on night 1
    g.act(1, "seer.inspect", [3])
    g.timeout()  # hidden cards: her step lasts its full time
    assert g.phase == "day.discussion" and g.deaths() == [] and g.state.mayor is None


def test_the_seer_reads_only_werewolf_or_not_and_the_traitor_shows_not_a_werewolf():
    g = game(["werewolf", "seer", "traitor", "villager", "villager", "villager", "villager",
              "villager"])
    g.act(1, "seer.inspect", [2])
    assert g.events("seer_result")[-1]["role"] == "not_werewolf"


@pytest.mark.parametrize("wolf", ["werewolf", "big_bad_wolf", "white_werewolf", "infect_father"])
def test_wolf_or_not_reads_every_wolf_card_as_werewolf_for_the_seer_and_the_medium(wolf):
    g = game(["werewolf", wolf, "seer", "guard", "medium", "villager", "villager", "villager"])
    g.act(2, "seer.inspect", [1])
    assert g.events("seer_result")[-1]["role"] == "werewolf"
    g.timeout()
    through_day(g, 1)
    while g.phase != "night.medium":
        g.timeout()
    assert g.events("medium_result")[-1] == {"kind": "medium_result", "to": [4], "seat": 1,
                                             "role": "werewolf"}


@pytest.mark.parametrize("value", ["normal", "random_not_wolf", "none"])
def test_seer_first_night_choose_random_not_wolf_or_none(value):
    g = game(["werewolf", "seer", "villager", "villager"], seer_first_night=value)
    if value == "normal":
        assert g.prompts(1)[0]["action"] == "seer.inspect"
    elif value == "random_not_wolf":
        # hidden cards: her step still runs its full time, then she has her one reading
        assert g.prompts(1) == [] and g.events("seer_result")[-1]["role"] == "not_werewolf"
        assert g.events("seer_result")[-1]["seat"] in (2, 3)
    else:  # a public rule: her step is not on night 1's schedule at all
        assert g.phase == "day.discussion" and g.events("seer_result") == []


def test_wolves_win_at_parity_with_the_seed_s_four_player_two_wolf_example():
    # 004: "if four players remain, two of them werewolves, no order of the day's votes can
    # bring the pack down: the game is decided at that moment" (2 >= 2)
    g = game(["werewolf", "werewolf", "seer", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, 5)  # 2 wolves, 3 others
    assert g.phase.startswith("night")
    g.timeout()  # seer
    g.act(0, "wolves.point", [4])
    g.act(1, "wolves.point", [4])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    # 2 wolves, 2 others
    assert g.state.outcome == {"winners": [0, 1], "reason": "wolves_at_parity"}


def test_parity_comes_after_a_night_that_leaves_one_wolf_and_one_human():
    g = game(["werewolf", "seer", "villager", "villager"])
    g.timeout()  # seer
    through_day(g, 2)  # 1 wolf, 2 others: on
    assert g.phase.startswith("night")
    g.timeout()
    g.act(0, "wolves.point", [3])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert g.state.outcome == {"winners": [0], "reason": "wolves_at_parity"}


def test_the_traitor_counts_as_human_for_parity_and_wins_with_the_pack():
    g = game(["werewolf", "traitor", "villager", "villager", "seer"])
    g.timeout()
    through_day(g, 2)  # 1 wolf, traitor, villager, seer alive: 1 < 3
    assert g.phase.startswith("night")
    g.timeout()  # seer
    g.act(0, "wolves.point", [3])
    g.timeout() if g.phase != "day.discussion" else None
    through_day(g, 4)  # wolf, traitor alive: the pack's team alone (tried before parity)
    assert g.state.outcome == {"winners": [0, 1], "reason": "only_wolves_alive"}


@pytest.mark.parametrize("counted, over", [("no", True), ("yes", False)])
def test_fox_counted_no_leaves_him_out_of_the_parity_count(counted, over):
    # wolf, fox, villager, seer, villager: the vote takes a villager
    g = game(["werewolf", "fox", "villager", "seer", "villager", "villager"], fox_counted=counted)
    g.timeout()
    through_day(g, 2)
    g.timeout()
    g.act(0, "wolves.point", [4])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    through_day(g, 5)  # left: wolf, fox, seer
    assert (g.phase == "over") is over
    if over:  # 1 wolf >= 1 counted human: the pack's condition, and the Fox is alive
        assert g.state.outcome == {"winners": [1], "reason": "fox_survives"}


def test_the_fox_wins_alone_when_the_village_wins_with_him_alive():
    g = game(["werewolf", "fox", "seer", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, 0)
    assert g.state.outcome == {"winners": [1], "reason": "fox_survives"}


def test_a_dead_fox_leaves_the_win_to_the_side():
    g = game(["werewolf", "fox", "seer", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, 1)
    g.timeout()
    g.act(0, "wolves.point", [3])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    through_day(g, 0)
    assert g.state.outcome["reason"] == "no_wolves_alive"


def test_the_fox_is_never_the_missing_role_nor_a_wolf():
    for seed in range(40):
        g = Game(["werewolf", "fox", "seer", "villager", "villager", "villager"], seed=seed,
                 rules={**RULES_004, "missing_role": "on"})
        assert g.state.roles.count("fox") == 1 and g.state.roles.count("werewolf") == 1


def test_missing_role_withdraws_one_enabled_role_and_the_public_deal_still_lists_it():
    seen = set()
    for seed in range(30):
        g = Game(["werewolf", "seer", "guard", "medium", "villager", "villager", "villager"],
                 seed=seed, rules={**RULES_004, "missing_role": "on"})
        gone = {"seer", "guard", "medium"} - set(g.state.roles)
        assert len(gone) == 1 and g.state.roles.count("villager") == 4
        assert g.events("game_started")[0]["roles_in_play"]["villager"] == 3
        seen |= gone
    assert seen == {"seer", "guard", "medium"}


def test_a_missing_role_s_step_runs_its_full_time_with_nobody_awake():
    for seed in range(30):
        g = Game(["werewolf", "seer", "guard", "villager", "villager", "villager"], seed=seed,
                 rules={**RULES_004, "missing_role": "on", "first_night_kill": "on"})
        if "seer" not in g.state.roles:
            break
    assert g.phase == "night.seer" and g.state.prompts == []
    start = g.state.deadline
    g.timeout()
    assert g.phase == "night.guard" and start == g.now


def test_with_hidden_cards_a_dead_holder_s_step_still_runs_its_full_time():
    g = game(["werewolf", "seer", "guard", "villager", "villager", "villager"])
    g.timeout()  # night 1: seer
    through_day(g, 1)  # the Seer is expelled, her card hidden
    assert g.events("death")[-1] == {"kind": "death", "to": None, "seat": 1, "role": None,
                                     "cause": "vote"}
    assert g.phase == "night.seer" and g.state.prompts == []  # nobody asked, time runs
    g.now += 1
    g.state, events = __import__("rules").advance(g.state, g.now)
    assert events == [] and g.phase == "night.seer"
    g.timeout()
    assert g.phase == "night.guard"


def test_with_hidden_cards_an_answered_step_still_lasts_its_full_time():
    g = game(["werewolf", "seer", "guard", "villager", "villager", "villager"])
    g.act(1, "seer.inspect", [0])
    assert g.phase == "night.seer"  # answered: the step waits for its deadline
    g.timeout()
    assert g.phase == "day.discussion"


def test_with_cards_shown_a_dead_holder_s_step_is_skipped():
    g = game(["werewolf", "seer", "guard", "villager", "villager", "villager"],
             reveal_night_deaths="yes", reveal_exile="yes")
    g.timeout()
    through_day(g, 1)
    assert g.events("death")[-1]["role"] == "seer"
    assert g.phase == "night.guard"


def test_hidden_cards_show_to_nobody_but_their_holder_until_the_end():
    g = game(["werewolf", "seer", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, 2)
    assert g.view(3)["seats"][2]["role"] is None and g.view(2)["seats"][2]["role"] == "villager"
    assert g.view(0)["seats"][2]["role"] is None
    g.timeout()
    g.act(0, "wolves.point", [3])
    g.timeout() if g.phase == "night.wolves" else None
    through_day(g, 0)
    assert g.phase == "over" and g.view(4)["seats"][2]["role"] == "villager"
    assert g.events("game_over")[0]["roles"]["2"] == "villager"


def test_reveal_exile_yes_shows_the_exiled_card_and_night_deaths_stay_hidden():
    g = game(["werewolf", "seer", "villager", "villager", "villager", "villager"],
             reveal_exile="yes")
    g.timeout()
    through_day(g, 2)
    assert g.events("death")[-1]["role"] == "villager"
    g.timeout()
    g.act(0, "wolves.point", [3])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert g.events("death")[-1] == {"kind": "death", "to": None, "seat": 3, "role": None,
                                     "cause": "night"}


@pytest.mark.parametrize("first_night_kill", ["off", "on"])
def test_a_hidden_card_s_death_tells_the_table_only_when_it_happened(first_night_kill):
    # the repro: psycho's backlash named the Seer's or Guard's death ("psycho")
    g = game(["werewolf", "psycho", "seer", "villager", "villager", "villager"],
             first_night_kill=first_night_kill, psycho_kills_seer="yes")
    g.act(2, "seer.inspect", [1 if first_night_kill == "on" else 3])
    g.timeout()  # hidden cards: her step lasts its full time
    if first_night_kill == "on":
        g.act(0, "wolves.point", [3])
        g.timeout()  # the pack's step lasts its full time
        assert g.deaths() == [(3, "wolves"), (2, "psycho")]
        assert g.public_deaths() == [(3, None, "night"), (2, None, "night")]
        return
    through_day(g, None)
    g.act(2, "seer.inspect", [1])
    g.timeout()
    g.act(0, "wolves.point", [3])
    g.timeout()
    assert g.deaths() == [(3, "wolves"), (2, "psycho")]
    assert g.public_deaths() == [(3, None, "night"), (2, None, "night")]


def test_a_hidden_card_s_death_by_day_says_vote_or_day_never_the_cause():
    g = game(["werewolf", "lover", "lover", "villager", "villager", "villager", "villager"])
    assert g.phase == "day.discussion"  # night 1 has no step to run
    through_day(g, 1)  # a dealt Lover exiled: the other follows of grief
    assert g.deaths() == [(1, "vote"), (2, "grief")]
    assert g.public_deaths() == [(1, None, "vote"), (2, None, "day")]


def test_the_dawn_names_only_the_dead_never_the_protected():
    g = game(["werewolf", "seer", "guard", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, None)
    g.timeout()  # seer
    g.act(2, "guard.protect", [3])
    g.timeout()  # hidden cards: the Guard's step lasts its full time
    g.act(0, "wolves.point", [3])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    public = [e for e in g.log if e["to"] is None and e["kind"] not in ("phase",)]
    assert g.deaths() == [] and not any(e.get("seat") == 3 for e in public)


def test_discussion_timer_off_has_no_deadline_and_ends_when_a_majority_asks():
    g = game(["werewolf", "seer", "villager", "villager", "villager"], discussion_timer="off")
    g.timeout()
    assert g.phase == "day.discussion" and g.state.deadline is None
    for seat in (1, 2, 3):
        g.act(seat, "vote.request", [])
    assert g.phase == "day.vote"


@pytest.mark.parametrize("rule, out", [("revote_then_lot", "lot"), ("lot", "lot"),
                                       ("revote_then_nobody", None)])
def test_vote_tie_values(rule, out):
    g = game(["werewolf", "seer", "villager", "villager", "villager", "villager"], vote_tie=rule)
    g.timeout()
    g.tied_vote(2, 3)
    if rule == "lot":
        assert g.deaths()[-1][0] in (2, 3)
        return
    assert g.phase == "day.revote"
    g.act(4, "vote", [2])
    g.act(5, "vote", [3])
    g.timeout()
    if out is None:
        assert g.deaths() == []
    else:
        assert g.deaths()[-1][0] in (2, 3)


# the cards


def test_the_medium_reads_the_expelled_the_next_night_and_only_she_learns_it():
    g = game(["werewolf", "werewolf", "seer", "guard", "medium", "villager", "villager"])
    g.timeout()
    through_day(g, 0)
    g.timeout()  # seer
    assert g.phase == "night.medium"
    result = g.events("medium_result")[-1]
    assert result == {"kind": "medium_result", "to": [4], "seat": 0, "role": "werewolf"}
    assert g.view(4)["medium_results"] == [{"seat": 0, "role": "werewolf", "night": 2}]
    assert g.view(5)["medium_results"] is None


def test_the_medium_s_step_does_not_run_after_a_day_without_expulsion():
    g = game(["werewolf", "werewolf", "seer", "guard", "medium", "villager", "villager"])
    g.timeout()
    through_day(g, None)
    g.timeout()  # seer
    assert g.phase == "night.guard"


def test_the_medium_reads_the_traitor_as_not_a_werewolf():
    g = game(["werewolf", "werewolf", "seer", "guard", "medium", "traitor", "villager",
              "villager"])
    g.timeout()
    through_day(g, 5)
    g.timeout()
    assert g.events("medium_result")[-1]["role"] == "not_werewolf"


@pytest.mark.parametrize("knows", ["no", "yes"])
def test_traitor_knows_pack(knows):
    g = game(["werewolf", "werewolf", "traitor", "seer", "villager", "villager", "villager",
              "villager"], traitor_knows_pack=knows)
    told = g.events("traitor_pack")
    assert (told == [{"kind": "traitor_pack", "to": [2], "wolves": [0, 1]}]) == (knows == "yes")
    assert g.view(2)["pack"] == ([0, 1] if knows == "yes" else None)
    assert g.view(0)["wolves"] == [0, 1]  # the pack never learns the Traitor


def test_the_dealt_lovers_know_each_other_and_follow_each_other_in_death():
    g = game(["werewolf", "lover", "lover", "seer", "villager", "villager"])
    assert g.events("lover_pair") == [{"kind": "lover_pair", "to": [1, 2], "lovers": [1, 2]}]
    assert g.view(1)["lover_pair"] == [1, 2] and g.view(3)["lover_pair"] is None
    g.timeout()
    through_day(g, 1)
    assert g.deaths() == [(1, "vote"), (2, "grief")]


@pytest.mark.parametrize("rule", ["pair", "village"])
def test_lover_win_pair_or_village(rule):
    g = game(["werewolf", "lover", "lover", "seer", "villager", "villager"], lover_win=rule)
    g.timeout()
    through_day(g, 0)
    if rule == "pair":
        assert g.state.outcome == {"winners": [1, 2], "reason": "lovers_pair_alive"}
    else:
        assert g.state.outcome == {"winners": [1, 2, 3, 4, 5], "reason": "no_wolves_alive"}


@pytest.mark.parametrize("priority, winners", [("fox", [3]), ("lover", [1, 2])])
def test_fox_lover_priority(priority, winners):
    g = game(["werewolf", "lover", "lover", "fox", "seer", "villager"],
             fox_lover_priority=priority)
    g.timeout()
    through_day(g, 0)
    assert g.state.outcome["winners"] == winners


def nekomata_night(rule):
    g = game(["werewolf", "werewolf", "nekomata", "seer", "villager", "villager", "villager",
              "villager", "villager"], nekomata_attacked=rule)
    g.timeout()
    through_day(g, None)
    g.timeout()  # seer
    g.act(0, "wolves.point", [2])
    g.act(1, "wolves.point", [4])
    g.now = g.state.deadline
    return g


@pytest.mark.parametrize("rule", ["attacker", "random_wolf", "nekomata_only"])
def test_nekomata_attacked(rule):
    # the pack splits 1-1: the lot decides; if the Nekomata is the victim, its effect follows
    for seed in range(20):
        g = nekomata_night(rule)
        g.state.seed = seed
        g.timeout()
        if (2, "wolves") in g.deaths():
            break
    deaths = g.deaths()
    assert deaths[0] == (2, "wolves")
    if rule == "attacker":
        assert deaths[1:] == [(0, "nekomata")]  # the wolf who pointed at him
    elif rule == "random_wolf":
        assert len(deaths) == 2 and deaths[1][1] == "nekomata" and deaths[1][0] in (0, 1)
    else:
        assert deaths == [(2, "wolves")]


def test_a_protected_nekomata_takes_nobody():
    g = game(["werewolf", "nekomata", "seer", "guard", "villager", "villager"])
    g.timeout()
    through_day(g, None)
    g.timeout()
    g.act(3, "guard.protect", [1])
    g.timeout()
    g.act(0, "wolves.point", [1])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert g.deaths() == []


def psycho_game(**rules):
    return game(["werewolf", "werewolf", "psycho", "seer", "guard", "villager", "villager",
                 "villager", "villager"], **rules)


def test_the_wolf_who_attacks_the_psycho_dies_and_he_lives():
    g = psycho_game()
    g.timeout()
    through_day(g, None)
    g.timeout()  # seer
    g.timeout()  # guard
    g.act(0, "wolves.point", [2])
    g.act(1, "wolves.point", [2])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert g.deaths()[0][1] == "psycho" and g.deaths()[0][0] in (0, 1)
    assert g.state.alive[2]


@pytest.mark.parametrize("value", ["yes", "no"])
def test_psycho_kills_seer(value):
    g = psycho_game(psycho_kills_seer=value)
    g.timeout()
    through_day(g, None)
    g.act(3, "seer.inspect", [2])
    g.timeout()  # the hidden-card step lasts its time
    g.timeout()  # guard
    g.act(0, "wolves.point", [5])
    g.act(1, "wolves.point", [5])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert ((3, "psycho") in g.deaths()) == (value == "yes")
    assert g.events("seer_result")[-1]["role"] == "not_werewolf"  # she still has her result


@pytest.mark.parametrize("value", ["yes", "no"])
def test_psycho_kills_guard(value):
    g = psycho_game(psycho_kills_guard=value)
    g.timeout()
    through_day(g, None)
    g.timeout()
    g.act(4, "guard.protect", [2])
    g.timeout()
    g.act(0, "wolves.point", [5])
    g.act(1, "wolves.point", [5])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert ((4, "psycho") in g.deaths()) == (value == "yes")


def test_no_psycho_backlash_on_the_first_night_without_kills():
    g = psycho_game()
    g.act(3, "seer.inspect", [2])
    g.timeout()
    assert g.deaths() == []


def test_the_baker_s_bread_comes_each_morning_while_he_lives():
    g = game(["werewolf", "baker", "seer", "villager", "villager", "villager"])
    g.timeout()
    assert len(g.events("bread")) == 1
    through_day(g, None)
    g.timeout()
    g.act(0, "wolves.point", [1])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert len(g.events("bread")) == 1  # he died this night: no bread this morning


def test_the_baker_is_never_the_missing_role():
    for seed in range(30):
        g = Game(["werewolf", "baker", "seer", "villager", "villager", "villager"], seed=seed,
                 rules={**RULES_004, "missing_role": "on"})
        assert "baker" in g.state.roles


@pytest.mark.parametrize("trigger, shoots", [("any", True), ("attack_or_exile", True),
                                             ("exile_only", False)])
def test_hunter_trigger_when_the_wolves_kill_him(trigger, shoots):
    g = game(["werewolf", "hunter", "seer", "villager", "villager", "villager", "villager"],
             hunter_trigger=trigger)
    g.timeout()
    through_day(g, None)
    g.timeout()  # seer
    g.act(0, "wolves.point", [1])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert (g.phase == "hunter") is shoots


@pytest.mark.parametrize("trigger", ["any", "attack_or_exile", "exile_only"])
def test_hunter_trigger_every_value_shoots_when_exiled(trigger):
    g = game(["werewolf", "hunter", "seer", "villager", "villager", "villager", "villager"],
             hunter_trigger=trigger)
    g.timeout()
    through_day(g, 1)
    assert g.phase == "hunter"


@pytest.mark.parametrize("value, allowed", [("no", False), ("yes", True)])
def test_guard_self_in_004(value, allowed):
    g = game(["werewolf", "seer", "guard", "villager", "villager", "villager"], guard_self=value)
    g.timeout()
    through_day(g, None)
    g.timeout()
    assert (2 in g.prompts(2)[0]["choices"]) is allowed


# properties: random 4-20 tables under random seed-004 settings

SEED_004_RULES = {k: st.sampled_from(v) for k, v in {
    "seer_first_night": ("normal", "random_not_wolf", "none"),
    "vote_tie": ("revote_then_lot", "lot", "revote_then_nobody"),
    "discussion_timer": ("on", "off"), "missing_role": ("off", "on"),
    "reveal_night_deaths": ("yes", "no"), "reveal_exile": ("yes", "no"),
    "traitor_knows_pack": ("no", "yes"), "fox_counted": ("no", "yes"),
    "fox_lover_priority": ("fox", "lover"), "lover_win": ("pair", "village"),
    "nekomata_attacked": ("attacker", "random_wolf", "nekomata_only"),
    "psycho_kills_seer": ("yes", "no"), "psycho_kills_guard": ("yes", "no"),
    "hunter_trigger": ("any", "attack_or_exile", "exile_only"),
    "guard_self": ("no", "yes"), "guard_repeat": ("allowed", "forbidden")}.items()}
EXTRA_004 = ("fox", "psycho", "baker", "lover", "nekomata", "hunter")


@hsettings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(n=st.integers(4, 20), extra=st.sets(st.sampled_from(EXTRA_004)),
       rules=st.fixed_dictionaries(SEED_004_RULES), seed=st.integers(0, 2**32 - 1),
       moves=st.integers(0, 2**32 - 1))
def test_random_004_tables_end_with_a_winner_the_parity_arithmetic_allows_and_leak_nothing(
        n, extra, rules, seed, moves):
    table = Settings.from_json({"preset": "seed_004", "rules": rules})
    if extra:
        roles = [*recommended_setup(n), *sorted(extra)]
        try:
            table = table.change({"roles": roles})
        except Exception:  # more cards than seats: the recommended table only
            pass
    try:
        deal(n, table)
    except Exception:
        table = Settings.from_json({"preset": "seed_004", "rules": rules})
    start, commands, log, state = random_games.play(n, table, seed, random.Random(moves))
    random_games.check_outcome(state, commands, log)
    # hidden cards: no death event before the end names a card its rule hides, nor a cause
    # from which a card follows: only when it happened (the night, the vote, the day)
    phase = "start"
    hidden_causes = state.memo.get("hidden_causes", {})
    for event in log:
        if event["kind"] == "phase":
            phase = event["phase"]
        if event["kind"] == "death":
            true_cause = hidden_causes.get(str(event["seat"]), event["cause"])
            rule = "reveal_exile" if true_cause in EXILE else "reveal_night_deaths"
            assert (event["role"] is None) == (rules[rule] == "no")
            if event["role"] is None:
                told = "night" if phase.startswith("night.") or phase == "start" else \
                    "vote" if true_cause in EXILE else "day"
                assert event["cause"] == told
        if event["kind"] == "game_over":
            assert event["causes"] == hidden_causes


def test_the_host_form_resending_the_same_roles_and_rules_keeps_the_preset():
    table = Settings.from_json({"preset": "seed_004"})
    again = table.change({"roles": list(table.roles), "rules": dict(table.rules),
                          "durations": {"seer": 5}})
    assert again.preset == "seed_004" and again.durations["seer"] == 5
    assert table.change({"rules": {"fox_counted": "yes"}}).preset is None


def test_with_hidden_cards_a_dead_white_werewolf_s_step_still_runs_on_his_nights():
    # issue 9's wolves under seed 004's hidden cards: his every-second-night step stands in
    g = game(["werewolf", "white_werewolf", "villager", "villager", "villager", "villager",
              "villager"])
    while g.phase.startswith("night."):
        g.timeout()
    through_day(g, 1)  # the White Werewolf is expelled, his card hidden
    assert g.events("death")[-1]["role"] is None
    g.act(0, "wolves.point", [3])
    g.timeout()  # hidden cards: the pack's step lasts its full time
    assert g.phase == "night.white_werewolf" and g.state.prompts == []  # nobody asked
    g.timeout()
    assert g.phase.startswith("day.")


def test_a_white_werewolf_counts_among_the_others_for_the_pack_s_parity():
    """D42: he wins alone, so the pack cannot reach parity by counting him."""
    g = game(["werewolf", "white_werewolf", "seer", "villager", "villager", "villager"])
    g.timeout()
    through_day(g, 5)  # werewolf, White Werewolf, seer, two villagers
    while g.phase != "night.wolves":
        g.timeout()
    g.act(0, "wolves.point", [4])
    g.act(1, "wolves.point", [4])
    while g.phase.startswith("night"):
        g.timeout()  # his even night: he passes
    assert not g.state.alive[4]
    # 2 wolf cards against 2 others, but the pack is one wolf against three
    assert g.state.outcome is None
