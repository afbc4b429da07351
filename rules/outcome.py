"""Who has won, checked whenever a chain of deaths has been resolved."""

from typing import NamedTuple

from rules.state import GameState
from rules.settings import WOLF


class Outcome(NamedTuple):
    winners: list  # seats of the winning side, dead or alive
    reason: str  # "no_wolves_alive" | "only_wolves_alive" | "lovers_last_alive"


def mixed_lovers(state: GameState) -> list:
    """The lovers when exactly one of them is a wolf: a team of their own. Else []."""
    lovers = state.memo.get("cupid", {}).get("lovers")
    if lovers and (state.roles[lovers[0]] == WOLF) != (state.roles[lovers[1]] == WOLF):
        return lovers
    return []


def winner(state: GameState) -> dict | None:
    alive = [seat for seat, a in enumerate(state.alive) if a]
    couple = mixed_lovers(state)
    if couple and sorted(alive) == sorted(couple):
        return {"winners": sorted(couple), "reason": "lovers_last_alive"}
    wolves_alive = [seat for seat in alive if state.roles[seat] == WOLF]
    # Nobody alive counts as "no wolf alive": the village wins (RULES.md, D6).
    if not wolves_alive:
        return {"winners": _team(state, lambda role: role != WOLF, couple),
                "reason": "no_wolves_alive"}
    if len(wolves_alive) == len(alive):
        return {"winners": _team(state, lambda role: role == WOLF, couple),
                "reason": "only_wolves_alive"}
    return None


def _team(state: GameState, member, couple: list) -> list:
    return [seat for seat, role in enumerate(state.roles) if member(role) and seat not in couple]


def outcome(state: GameState) -> Outcome | None:
    if state.outcome is None:
        return None
    return Outcome(winners=list(state.outcome["winners"]), reason=state.outcome["reason"])
