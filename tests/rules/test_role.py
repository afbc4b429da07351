"""A role declares what its card shows (`rules.role.Fact`), as it declares its events: the client
draws the card's facts from the declaration alone (issue 32, part 6)."""
import pytest

from rules import EVENTS, declaration, public_view
from rules.engine import PUBLIC_FIELDS
from rules.registry import CARDS, FACTS
from rules.role import Fact
from rules.roles import UNITS
from tests.rules.driver import Game


def deal_with(role: str) -> list:
    """Six seats holding `role` (all its cards), a wolf and villagers."""
    cards = [role] * CARDS[role].cards + ["werewolf"] * (not CARDS[role].wolf)
    return cards + ["villager"] * (6 - len(cards))


def test_the_declaration_gives_every_role_s_facts_in_the_roles_order():
    declared = declaration()["facts"]
    assert declared == [{"role": unit.id, **fact.to_json()}
                        for unit in UNITS for fact in unit.facts]
    assert {"role": "sisters", "field": "sisters", "shape": "others", "told_by": "sisters",
            "told_in": "sisters"} in declared
    assert {f["field"] for f in declared} >= {"wolves", "seer_results", "linked", "lover",
                                              "medium_results", "pack", "lover_pair", "sisters"}


@pytest.mark.parametrize("field", sorted(FACTS))
def test_a_fact_is_its_role_s_view_field_and_only_its_seats_are_told_it(field):
    role, fact = FACTS[field]
    g = Game(deal_with(role), rules={"traitor_knows_pack": "yes"})
    assert field in g.view(g.seat(role))  # the view of the card's holder carries it
    # never a spectator's: the public view keeps no card's fact
    assert field not in PUBLIC_FIELDS and public_view(g.state)[field] is None
    assert fact.told_by is None or EVENTS[fact.told_by].public is False


def test_a_sister_s_view_holds_the_sisters_her_card_shows():
    g = Game(["werewolf", "sisters", "sisters", "seer", "villager", "villager"])
    told = g.events("sisters")[0]
    assert g.view(1)["sisters"] == g.view(2)["sisters"] == told["sisters"] == [1, 2]
    assert g.view(3)["sisters"] is None


def test_a_fact_must_have_a_known_shape_and_say_where_its_event_carries_it():
    with pytest.raises(AssertionError):
        Fact("sisters", "names")
    with pytest.raises(AssertionError):
        Fact("sisters", "others", told_by="sisters")  # which of the event's fields holds it?
    with pytest.raises(AssertionError):
        Fact("seer_results", "results", told_by="seer_result", told_in="seat")
    Fact("seer_results", "results", told_by="seer_result")
