"""The Two Sisters (Millers Hollow, The Village): two villager cards dealt together. They learn
each other's seat at the deal and know it all game; they have no other power, and a Sister's
death does not take the other (not the 004 Lover pair). Added to show what a role with an event
of its own costs: this module, its line in rules/roles, its tests, its catalogue words, its art.
Its card shows the other Sister (its `Fact`): the client draws it from the declaration."""

from rules.events import EventKind
from rules.role import Fact, Role, seats_of


def start(t) -> None:
    sisters = seats_of(t.s, "sisters")
    if sisters:
        t.emit("sisters", sisters, sisters=sisters)


def view_fields(state, seat: int) -> dict:
    return {"sisters": seats_of(state, "sisters") if state.roles[seat] == "sisters" else None}


ROLE = Role(
    id="sisters", cards=2, start=start, view=view_fields,
    facts=(Fact("sisters", "others", told_by="sisters", told_in="sisters"),),
    events=(
        EventKind("sisters", ("sisters",), "the two Sisters",
                  "the two Sisters' seats, at the deal"),
    ),
)
