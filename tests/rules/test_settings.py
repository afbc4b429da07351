"""The table: 6-18 seats; wolves by count; the host may leave out any special role."""

import pytest
from hypothesis import given, settings, strategies as st

from rules import (BadSettings, DEFAULT_DURATIONS, MAX_PLAYERS, MIN_PLAYERS, SPECIAL_ROLES,
                   Settings, roles_in_play, wolves_for)


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


@pytest.mark.parametrize("n", range(MIN_PLAYERS, MAX_PLAYERS + 1))
def test_the_deal_fills_every_seat(n):
    assert sum(roles_in_play(n, Settings.default()).values()) == n


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
    {"durations": {"vote": 1.5}}, {"colour": "red"},
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
