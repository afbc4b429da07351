"""Who has won, checked whenever a chain of deaths has been resolved: the roles' win conditions,
lowest priority first (mixed lovers 10, the village 20, the pack 30...)."""

from typing import NamedTuple

from rules.registry import WINS
from rules.state import GameState


class Outcome(NamedTuple):
    winners: list  # seats of the winning side, dead or alive
    reason: str  # the win condition: "no_wolves_alive" | "only_wolves_alive" | ...


def winner(state: GameState) -> dict | None:
    for win in WINS:
        winners = win.check(state)
        if winners is not None:
            return {"winners": winners, "reason": win.reason, "settles": win.settles}
    return None


def outcome(state: GameState) -> Outcome | None:
    if state.outcome is None:
        return None
    return Outcome(winners=list(state.outcome["winners"]), reason=state.outcome["reason"])
