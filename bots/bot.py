"""A bot: one seat played from that seat's frames only.

Fed exactly what the seat is sent (`see(view)`: the welcome or a resync; `observe(event)`: each
event its audience hears, `to` stripped), it answers the open prompts (their actions and choices
are its only legal moves) and speaks structured lines. `decide(now)` returns what is due at
`now`; `wake_at()` says when to ask next. Each answer waits a human-like think time drawn, once
per prompt, from the bot's own seeded generator.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from bots import policy
from bots.claims import LANGUAGES, Claim, render
from bots.mind import Mind

STYLES = ("plausible", "random")
_MAX_LINES_A_DAY = 3
LATE_MS = 3_000  # a wolf who let the attacker point looks again this long before the deadline


@dataclass(frozen=True)
class Decision:
    """An answer to a prompt (`action`, `targets`) or a chat line (`claim`, its `text` in the
    bot's language, on `channel`); `think_ms`: how long the bot thought before it."""
    action: str | None = None
    targets: tuple[int, ...] = ()
    claim: Claim | None = None
    text: str | None = None
    channel: str | None = None
    think_ms: int = 0


class Bot:
    def __init__(self, seat: int, seed: int | str, language: str = "en",
                 style: str = "plausible"):
        if language not in LANGUAGES or style not in STYLES:
            raise ValueError(f"bot: language {language!r}, style {style!r}")
        self.seat, self.language, self.style = seat, language, style
        self.rng = random.Random(f"bot/{seed}/{seat}")
        self.mind = Mind(seat, self.rng)
        self.plans: dict[str, tuple[int, int]] = {}  # action -> (when, think ms)
        self.done: set[str] = set()  # prompts answered (or let be) since they opened
        self.said: set = set()  # claims said once a game, (day, claim) once a day
        self.line_at: int | None = None  # when the next line is due
        self.lines: dict[int, int] = {}  # day -> lines said
        self.fake: str | None = None  # the card a wolf pretends to hold
        # the day's vote looked at again before it closes, to end a tie (`policy.second_look`):
        # (when, think ms), once a vote
        self.look: tuple[int, int] | None = None
        self.looked = False

    # ------------------------------------------------------------------ input

    def see(self, view: dict) -> None:
        self.mind.see(view)
        self.done &= set(self.mind.prompts)
        if self.fake is None and self.style == "plausible":
            self.fake = policy.fake_claim(self.mind)

    def observe(self, event: dict) -> None:
        if event["kind"] in ("prompt", "prompt_closed"):
            self.plans.pop(event["action"], None)
            self.done.discard(event["action"])
            if event["action"] == "vote":
                self.look, self.looked = None, False
        if event["kind"] == "pointed" and event["seat"] != self.seat \
                and event["target"] not in (None, self.mind.my_point) \
                and self.style == "plausible":
            self.done.discard("wolves.point")  # the pack moved: look again at its proposal
        self.mind.observe(event)
        if event["kind"] in ("wolves", "traitor_pack") and self.fake is None \
                and self.style == "plausible":
            self.fake = policy.fake_claim(self.mind)

    # ------------------------------------------------------------------ output

    def wake_at(self) -> int | None:
        times = [at for at, _ in self.plans.values()]
        if self.line_at is not None:
            times.append(self.line_at)
        if self.look is not None:
            times.append(self.look[0])
        return min(times) if times else None

    def decide(self, now: int) -> list[Decision]:
        """What is due at `now`: at most one answer (it may close the seat's other prompts:
        ask again after its events) and the lines due."""
        mind = self.mind
        if mind.over:
            self.plans.clear()
            self.line_at = None
            return []
        for action, prompt in mind.prompts.items():
            if action not in self.plans and action not in self.done:
                self.plans[action] = self._plan(prompt, now)
        self.plans = {a: p for a, p in self.plans.items() if a in mind.prompts}
        decisions = self._lines(now)
        if self._second_look(now, decisions):
            return decisions
        due = sorted((at, action) for action, (at, _) in self.plans.items() if at <= now)
        for _, action in due:
            think = self.plans.pop(action)[1]
            self.done.add(action)
            prompt = mind.prompts[action]
            # a line goes before the answer that may end the phase (and the channel with it)
            if action == "wolves.point" and mind.pointed is None and self.style == "plausible" \
                    and prompt["choices"]:
                mind.pointed = policy.pack_proposal(mind, prompt)  # the first: the pack hears it
                decisions.append(self._line(Claim("attack", seat=mind.pointed), "wolves", think))
            deadline = prompt.get("deadline")
            mind.late = deadline is not None and deadline - now <= LATE_MS
            targets = self._choose(prompt)
            if targets is None:
                if action == "wolves.point" and deadline is not None and not mind.late \
                        and self.style == "plausible":
                    self.plans[action] = (deadline - LATE_MS, 0)  # the attacker may not point
                    self.done.discard(action)
                continue
            if action == "wolves.point" and targets:
                mind.my_point = targets[0]
            if action == "vote" and targets and self.style == "plausible":
                decisions.append(self._line(Claim("vote", seat=targets[0]), "day", think))
            decisions.append(Decision(action=action, targets=tuple(targets), think_ms=think))
            break
        return decisions

    # ------------------------------------------------------------------ helpers

    def _plan(self, prompt: dict, now: int) -> tuple[int, int]:
        rng = self.rng
        if prompt["action"] == "vote.request":
            think = rng.randint(15_000, 45_000)  # after the lines
        elif not prompt["choices"] or len(prompt["choices"]) == 1:
            think = rng.randint(1_000, 3_000)
        elif prompt["action"] == "wolves.point" and self.mind.pointed is not None:
            think = rng.randint(1_000, 3_000)  # follow the pack's proposal
        else:
            think = 2_000 + int(rng.random() ** 2 * 8_000)
        deadline = prompt.get("deadline")
        if deadline is not None:
            think = max(0, min(think, deadline - now - 1_000))
        return now + think, think

    def _second_look(self, now: int, decisions: list[Decision]) -> bool:
        """Plan the vote's second look once the seat has voted, a few seconds before the vote
        closes; when it is due, change the vote if that ends a tie. True: it changed."""
        prompt = self.mind.prompts.get("vote")
        if self.style != "plausible" or prompt is None or "vote" not in self.done \
                or self.looked:
            return False
        if self.look is None:
            deadline = prompt.get("deadline")
            if deadline is None or deadline - now < 1_500 or not self.mind.stalled():
                self.looked = True  # no time left for one, or no tie to fear
            else:
                at = max(now + 1_000, deadline - self.rng.randint(2_000, 6_000))
                self.look = (at, at - now)
            return False
        if self.look[0] > now:
            return False
        think = self.look[1]
        self.look, self.looked = None, True
        targets = policy.second_look(self.mind, prompt)
        if not targets:
            return False
        decisions.append(self._line(Claim("vote", seat=targets[0]), "day", think))
        decisions.append(Decision(action="vote", targets=tuple(targets), think_ms=think))
        return True

    def _choose(self, prompt: dict) -> list[int] | None:
        if self.style == "random":
            return policy.random_targets(prompt, self.rng)
        targets = policy.choose(self.mind, prompt, self.fake)
        if targets is not None:
            targets = [t for t in dict.fromkeys(targets) if t in prompt["choices"]]
            targets = targets[:prompt["max"]]
            if len(targets) < prompt["min"]:  # a policy short of targets: fill by lot
                rest = [c for c in prompt["choices"] if c not in targets]
                targets += self.rng.sample(rest, prompt["min"] - len(targets))
        return targets

    def _line(self, claim: Claim, channel: str, think: int) -> Decision:
        self.lines[self.mind.day] = self.lines.get(self.mind.day, 0) + 1
        return Decision(claim=claim, text=render(claim, self.language, self.mind.names),
                        channel=channel, think_ms=think)

    def _lines(self, now: int) -> list[Decision]:
        """The discussion's lines: one at a time, a few seconds apart, a few a day."""
        mind = self.mind
        talking = (self.style == "plausible" and mind.phase == "day.discussion"
                   and mind.alive[self.seat] and self.lines.get(mind.day, 0) < _MAX_LINES_A_DAY)
        if not talking:
            self.line_at = None
            return []
        if self.line_at is None:
            self.line_at = now + self.rng.randint(2_000, 8_000)
        if self.line_at > now:
            return []
        think = self.rng.randint(3_000, 10_000)
        self.line_at = now + think  # nothing to say yet: listen, and look again then
        for claim, daily in policy.lines(mind, self.fake):
            said = (mind.day, claim) if daily else claim
            if said not in self.said:
                self.said.add(said)
                return [self._line(claim, "day", think)]
        return []
