"""The dealt Lover pair (004; not Cupid's lovers): two seats dealt together. They learn each
other's seat at the deal; when one leaves, the other follows at once, whatever the cause. With
`lover_win = pair` they win alone if both are alive when a side wins (before the Fox only with
`fox_lover_priority = lover`); with `village` they are villagers who die together (1.11)."""

from rules.events import EventKind
from rules.role import Fact, Role, Setting, Win, option, seats_of, side_condition
from rules.roles.fox import alive as fox_alive


def start(t) -> None:
    pair = seats_of(t.s, "lover")
    if pair:
        t.emit("lover_pair", pair, lovers=pair)


def follow(t, seat: int, cause: str) -> None:
    if t.s.roles[seat] == "lover":
        for other in seats_of(t.s, "lover"):
            t.kill(other, "grief")  # grief is "any cause" for the Hunter, neither attack nor exile


def both_alive(state) -> list | None:
    pair = seats_of(state, "lover")
    if option(state, "lover_win") != "pair" or len(pair) != 2 or not all(
            state.alive[s] for s in pair) or not side_condition(state):
        return None
    if fox_alive(state) is not None and option(state, "fox_lover_priority") == "fox":
        return None
    return pair


def view_fields(state, seat: int) -> dict:
    return {"lover_pair": seats_of(state, "lover") if state.roles[seat] == "lover" else None}


ROLE = Role(
    id="lover", cards=2, start=start, on_death=follow, death_order=11, view=view_fields,
    facts=(Fact("lover_pair", "others", told_by="lover_pair", told_in="lovers"),),
    wins=(Win("lovers_pair_alive", 14, both_alive, settles=False),),
    settings=(Setting("lover_win", ("pair", "village"), "pair", "lover", "004"),),
    events=(
        EventKind("lover_pair", ("lovers",), "the pair", "the two dealt Lovers (004)"),
    ),
)
