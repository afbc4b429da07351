"""Villager: no power; fills the seats the other cards leave. The village wins when no wolf
lives."""

from rules.role import Role, Win, living_wolves, side


def no_wolf_alive(state) -> list | None:
    # Nobody alive counts as "no wolf alive": the village wins (RULES.md, D6).
    return None if living_wolves(state) else side(state, "village")


ROLE = Role(id="villager", deal="filler", plain=True,
            wins=(Win("no_wolves_alive", 20, no_wolf_alive, side="village"),))
