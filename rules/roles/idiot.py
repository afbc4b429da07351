"""Village Idiot (003): voted out, his card turns up and he lives on, without a vote."""

from rules.events import EVERYONE, EventKind
from rules.role import Role, has_power, holder


def revealed(state) -> bool:
    return state.memo.get("idiot", {}).get("revealed", False)


def spares(t, seat: int, cause: str) -> bool:
    """Automatic: the first elimination by the vote (a mayor's tie-break included) reveals him
    instead; the second kills him (O36)."""
    if t.s.roles[seat] != "idiot" or cause != "vote" or not has_power(t.s, seat) or revealed(t.s):
        return False
    t.s.memo["idiot"] = {"revealed": True}
    t.reveal(seat)
    t.emit("idiot_revealed", None, seat=seat, role="idiot")
    return True


def no_vote(state, seat: int, action: str, choices: list) -> list | None:
    """A revealed Idiot gets no vote prompt (he still talks and counts among the living)."""
    if action == "vote" and revealed(state) and state.roles[seat] == "idiot":
        return None
    return choices


def on_death(t, seat: int, cause: str) -> None:
    """Once the village has lost its powers a revealed Idiot lives by none: he dies."""
    idiot = holder(t.s, "idiot")
    if t.s.memo.get("powers_lost") and revealed(t.s) and t.s.alive[idiot]:
        t.kill(idiot, "powers_lost")


ROLE = Role(id="idiot", spares=spares, prompt_filter=no_vote, on_death=on_death, death_order=40,
            events=(
                EventKind("idiot_revealed", ("seat", "role"), EVERYONE,
                          "the Village Idiot survives his expulsion, his card shown"),
            ))
