"""The table: 6-18 seats; wolves by count; the host may leave out any special role."""

import pytest
from hypothesis import given, settings, strategies as st

from rules import (BadSettings, DEFAULT_DURATIONS, MAX_PLAYERS, MIN_PLAYERS, PRESETS, SETTINGS,
                   SPECIAL_ROLES, Settings, declaration, min_players, roles_in_play, start_game,
                   wolves_for)
from rules.settings import deal, max_players


@pytest.mark.parametrize("n, wolves", [(6, 1), (7, 1), (8, 2), (11, 2), (12, 3), (15, 3),
                                       (16, 4), (18, 4)])
def test_about_one_player_in_four_is_a_wolf(n, wolves):
    assert wolves_for(n) == wolves


def test_the_default_table_deals_every_special_role_once_and_villagers_for_the_rest():
    assert roles_in_play(9, Settings.default()) == {
        "werewolf": 2, "seer": 1, "witch": 1, "hunter": 1, "cupid": 1, "villager": 3}


def test_the_host_may_leave_out_any_special_role():
    settings = Settings.from_json({"roles": ["hunter", "seer"]})
    assert settings.roles == ("seer", "hunter")
    assert roles_in_play(6, settings) == {"werewolf": 1, "seer": 1, "hunter": 1, "villager": 3}
    assert roles_in_play(6, Settings.from_json({"roles": []})) == {"werewolf": 1, "villager": 5}


@pytest.mark.parametrize("n", range(6, 19))
def test_the_deal_fills_every_seat(n):
    assert sum(roles_in_play(n, Settings.default()).values()) == n


def test_seed_000_plays_six_to_eighteen_and_the_engine_s_widest_range_is_004_s():
    assert (MIN_PLAYERS, MAX_PLAYERS) == (4, 20)
    assert min_players(Settings.default()) == 6 and max_players(Settings.default()) == 18


def test_a_lobby_not_yet_full_shows_the_deal_of_the_smallest_table():
    assert roles_in_play(2, Settings.default()) == roles_in_play(6, Settings.default())


def test_durations_default_and_may_be_given_in_part():
    assert Settings.default().durations["discussion"] == 180
    settings = Settings.from_json({"durations": {"discussion": 90, "wolves": 900}})
    assert settings.durations == {**DEFAULT_DURATIONS, "discussion": 90, "wolves": 900}
    assert Settings.from_json(settings.to_json()) == settings


@pytest.mark.parametrize("data", [
    [], {"roles": "seer"}, {"roles": ["mayor"]}, {"roles": ["seer", "seer"]}, {"roles": [1]},
    {"durations": []}, {"durations": {"dusk": 10}}, {"durations": {"vote": 0}},
    {"durations": {"vote": 901}}, {"durations": {"vote": "60"}}, {"durations": {"vote": True}},
    {"durations": {"vote": 1.5}}, {"colour": "red"}, {"rules": []}, {"rules": {"dusk": 1}},
    {"rules": {"guard_self": True}}, {"rules": {"witch_potions_per_night": True}},
    {"preset": "seed_999"},
])
def test_bad_settings_are_refused_as_bad_frames(data):
    with pytest.raises(BadSettings) as refused:
        Settings.from_json(data)
    assert refused.value.code == "bad_frame"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)
SETTINGS_LIKE = st.fixed_dictionaries({}, optional={
    "roles": st.lists(st.sampled_from(SPECIAL_ROLES + ("mayor", "")), max_size=5) | JSON,
    "durations": st.dictionaries(st.sampled_from(sorted(DEFAULT_DURATIONS) + ["dusk"]),
                                 st.integers(-5, 1000) | JSON, max_size=4) | JSON})


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(data=SETTINGS_LIKE | JSON)
def test_any_json_is_either_valid_settings_or_a_bad_frame(data):
    try:
        parsed = Settings.from_json(data)
    except BadSettings:
        return
    assert Settings.from_json(parsed.to_json()) == parsed
    assert all(1 <= s <= 900 for s in parsed.durations.values())


def test_the_deal_refuses_a_table_it_cannot_fill():
    eight = ["seer", "witch", "hunter", "cupid", "guard", "elder", "idiot", "scapegoat"]
    every = Settings.from_json({"roles": eight})  # 8 specials + 2 wolves
    with pytest.raises(BadSettings, match="cannot hold"):
        deal(6, every)
    assert min_players(every) == 10 and roles_in_play(6, every)["villager"] == 0
    with pytest.raises(BadSettings):
        start_game([f"p{i}" for i in range(9)], every, 1, 0)


@pytest.mark.parametrize("rule, counts", [
    ("table_004", {4: 1, 6: 1, 7: 2, 10: 2, 11: 3, 14: 4, 18: 5}), (3, {6: 3, 18: 3})])
def test_wolf_count_table_004_or_a_number_chosen_by_the_host(rule, counts):
    assert {n: wolves_for(n, rule) for n in counts} == counts


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_deals_its_seed_s_table(preset):
    chosen = Settings.default().change({"preset": preset})
    assert chosen.preset == preset and chosen.roles == tuple(
        r for r in SPECIAL_ROLES if r in PRESETS[preset].roles)
    players = PRESETS[preset].players
    if players:  # 003's counts: e.g. "10人" = 9 players, 3 wolves, 2 villagers (spec 3.3)
        assert sum(deal(players, chosen).values()) == players


def test_seed_003_s_ten_with_the_game_master_is_nine_seats():
    assert deal(9, Settings.default().change({"preset": "seed_003_9"})) == {
        "werewolf": 3, "seer": 1, "witch": 1, "hunter": 1, "guard": 1, "villager": 2}


def test_the_declaration_names_every_rule_with_its_values_default_owner_and_source():
    declared = declaration()
    assert [r["id"] for r in declared["roles"]] == list(SPECIAL_ROLES)
    for rule in declared["rules"]:
        assert rule["default"] in rule["values"] and rule["owner"] and rule["source"]
        assert SETTINGS[rule["id"]].default == Settings.default().rules[rule["id"]]
    assert {p["id"] for p in declared["presets"]} == set(PRESETS)
