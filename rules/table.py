"""The working copy of one transaction and the game's flow (phases, deaths, winning).

Every command runs on a `Table`: a clone of the state plus the events it caused. Phases are
`Step`s registered by the role and day modules; after each change the table advances to a fixed
point (`run`), so "everyone has acted" and "time is up" end a phase through the same path.
"""

import random

from rules.outcome import winner
from rules.settings import WOLF
from rules.state import GameState

STEPS: dict = {}  # phase name -> Step
NIGHT_ORDER: list = []  # night steps, in waking order
DEATH_HOOKS: list = []  # fn(table, seat), run in order when a seat dies
VIEW_FIELDS: list = []  # fn(state, seat) -> dict of role-specific view fields


class Step:
    """One phase. Subclasses register themselves with `register`."""

    phase: str
    duration: str  # key of settings["durations"]
    actions: tuple = ()
    waiting_action: str = ""
    night_order: int | None = None  # set for the steps that wake at night, lowest first
    names_waiting_seats = True  # False at night: who is awake is secret

    def runs(self, t: "Table") -> bool:
        """Whether this night step wakes tonight (e.g. its role is in play and alive)."""
        return True

    def open(self, t: "Table") -> None:
        """Open the phase's prompts and tell the players what they learn now."""

    def act(self, t: "Table", seat: int, action: str, targets: list) -> None:
        raise NotImplementedError

    def done(self, t: "Table") -> bool:
        """Everyone who must act has acted. By default: no prompt left open."""
        return not t.s.prompts

    def close(self, t: "Table") -> None:
        """Resolve the phase (its prompts are closed already) and move the game on."""
        raise NotImplementedError


def register(step_class):
    step = step_class()
    STEPS[step.phase] = step
    if step.night_order is not None:
        NIGHT_ORDER.append(step)
        NIGHT_ORDER.sort(key=lambda s: s.night_order)
    return step_class


def living(state: GameState) -> list:
    return [seat for seat, alive in enumerate(state.alive) if alive]


def holder(state: GameState, role: str) -> int | None:
    """The seat dealt `role` (special roles are unique), or None when not in play."""
    try:
        return state.roles.index(role)
    except ValueError:
        return None


def is_night(phase: str) -> bool:
    return phase.startswith("night.")


class Table:
    __slots__ = ("s", "events", "now")

    def __init__(self, state: GameState, now: int):
        self.s = state.clone()
        self.events = []
        self.now = now

    def emit(self, kind: str, to, **payload) -> None:
        self.events.append({"kind": kind, "to": to, **payload})

    def rng(self) -> random.Random:
        """A generator for one draw; replaying the same commands gives the same draws."""
        self.s.draws += 1
        return random.Random(f"{self.s.seed}/{self.s.draws}")

    # prompts

    def open_prompt(self, seat: int, action: str, choices: list, lo: int, hi: int) -> None:
        prompt = {"seat": seat, "action": action, "choices": choices, "min": lo, "max": hi,
                  "deadline": self.s.deadline}
        self.s.prompts.append(prompt)
        self.emit("prompt", [seat], action=action, choices=choices, min=lo, max=hi,
                  deadline=self.s.deadline)

    def close_prompt(self, seat: int, action: str) -> None:
        self.s.prompts = [p for p in self.s.prompts
                          if not (p["seat"] == seat and p["action"] == action)]
        self.emit("prompt_closed", [seat], action=action)

    def _close_all_prompts(self) -> None:
        for p in self.s.prompts:
            self.emit("prompt_closed", [p["seat"]], action=p["action"])
        self.s.prompts = []

    # phases

    def enter(self, phase: str) -> None:
        s = self.s
        step = STEPS[phase]
        s.phase = phase
        s.deadline = self.now + s.settings["durations"][step.duration] * 1000
        self.emit("phase", None, phase=phase, day=s.day, deadline=s.deadline)
        step.open(self)

    def run(self) -> None:
        """End phases while everyone who must act has acted."""
        while self.s.phase != "over" and STEPS[self.s.phase].done(self):
            self.finish()

    def finish(self) -> None:
        """End the current phase now (all acted, or its deadline passed)."""
        self._close_all_prompts()
        STEPS[self.s.phase].close(self)

    def start_night(self) -> None:
        s = self.s
        if s.phase != "start":
            s.day += 1
        # deaths: [seat, cause] the night's steps add (or take back), in the order they die
        s.memo["night"] = {"victim": None, "deaths": []}
        self.next_night_step(after=None)

    def next_night_step(self, after) -> None:
        for step in NIGHT_ORDER:
            if (after is None or step.night_order > after) and step.runs(self):
                self.enter(step.phase)
                return
        self.dawn()

    def dawn(self) -> None:
        """The night's dead die in the order the night's steps marked them (wolves before
        poison, as the wolves wake before the witch)."""
        for seat, cause in self.s.memo["night"]["deaths"]:
            self.kill(seat, cause)
        self.s.resume = "day"
        self.continue_chain()

    def start_day(self) -> None:
        vote = self.s.memo["vote"]
        self.enter("day.discussion" if vote["elected"] else "day.election")

    def eliminate(self, seat: int | None) -> None:
        if seat is not None:
            self.kill(seat, "vote")
        self.s.resume = "night"
        self.continue_chain()

    # deaths

    def kill(self, seat: int, cause: str) -> None:
        """Kill and reveal; grief follows at once, hunters and successions are queued."""
        s = self.s
        if not s.alive[seat]:
            return
        s.alive[seat] = False
        self.emit("death", None, seat=seat, role=s.roles[seat], cause=cause)
        for hook in DEATH_HOOKS:
            hook(self, seat)

    def continue_chain(self) -> None:
        """Resolve queued death reactions: hunters' shots, then the win check, then succession."""
        s = self.s
        no_wolf_alive = not any(alive and role == WOLF for alive, role in zip(s.alive, s.roles))
        hunters = [p for p in s.pending if p["kind"] == "hunter"]
        # Once no wolf lives the village has won whatever a hunter shoots: do not ask him.
        if hunters and not no_wolf_alive:
            self.enter("hunter")
            return
        result = winner(s)
        if result is not None:
            self.end(result)
            return
        if s.pending:
            self.enter("successor")
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
        s.outcome = result
        self.emit("game_over", None, winners=result["winners"], alive=living(s),
                  roles={str(seat): role for seat, role in enumerate(s.roles)},
                  chat=[{k: v for k, v in line.items() if k != "to"} for line in s.chat],
                  reason=result["reason"])
