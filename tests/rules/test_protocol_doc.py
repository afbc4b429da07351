"""docs/protocol.md lists exactly the view fields and event kinds the engine produces."""

import json
import pathlib
import re

import rules
from rules import view
from tests.rules.driver import Game
from tests.rules.golden_tables import GOLDEN, TABLES

PROTOCOL = (pathlib.Path(__file__).parents[2] / "docs" / "protocol.md").read_text()
LOBBY_KINDS = {"joined", "presence", "settings", "spectators", "table", "countdown", "remove_vote",
               "removed", "away", "closed", "bot_seat"}  # emitted by the room, not by the rules


def documented_view_fields() -> set:
    block = PROTOCOL.split("VIEW (game part")[1].split("```")[1]
    return {m.group(1) for m in re.finditer(r"^([a-z_]+) ", block, re.M)}


def documented_event_kinds() -> set:
    table = PROTOCOL.split("## Events")[1]
    return {m.group(1) for m in re.finditer(r"^\| `([a-z_]+)` \|", table, re.M)}


def test_the_view_has_exactly_the_documented_fields():
    game = Game(["werewolf", "seer", "witch", "hunter", "cupid", "villager"])
    assert set(view(game.state, 0)) == documented_view_fields()


def test_the_engine_emits_exactly_the_documented_and_declared_game_event_kinds():
    kinds = set()
    for name, *_ in TABLES:
        kinds |= {e["kind"] for e in json.loads((GOLDEN / f"{name}.json").read_text())["events"]}
    kinds.add("clock")  # a table on one phone's only: tests/rules/test_engine_phone.py
    assert kinds == documented_event_kinds() - LOBBY_KINDS == set(rules.EVENTS)
