"""The day: first-day mayor election, discussion, elimination vote; ties go to the tie-breakers
the roles declare (the Scapegoat, the mayor), else nobody is eliminated."""

from rules.events import EVERYONE, EventKind
from rules.role import Role, Setting, Step, living, option

VOTE_PHASES = ("day.election", "day.runoff", "day.vote", "day.revote")


def tally(state) -> dict:
    """{str(target): weight}; in the elimination vote the mayor's vote counts twice."""
    weights: dict = {}
    double = state.phase in ("day.vote", "day.revote")
    for voter, target in state.memo["vote"]["votes"].items():
        if target is not None:
            key = str(target)
            weights[key] = weights.get(key, 0) + (2 if double and int(voter) == state.mayor else 1)
    return weights


def top(weights: dict) -> list:
    if not weights:
        return []
    best = max(weights.values())
    return sorted(int(seat) for seat, w in weights.items() if w == best)


class _VoteStep(Step):
    """Public vote: each voter votes (or abstains) and may change until the phase ends."""

    def choices(self, t, seat: int) -> list:
        raise NotImplementedError  # each vote says whom it is between

    def open(self, t) -> None:
        t.s.memo["vote"]["votes"] = {}
        for seat in living(t.s):
            t.open_prompt(seat, self.actions[0], self.choices(t, seat), 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        target = targets[0] if targets else None
        t.s.memo["vote"]["votes"][str(seat)] = target
        t.emit("voted", None, phase=self.phase, seat=seat, target=target, tally=tally(t.s))

    def done(self, t) -> bool:
        """Every voter has voted or abstained (vote prompts stay open until the phase ends; a
        seat a role's rule leaves without a vote has none)."""
        return len(t.s.memo["vote"]["votes"]) == len(t.s.prompts)


class CandidacyStep(Step):
    """001: "each villager may stand for mayor" before the election (`mayor_candidacy`)."""

    phase = "day.candidacy"
    duration = "candidacy"
    actions = ("mayor.stand",)
    waiting_action = "mayor.stand"
    opens_day = 5

    def runs(self, t) -> bool:
        return ELECTION.runs(t) and option(t.s, "mayor_candidacy") == "candidates"

    def open(self, t) -> None:
        t.s.memo["vote"]["candidates"] = []
        for seat in living(t.s):
            t.open_prompt(seat, "mayor.stand", [], 0, 0)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.s.memo["vote"]["candidates"].append(seat)
        t.close_prompt(seat, action)
        t.emit("candidate", None, seat=seat)

    def close(self, t) -> None:
        t.enter("day.election")


class ElectionStep(_VoteStep):
    phase = "day.election"
    duration = "election"
    actions = ("mayor.elect",)
    waiting_action = "mayor.elect"
    opens_day: int | None = 10

    def runs(self, t) -> bool:
        """On the first day only, when the village elects a mayor (D12; `mayor`)."""
        return not t.s.memo["vote"]["elected"] and option(t.s, "mayor") == "elected"

    def choices(self, t, seat: int) -> list:
        # the declared candidates; nobody stood: everyone (O33). Oneself allowed (D7).
        return t.s.memo["vote"].get("candidates") or living(t.s)

    def close(self, t) -> None:
        weights = tally(t.s)
        tied = top(weights)
        if len(tied) > 1 and option(t.s, "election_tie") == "runoff_then_lot" \
                and self.phase == "day.election":
            t.emit("vote_result", None, phase=self.phase, target=None, tally=weights, tie=tied)
            t.s.memo["vote"]["candidates"] = tied
            t.enter("day.runoff")
            return
        # Most votes wins, a tie is drawn by lot (000; 001's game master's pick after the
        # runoff, O32); nobody voted: no mayor (D12).
        mayor = None
        if tied:
            mayor = tied[0] if len(tied) == 1 else t.rng().choice(tied)
        t.emit("vote_result", None, phase=self.phase, target=mayor, tally=weights,
               tie=tied if len(tied) > 1 else [])
        t.s.memo["vote"]["elected"] = True
        if mayor is not None:
            t.s.mayor = mayor
            t.emit("mayor", None, seat=mayor, how="elected")
        t.enter("day.discussion")


class RunoffStep(ElectionStep):
    """001: a second vote between the players with the most votes; tied again, a lot."""

    phase = "day.runoff"
    opens_day = None


ELECTION = ElectionStep()


class DiscussionStep(Step):
    phase = "day.discussion"
    duration = "discussion"
    actions = ("vote.request",)
    waiting_action = "vote.request"
    opens_day = 20

    def timed(self, t) -> bool:
        # 004 may play without a timer: the vote starts once a majority asks (D17)
        return option(t.s, "discussion_timer") == "on"

    def open(self, t) -> None:
        t.s.memo["vote"]["requests"] = []
        for seat in living(t.s):
            t.open_prompt(seat, "vote.request", [], 0, 0)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        requests = t.s.memo["vote"]["requests"]
        requests.append(seat)
        t.close_prompt(seat, action)
        t.emit("vote_requested", None, seat=seat, count=len(requests), needed=needed(t.s))

    def done(self, t) -> bool:
        return len(t.s.memo["vote"]["requests"]) >= needed(t.s)

    def close(self, t) -> None:
        t.enter("day.vote")


def needed(state) -> int:
    """A majority of the living: more than half."""
    return sum(state.alive) // 2 + 1


class VoteStep(_VoteStep):
    phase = "day.vote"
    duration = "vote"
    actions = ("vote",)
    waiting_action = "vote"

    def choices(self, t, seat: int) -> list:
        return [s for s in living(t.s) if s != seat]  # no vote against oneself (RULES.md, D7)

    def close(self, t) -> None:
        weights = tally(t.s)
        tied = top(weights)
        t.emit("vote_result", None, phase=self.phase, target=tied[0] if len(tied) == 1 else None,
               tally=weights, tie=tied if len(tied) > 1 else [])
        if len(tied) > 1:
            t.break_tie(tied)
        else:
            t.eliminate(tied[0] if tied else None)


class RevoteStep(_VoteStep):
    """004: one more vote among the tied, by the same voters."""

    phase = "day.revote"
    duration = "vote"
    actions = ("vote",)
    waiting_action = "vote"

    def choices(self, t, seat: int) -> list:
        return [s for s in t.s.memo["vote"]["tie"] if s != seat]  # the tied vote too (O37)

    def close(self, t) -> None:
        weights = tally(t.s)
        tied = top(weights)
        t.s.memo["vote"].pop("tie")
        target = tied[0] if len(tied) == 1 else None
        if len(tied) > 1 and option(t.s, "vote_tie") == "revote_then_lot":
            target = t.rng().choice(tied)
        t.emit("vote_result", None, phase=self.phase, target=target, tally=weights,
               tie=tied if len(tied) > 1 else [])
        t.eliminate(target)


def tie_break(t, tied: list) -> bool:
    """The day's own tie rule (004), after the Scapegoat and the mayor: a lot, or one revote
    among the tied; `mayor_chooses` without a mayor eliminates nobody."""
    rule = option(t.s, "vote_tie")
    if rule == "lot":
        choice = t.rng().choice(tied)
        t.emit("vote_result", None, phase="day.vote", target=choice, tally={}, tie=tied)
        t.eliminate(choice)
        return True
    if rule in ("revote_then_lot", "revote_then_nobody"):
        t.s.memo["vote"]["tie"] = tied
        t.enter("day.revote")
        return True
    return False


def view_fields(state, seat: int) -> dict:
    vote = state.memo["vote"]
    fields: dict = {"votes": None, "tally": None, "requests": None}
    if state.phase in VOTE_PHASES:
        fields["votes"] = dict(vote["votes"])
        fields["tally"] = tally(state)
    elif state.phase == "day.discussion":
        fields["requests"] = {"count": len(vote["requests"]), "needed": needed(state),
                              "mine": seat in vote["requests"]}
    return fields


UNIT = Role(
    id="day", deal=None,
    steps=(CandidacyStep(), ELECTION, RunoffStep(), DiscussionStep(), VoteStep(), RevoteStep()),
    view=view_fields,
    tie_break=tie_break, tie_order=60,
    settings=(Setting("vote_tie", ("mayor_chooses", "revote_then_lot", "lot",
                                   "revote_then_nobody"), "mayor_chooses", "day", "004"),
              Setting("discussion_timer", ("on", "off"), "on", "day", "004")),
    durations={"discussion": 180, "vote": 60},  # the election's: the mayor's (rules.roles.mayor)
    events=(
        EventKind("voted", ("phase", "seat", "target", "tally"), EVERYONE,
                  "a vote cast or changed"),
        EventKind("candidate", ("seat",), EVERYONE, "a seat stands for mayor"),
        EventKind("vote_result", ("phase", "target", "tally", "tie"), EVERYONE,
                  "a vote's result (target null: nobody; tie: the tied seats)"),
        EventKind("vote_requested", ("seat", "count", "needed"), EVERYONE,
                  "a seat asks for the vote to start"),
    ),
)
