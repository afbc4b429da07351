"""What the lobby shows is the table's truth (issue 22, item 6): the wolves it counts from the
declaration's wolf flags are the wolves dealt, and the rules and durations it lists are those of
the units in play (a role dealt; the mayor unless `mayor = none`)."""

from hypothesis import given, settings as hsettings, strategies as st

from rules import BadSettings, SETTINGS, SPECIAL_ROLES, Settings, declaration, wolves_for
from rules.registry import CARDS, DURATION_OWNERS
from rules.settings import deal, durations_that_apply, rules_that_apply, units_in_play

DECLARED = declaration()
# the client's notion of a wolf card: the pack's card and every role flagged `wolf`
WOLF_CARDS = {DECLARED["pack"], *(r["id"] for r in DECLARED["roles"] if r["wolf"])}
MAYOR_RULES = {s.id for s in SETTINGS.values() if s.owner == "mayor"}
MAYOR_DURATIONS = {name for name, owner in DURATION_OWNERS.items() if owner == "mayor"}


def tables():
    """A random table: any special roles, any wolf count rule, a size that may not fit them."""
    return st.tuples(st.sets(st.sampled_from(SPECIAL_ROLES)),
                     st.sampled_from(SETTINGS["wolf_count"].values),
                     st.sampled_from(SETTINGS["mayor"].values), st.integers(4, 20))


def dealt(roles, wolf_count, mayor, n):
    table = Settings.from_json({"roles": sorted(roles), "rules": {
        "wolf_count": wolf_count, "mayor": mayor, "player_range": "4-20"}})
    return table, deal(n, table)


def test_the_declared_wolves_are_the_rules_own():
    assert WOLF_CARDS == {r for r, card in CARDS.items() if card.wolf}
    assert {"white_werewolf", "big_bad_wolf", "infect_father", "werewolf"} <= WOLF_CARDS
    assert "traitor" not in WOLF_CARDS  # on the wolves' side, but no wolf: he never wakes with them


@hsettings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(tables())
def test_the_wolves_the_lobby_counts_are_the_wolves_dealt(table):
    try:
        _, cards = dealt(*table)
    except BadSettings:
        return  # a table these roles cannot fill is never shown
    assert sum(cards.get(r, 0) for r in WOLF_CARDS) == wolves_for(table[3], table[1])


def test_white_werewolf_big_bad_wolf_and_infect_father_are_three_wolves_not_zero():
    _, cards = dealt({"white_werewolf", "big_bad_wolf", "infect_father"}, 3, "elected", 12)
    assert cards["werewolf"] == 0 and sum(cards.get(r, 0) for r in WOLF_CARDS) == 3


@hsettings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(tables())
def test_a_duration_or_rule_applies_only_while_its_unit_is_in_play(table):
    try:
        settings, cards = dealt(*table)
    except BadSettings:
        return
    units = units_in_play(settings, cards)
    durations = set(durations_that_apply(settings, cards))
    rules = set(rules_that_apply(settings, cards))
    for role in SPECIAL_ROLES:  # a role's durations and rules are there exactly when it is dealt
        assert set(CARDS[role].durations) <= durations if role in cards else not (
            set(CARDS[role].durations) & durations)
        owned = {s.id for s in CARDS[role].settings}
        assert owned <= rules if role in cards else not owned & rules
    assert {"wolves", "discussion", "vote"} <= durations  # the pack and the day: every table's
    if table[2] == "none":
        assert "mayor" not in units and not MAYOR_DURATIONS & durations
        assert MAYOR_RULES & rules == {"mayor"}  # "Mayor: none", and nothing under it
    else:
        assert "mayor" in units and MAYOR_DURATIONS <= durations and MAYOR_RULES <= rules


def test_the_declaration_names_each_duration_s_owner_and_the_mayor_s_switch():
    assert set(DECLARED["duration_owners"]) == set(DECLARED["durations"])
    assert {"candidacy", "election", "tiebreak", "successor"} == MAYOR_DURATIONS
    offs = [(r["id"], r["off"]) for r in DECLARED["rules"] if r["off"] is not None]
    assert offs == [("mayor", "none")]
