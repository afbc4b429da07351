"""Every event the engine emits is declared once, by the module that owns its kind, and the
engine refuses one its declaration does not allow (rules/events.py)."""
import re

import pytest

import rules
from rules.events import EVERYONE, BY_CHANNEL, EventKind, UndeclaredEvent, check
from rules.roles import UNITS
from rules.table import Table
from tests.rules.driver import Game

SEEN = EventKind("seen", ("seat",), "the Seer", "a private test kind", optional=("note",))
SHOUT = EventKind("shout", ("text",), EVERYONE, "a public test kind")
DECLARED = {"seen": SEEN, "shout": SHOUT}


@pytest.mark.parametrize("event, why", [
    ({"kind": "whisper", "to": [1]}, "no module declares"),
    ({"kind": "seen", "to": [1]}, "missing ['seat']"),
    ({"kind": "seen", "to": [1], "seat": 2, "role": "wolf"}, "undeclared ['role']"),
    ({"kind": "seen", "to": None, "seat": 2}, "heard by the Seer"),
    ({"kind": "shout", "to": [0], "text": "hi"}, "heard by everyone"),
])
def test_an_event_its_declaration_does_not_allow_is_refused(event, why):
    with pytest.raises(UndeclaredEvent, match=re.escape(why)):
        check(DECLARED, [event])


def test_declared_events_pass_with_or_without_their_optional_fields():
    events = [{"kind": "seen", "to": [1], "seat": 2},
              {"kind": "seen", "to": [1], "seat": 2, "note": "x"},
              {"kind": "shout", "to": None, "text": "hi"}]
    assert check(DECLARED, events) == events


def test_the_engine_checks_what_it_emits():
    game = Game(["werewolf", "seer", "villager", "villager", "villager", "villager"])
    table = Table(game.state, 0)
    with pytest.raises(UndeclaredEvent):
        table.emit("seer_result", None, seat=2, role="villager")  # the Seer's, sent to everyone
    with pytest.raises(UndeclaredEvent):
        table.emit("death", None, seat=2, role="villager")  # no cause


def test_each_kind_is_declared_by_one_module_and_private_kinds_name_their_audience():
    owners = {}
    for unit in UNITS:
        for kind in unit.events:
            assert kind.kind not in owners, \
                f"{kind.kind} declared by {owners[kind.kind]} and {unit.id}"
            owners[kind.kind] = unit.id
    assert set(owners) <= set(rules.EVENTS)
    for kind in rules.EVENTS.values():
        assert kind.doc and kind.audience
        assert kind.public is not None or kind.audience == BY_CHANNEL
