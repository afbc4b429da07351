"""Medium (004): the night after a day that expelled someone, she learns what a reading shows
of the expelled (the Seer's result type: 004's `wolf_or_not`). Automatic, no prompt (1.8)."""

from rules.events import EventKind
from rules.role import Fact, Role, Step, holder, powered_holder
from rules.roles.house import EXILE
from rules.roles.seer import appearance


def expelled_yesterday(state) -> int | None:
    last = state.memo.get("medium")
    return last["seat"] if last and last["day"] == state.day - 1 else None


class MediumStep(Step):
    phase = "night.medium"
    duration = "medium"
    night_order = 22  # after the Seer; needs nothing from tonight
    names_waiting_seats = False
    holder_role = "medium"

    def scheduled(self, t) -> bool:
        return expelled_yesterday(t.s) is not None  # the expulsion is public

    def runs(self, t) -> bool:
        return self.scheduled(t) and powered_holder(t.s, "medium") is not None

    def open(self, t) -> None:
        medium = powered_holder(t.s, "medium")
        seat = expelled_yesterday(t.s)
        assert seat is not None  # scheduled() checked it
        result = {"seat": seat, "role": appearance(t.s, seat), "night": t.s.day}
        t.s.memo["medium"].setdefault("results", []).append(result)
        t.emit("medium_result", [medium], seat=seat, role=result["role"])


def on_death(t, seat: int, cause: str) -> None:
    """"Expelled" = removed by the day's vote process (the vote, a tie's lot or revote, the
    Scapegoat's tie death), not a revealed Idiot (he does not die)."""
    if cause in EXILE and holder(t.s, "medium") is not None:
        results = t.s.memo.get("medium", {}).get("results", [])
        t.s.memo["medium"] = {"seat": seat, "day": t.s.day, "results": results}


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "medium":
        return {"medium_results": None}
    return {"medium_results": list(state.memo.get("medium", {}).get("results", []))}


ROLE = Role(id="medium", steps=(MediumStep(),), on_death=on_death, view=view_fields,
            facts=(Fact("medium_results", "results", told_by="medium_result"),),
            durations={"medium": 15},
            events=(
                EventKind("medium_result", ("seat", "role"), "the Medium",
                          "what her reading shows of the card of the seat expelled yesterday"),
            ))
