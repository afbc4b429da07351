"""The working copy of one transaction and the game's flow (phases, dawn, deaths, winning).

Every command runs on a `Table`: a clone of the state plus the events it caused. Phases are the
`Step`s the roles declare (`rules.registry`); after each change the table advances to a fixed
point (`run`), so "everyone has acted" and "time is up" end a phase through the same path. This
module names no role: what a role does reaches it through the registry's indexes.
"""

import random

from rules.events import check
from rules.outcome import winner
from rules.registry import (DAWN_ORDER, DAY_OPENING, DEATH_REACTIONS, EVENTS, HIDES, JOIN_ACTS,
                            JOINS, NIGHT_ORDER, PROMPT_FILTERS, SPARES, STEPS, TIE_BREAKERS,
                            WATCHERS)
from rules.role import concealed, living
from rules.state import GameState


# A table played on one phone passed around (RULES.md, "One phone"): the phone calls every living
# player in turn, once for each night step, each for PHONE_TURN seconds; a night step's deadline
# is that round's, at most PHONE_STEP_CAP (12 living players, the most one phone seats).
PHONE_TURN = 15
PHONE_STEP_CAP = 12 * PHONE_TURN


def is_night(phase: str) -> bool:
    return phase.startswith("night.")


class Table:
    __slots__ = ("s", "events", "now", "dawning")

    def __init__(self, state: GameState, now: int):
        self.s = state.clone()
        self.events: list = []
        self.now = now
        self.dawning = False  # the night's dead are dying (and the deaths they bring at once)

    def emit(self, kind: str, to, **payload) -> None:
        event = {"kind": kind, "to": to, **payload}
        check(EVENTS, [event])
        self.events.append(event)
        for watcher in WATCHERS.get(kind, ()):
            watcher(self, event)

    def remember(self, seat: int, what: str, targets: list) -> None:
        """A secret night deed that no event tells while the game runs, kept for the end
        (game_over's `story`). Never emitted as it happens: even an event to nobody would leave a
        gap in the room's sequence numbers that tells the table something was done."""
        self.s.memo.setdefault("story", []).append(
            {"night": self.s.day, "seat": seat, "what": what, "targets": list(targets)})

    def rng(self) -> random.Random:
        """A generator for one draw; replaying the same commands gives the same draws."""
        self.s.draws += 1
        return random.Random(f"{self.s.seed}/{self.s.draws}")

    # prompts

    def open_prompt(self, seat: int, action: str, choices: list, lo: int, hi: int) -> bool:
        """Open a prompt unless a role's rule withholds it from this seat (a revealed Idiot's
        vote); the roles' filters may also narrow its choices (lovers' restrictions)."""
        for narrow in PROMPT_FILTERS:
            choices = narrow(self.s, seat, action, choices)
            if choices is None:
                return False
        prompt = {"seat": seat, "action": action, "choices": choices, "min": lo, "max": hi,
                  "deadline": self.s.deadline}
        self.s.prompts.append(prompt)
        self.emit("prompt", [seat], action=action, choices=choices, min=lo, max=hi,
                  deadline=self.s.deadline)
        return True

    def close_prompt(self, seat: int, action: str) -> None:
        self.s.prompts = [p for p in self.s.prompts
                          if not (p["seat"] == seat and p["action"] == action)]
        self.emit("prompt_closed", [seat], action=action)

    def _close_all_prompts(self) -> None:
        for p in self.s.prompts:
            self.emit("prompt_closed", [p["seat"]], action=p["action"])
        self.s.prompts = []

    # phases

    def enter(self, phase: str, stand_in: bool = False, at_dawn: bool = False) -> None:
        """Open a phase; a `stand_in` night step opens no prompt: its holder is dead or missing
        and only its time runs (O1). On one phone the day's first phase (`at_dawn`) waits for
        the phone to show the dawn before its clock runs (`engine.dawn_shown`); with seats online
        too, at most the phone's round (its deadline meanwhile: `engine.advance` then starts
        the clock), so a phone gone or reloaded does not hold them for ever."""
        s = self.s
        step = STEPS[phase]
        s.phase = phase
        seconds = self.seconds(step) if step.timed(self) else None
        s.memo.pop("dawn_clock", None)
        if at_dawn and seconds is not None and self.phone():
            s.memo["dawn_clock"], seconds = seconds, self.phone_round() if self.online() else None
        s.deadline = None if seconds is None else self.now + seconds * 1000
        s.memo.pop("stand_in", None)
        self.emit("phase", None, phase=phase, day=s.day, deadline=s.deadline)
        if stand_in:
            s.memo["stand_in"] = phase
            return
        step.open(self)
        for join in JOINS.get(phase, ()):
            join.open(self)

    def phone(self) -> bool:
        """The table is played on one phone passed around."""
        return "turn" in self.s.memo

    def online(self) -> bool:
        """Some seats of a table with a phone play online, each on its own device."""
        return "online" in self.s.memo

    def phone_round(self) -> int:
        """The phone's round: a turn for each living seat on the phone, capped."""
        online = self.s.memo.get("online", ())
        called = sum(alive for seat, alive in enumerate(self.s.alive) if seat not in online)
        return min(called * self.s.memo["turn"], PHONE_STEP_CAP)

    def start_clock(self) -> None:
        """The day's first phase, waiting for the phone's dawn, starts its clock now."""
        self.s.deadline = self.now + self.s.memo.pop("dawn_clock") * 1000
        self.emit("clock", None, phase=self.s.phase, deadline=self.s.deadline)

    def seconds(self, step) -> int:
        """A phase's time: its duration; on one phone a night step's is the phone's round, one
        turn for each living player on the phone (capped), whatever the step and the deal; with
        seats online too, the longer of the round and the step's duration (RULES.md, "One phone
        + online"): public facts only, so the step's length tells the online seats nothing of
        the phone's pace."""
        duration = self.s.settings["durations"][step.duration]
        if not self.phone() or step.night_order is None:
            return duration
        return max(self.phone_round(), duration) if self.online() else self.phone_round()

    def act(self, seat: int, action: str, targets: list) -> None:
        """Apply an answer to the phase's step, or to the role acting inside it."""
        handler = JOIN_ACTS.get((self.s.phase, action)) or STEPS[self.s.phase].act
        handler(self, seat, action, targets)

    def run(self) -> None:
        """End phases while everyone who must act has acted."""
        while self.s.phase != "over" and not self.holds() and STEPS[self.s.phase].done(self):
            self.finish()

    def holds(self) -> bool:
        """With hidden cards every night step lasts its full time, answered or not: a role's
        ending early would tell the table its holder lives (O1, like D9), the pack's how many
        wolves still point (D16). On one phone every night step lasts until the phone has called
        every player (`engine.round_done`) or its time is up; with seats online too, its time.
        With seats online the day's first phase also waits for the phone's dawn (or its wait's
        end): the online seats cannot start the vote before the phone's players saw who died."""
        if "dawn_clock" in self.s.memo and self.online():
            return True
        return STEPS[self.s.phase].night_order is not None and (
            self.phone() or concealed(self.s))

    def finish(self) -> None:
        """End the current phase now (all acted, or its deadline passed)."""
        self._close_all_prompts()
        step = STEPS[self.s.phase]
        if self.s.memo.pop("stand_in", None) == self.s.phase:
            self.next_night_step(after=step.night_order)
        else:
            step.close(self)

    def start_night(self) -> None:
        s = self.s
        if s.phase != "start":
            s.day += 1
        # What the night's steps intend; dawn resolves it (the wolves' victim, the protected...)
        s.memo["night"] = {"victim": None, "protected": [], "deaths": []}
        self.next_night_step(after=None)

    def next_night_step(self, after) -> None:
        for step in NIGHT_ORDER:
            if after is not None and step.night_order <= after:
                continue
            if step.runs(self):
                self.enter(step.phase)
                return
            if self.stands_in(step):
                self.enter(step.phase, stand_in=True)
                return
        self.dawn()

    def stands_in(self, step) -> bool:
        """A step whose holder is dead or missing still runs when cards are hidden and its card
        is in the public deal (roles-spec 5.1)."""
        return step.holder_role is not None and concealed(self.s) \
            and step.holder_role in self.s.memo.get("in_play", ()) and step.scheduled(self)

    def dawn(self) -> None:
        """Resolve the night's intents in the one dawn order (protect, attack, save, poison,
        night shot), then the dead die in the order they were marked."""
        night = self.s.memo["night"]
        for resolve in DAWN_ORDER:
            resolve(self, night)
        self.dawning = True
        for seat, cause in night["deaths"]:
            self.kill(seat, cause)
        self.dawning = False
        self.s.resume = "day"
        self.continue_chain()

    def start_day(self) -> None:
        self.enter(next(step.phase for step in DAY_OPENING if step.runs(self)), at_dawn=True)

    def break_tie(self, tied: list) -> None:
        """The day's vote is tied: the first tie-breaker that applies settles it, else nobody
        is eliminated."""
        if not any(breaker(self, tied) for breaker in TIE_BREAKERS):
            self.eliminate(None)

    def eliminate(self, seat: int | None, cause: str = "vote") -> None:
        if seat is not None:
            self.kill(seat, cause)
        self.s.resume = "night"
        self.continue_chain()

    # deaths

    def kill(self, seat: int, cause: str) -> None:
        """Kill and reveal, unless a role spares this death; then every role reacts to it, in
        the declared order (grief at once, shots and successions queued)."""
        s = self.s
        if not s.alive[seat] or any(spare(self, seat, cause) for spare in SPARES):
            return
        s.alive[seat] = False
        shown, told = s.roles[seat], cause
        hidden = next((c for hide in HIDES if (c := hide(self, seat, cause)) is not None), None)
        if hidden is not None:  # 004: the card and the true cause are shown at the end only
            s.memo.setdefault("hidden", []).append(seat)
            s.memo.setdefault("hidden_causes", {})[str(seat)] = cause
            shown, told = None, hidden
        self.emit("death", None, seat=seat, role=shown, cause=told)
        for react in DEATH_REACTIONS:
            react(self, seat, cause)

    def reveal(self, seat: int) -> None:
        """Show a living seat's card to everybody (the dead's cards show by being dead)."""
        self.s.memo.setdefault("revealed", []).append(seat)

    def continue_chain(self) -> None:
        """Resolve queued death reactions: shots, then the win check, then the others."""
        s = self.s
        result = winner(s)
        shot = next((p for p in s.pending if STEPS[p["kind"]].reaction == "shot"), None)
        # A shot is asked while it may still change the outcome (RULES.md D4, D25).
        if shot is not None and not (result and result["settles"]):
            self.enter(shot["kind"])
            return
        if result is not None:
            self.end(result)
            return
        if s.pending:
            self.enter(s.pending[0]["kind"])
            return
        resume, s.resume = s.resume, None
        if resume == "day":
            self.start_day()
        else:
            self.start_night()

    def end(self, result: dict) -> None:
        s = self.s
        self._close_all_prompts()
        s.phase = "over"
        s.deadline = None
        s.pending = []
        s.outcome = {"winners": result["winners"], "reason": result["reason"]}
        self.emit("game_over", None, winners=result["winners"], alive=living(s),
                  roles={str(seat): role for seat, role in enumerate(s.roles)},
                  causes=dict(s.memo.get("hidden_causes", {})),
                  chat=[{k: v for k, v in line.items() if k != "to"} for line in s.chat
                        if not line.get("overheard")],
                  story=list(s.memo.get("story", [])), reason=result["reason"])
