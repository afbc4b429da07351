"""Traitor (004): wins with the werewolves' team but is no werewolf: readings show him as a
villager ("not a werewolf"), the wolves may attack him, and he counts among the humans for
parity. With `traitor_knows_pack` he learns the wolves' seats at the deal; they never learn his,
and he never reads their chat (1.9, O44)."""

from rules.events import EventKind
from rules.role import CARDS, Fact, Role, Setting, holder, option


def pack(state) -> list:
    return [s for s, role in enumerate(state.roles) if CARDS[role].wolf]


def start(t) -> None:
    traitor = holder(t.s, "traitor")
    if traitor is not None and option(t.s, "traitor_knows_pack") == "yes":
        t.emit("traitor_pack", [traitor], wolves=pack(t.s))


def view_fields(state, seat: int) -> dict:
    knows = state.roles[seat] == "traitor" and option(state, "traitor_knows_pack") == "yes"
    return {"pack": pack(state) if knows else None}


ROLE = Role(id="traitor", team="wolves", seen_as="villager", start=start, view=view_fields,
            facts=(Fact("pack", "seats", told_by="traitor_pack", told_in="wolves"),),
            settings=(Setting("traitor_knows_pack", ("no", "yes"), "no", "traitor", "004"),),
            events=(
                EventKind("traitor_pack", ("wolves",), "the Traitor", "the pack's seats"),
            ))
