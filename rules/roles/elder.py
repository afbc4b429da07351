"""Elder (003): survives the wolves' first attack. Killed by the village (the vote, a Hunter's
bullet, the poison), every non-wolf card loses its power for the rest of the game."""

from rules.events import EVERYONE, EventKind
from rules.role import Role, has_power

VILLAGE_CAUSES = ("vote", "hunter", "poison")


def spares(t, seat: int, cause: str) -> bool:
    """The first wolves' kill that reaches him takes his spare life instead (a protected or
    saved attack never reaches him: he keeps it, reading R1). Nobody is told."""
    if t.s.roles[seat] != "elder" or cause != "wolves" or not has_power(t.s, seat):
        return False
    elder = t.s.memo.setdefault("elder", {"wounded": False})
    if elder["wounded"]:
        return False
    elder["wounded"] = True
    t.remember(seat, "elder.spared", [])
    return True


def on_death(t, seat: int, cause: str) -> None:
    if t.s.roles[seat] == "elder" and cause in VILLAGE_CAUSES and not t.s.memo.get("powers_lost"):
        t.s.memo["powers_lost"] = True
        t.emit("powers_lost", None, seat=seat)  # public whatever else is hidden


ROLE = Role(id="elder", spares=spares, on_death=on_death, death_order=30,
            events=(
                EventKind("powers_lost", ("seat",), EVERYONE,
                          "the village killed the Elder: every villager's power is lost"),
            ))
