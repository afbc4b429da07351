"""Who else sees the table (not dealt): spectators, and what the dead see.

`spectators` is read by the room and the gateway (a watch socket is refused when `forbidden`); the
engine only declares it, so that it is chosen, shown, validated and carried to the next game like
every other house rule. `dead_see_roles` (jinrou's 霊界: the dead see every card) is the engine's:
a dead seat's view gets `cards`, and a `cards` event reaches each seat as it dies.
"""

from rules.events import EventKind
from rules.role import Role, Setting, option


def dead_cards(state, seat: int) -> dict:
    if state.phase == "over" or state.alive[seat] or option(state, "dead_see_roles") != "yes":
        return {"cards": None}
    return {"cards": {str(s): role for s, role in enumerate(state.roles)}}


def show_the_dead(t, event: dict) -> None:
    if option(t.s, "dead_see_roles") == "yes" and t.s.phase != "over":
        t.emit("cards", [event["seat"]], cards={str(s): r for s, r in enumerate(t.s.roles)})


UNIT = Role(
    id="audience", deal=None,
    view=dead_cards,
    watch={"death": show_the_dead},
    settings=(Setting("spectators", ("allowed", "forbidden"), "allowed", "audience", "ours"),
              Setting("dead_see_roles", ("no", "yes"), "no", "audience", "jinrou")),
    events=(
        EventKind("cards", ("cards",), "the seat", "every card, for a seat whose game is over",
                  types={"cards": {"type": "object", "additionalProperties": {"type": "string"}}}),
    ),
)
