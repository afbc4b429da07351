"""The mayor (elected on day 1, not dealt): his vote counts twice, he breaks the day's ties, and
a dying mayor names a successor among the living. `mayor = none` (003, 004) plays without one."""

from rules.events import EVERYONE, EventKind
from rules.role import ReactionStep, Role, Setting, Step, living, option


class SuccessorStep(ReactionStep):
    phase = "successor"
    duration = "successor"
    actions = ("mayor.successor",)
    waiting_action = "mayor.successor"
    reaction = "after"

    def open(self, t) -> None:
        t.open_prompt(self.actor(t), "mayor.successor", living(t.s), 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.s.mayor = targets[0]
        t.close_prompt(seat, action)
        t.emit("mayor", None, seat=targets[0], how="successor")

    def resolve(self, t, seat: int) -> None:
        if t.s.mayor == seat:
            # Named nobody in time: the village has no mayor any more.
            t.s.mayor = None
            t.emit("mayor", None, seat=None, how="none")


class TiebreakStep(Step):
    phase = "day.tiebreak"
    duration = "tiebreak"
    actions = ("mayor.tiebreak",)
    waiting_action = "mayor.tiebreak"

    def open(self, t) -> None:
        t.s.memo["vote"]["chosen"] = None
        t.open_prompt(t.s.mayor, "mayor.tiebreak", t.s.memo["vote"]["tie"], 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.s.memo["vote"]["chosen"] = targets[0]
        t.close_prompt(seat, action)

    def close(self, t) -> None:
        chosen = t.s.memo["vote"].pop("chosen")
        tie = t.s.memo["vote"].pop("tie")
        t.emit("vote_result", None, phase=self.phase, target=chosen, tally={}, tie=tie)
        t.eliminate(chosen)


def on_death(t, seat: int, cause: str) -> None:
    if t.s.mayor == seat:
        t.s.pending.append({"kind": "successor", "seat": seat})


def tie_break(t, tied: list) -> bool:
    """On a tie the mayor chooses among the tied (000, 001; `vote_tie = mayor_chooses`)."""
    if t.s.mayor is None or option(t.s, "vote_tie") != "mayor_chooses":
        return False
    t.s.memo["vote"]["tie"] = tied
    t.enter("day.tiebreak")
    return True


UNIT = Role(
    id="mayor", deal=None,
    steps=(TiebreakStep(), SuccessorStep()),
    on_death=on_death, death_order=90,  # after the shots the same death brings (D3)
    tie_break=tie_break, tie_order=50,
    # The election's rules and phases (its steps are the day's, rules.roles.day) are the mayor's:
    # with `mayor = none` none of them applies.
    settings=(Setting("mayor_candidacy", ("everyone", "candidates"), "everyone", "mayor", "001"),
              Setting("election_tie", ("lot", "runoff_then_lot"), "lot", "mayor", "001"),
              Setting("mayor", ("elected", "none"), "elected", "mayor", "003", off="none")),
    durations={"candidacy": 30, "election": 60, "tiebreak": 30, "successor": 30},
    events=(
        EventKind("mayor", ("seat", "how"), EVERYONE,
                  "the mayor: elected, named by the one before (successor), or none"),
    ),
)
