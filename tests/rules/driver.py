"""A scripted table for scenario tests: a fixed deal, a fake clock, and the full event log."""

from rules import (SPECIAL_ROLES, GameState, Settings, act, advance, prompts_for, say,
                   start_game, view)
from rules.registry import CARDS
from rules.role import living_wolves

T0 = 1_700_000_000_000
# Seed 000's table of eight: the deal most rules tests play.
EIGHT_SEATS = ["werewolf", "seer", "witch", "hunter", "cupid", "villager", "werewolf", "villager"]
NAMES = ["Layla", "Omar", "Nour", "Sami", "Huda", "Karim", "Rana", "Tariq", "Dana", "Ziad",
         "Mona", "Fadi", "Salma", "Yusuf", "Rima", "Adel", "Lina", "Bassam"]


class Game:
    """Wraps the pure API; each call replaces `state` and appends to `log`."""

    def __init__(self, deal: list, seed: int = 7, durations: dict | None = None,
                 rules: dict | None = None, aside: list = ()):
        """`aside`: the cards dealt to no seat (the Thief's extra cards)."""
        specials = [r for r in SPECIAL_ROLES if r in deal]
        wolves = sum(CARDS[role].wolf for role in deal)
        self.settings = Settings.from_json({"roles": specials, "durations": durations or {},
                                            "rules": {"wolf_count": wolves, **(rules or {})}})
        self.now = T0
        self.state, self.log = start_game(NAMES[:len(deal)], self.settings, seed, self.now,
                                          deal=deal + list(aside))

    def seat(self, role: str) -> int:
        return self.state.roles.index(role)

    def seats(self, role: str) -> list:
        return [s for s, r in enumerate(self.state.roles) if r == role]

    def act(self, seat: int, action: str, targets: list) -> list:
        self.state, events = act(self.state, seat, action, targets, self.now)
        self.log += events
        return events

    def say(self, seat: int, text: str, channel: str | None = None) -> list:
        self.state, events = say(self.state, seat, text, self.now, channel)
        self.log += events
        return events

    def timeout(self) -> list:
        """Let the current phase run out."""
        self.now = self.state.deadline
        self.state, events = advance(self.state, self.now)
        self.log += events
        return events

    def view(self, seat: int) -> dict:
        return view(self.state, seat)

    def prompts(self, seat: int) -> list:
        return prompts_for(self.state, seat)

    @property
    def phase(self) -> str:
        return self.state.phase

    def events(self, kind: str) -> list:
        return [e for e in self.log if e["kind"] == kind]

    def deaths(self) -> list:
        """(seat, cause) of every death, the true cause where the table was told less."""
        hidden = self.state.memo.get("hidden_causes", {})
        return [(e["seat"], hidden.get(str(e["seat"]), e["cause"])) for e in self.events("death")]

    def public_deaths(self) -> list:
        """(seat, role, cause) as the table was told."""
        return [(e["seat"], e["role"], e["cause"]) for e in self.events("death")]

    # whole steps, for getting to the situation a test is about

    def night(self, *, link: list | None = None, inspect: int | None = None,
              protect: int | None = None, victim: int | None = None, save: bool = False,
              poison: int | None = None) -> None:
        """Play one night: every role that wakes acts as told, or lets its time run out."""
        if self.phase == "night.cupid":
            if link:
                self.act(self.seat("cupid"), "cupid.link", link)
            else:
                self.timeout()
        if self.phase == "night.seer":
            if inspect is not None:
                self.act(self.seat("seer"), "seer.inspect", [inspect])
            else:
                self.timeout()
        if self.phase == "night.guard":
            if protect is not None:
                self.act(self.seat("guard"), "guard.protect", [protect])
            else:
                self.timeout()
        assert self.phase == "night.wolves"
        if victim is not None:
            for wolf in living_wolves(self.state):
                self.act(wolf, "wolves.point", [victim])
        if self.phase == "night.wolves":  # no victim, or a pack step lasting its full time
            self.timeout()
        if self.phase == "night.witch":
            witch = self.seat("witch")
            if save:
                self.act(witch, "witch.save", [victim])
            if poison is not None:
                self.act(witch, "witch.poison", [poison])
            if self.phase == "night.witch":
                self.timeout()

    def living(self, role: str | None = None) -> list:
        return [s for s, a in enumerate(self.state.alive)
                if a and (role is None or self.state.roles[s] == role)]

    def elect(self, mayor: int | None) -> None:
        """Day 1 election where everyone alive votes for `mayor` (None: nobody votes)."""
        assert self.phase == "day.election"
        if mayor is None:
            self.timeout()
            return
        for seat in self.living():
            self.act(seat, "mayor.elect", [mayor])

    def ask_to_vote(self) -> None:
        assert self.phase == "day.discussion"
        self.timeout()

    def vote_out(self, target: int | None) -> None:
        """Discussion runs out, then everyone else votes `target` (None: nobody votes)."""
        self.ask_to_vote()
        assert self.phase == "day.vote"
        if target is None:
            self.timeout()
            return
        for seat in self.living():
            if seat != target and any(p["action"] == "vote" for p in self.prompts(seat)):
                self.act(seat, "vote", [target])
        if self.phase == "day.vote":  # the target's own vote is missing
            self.timeout()

    def tied_vote(self, a: int, b: int) -> None:
        """Discussion runs out; one vote each for a and b (not by the mayor, who counts twice),
        the others abstain."""
        self.ask_to_vote()
        first, second = [s for s in self.living() if s not in (a, b, self.state.mayor)][:2]
        self.act(first, "vote", [a])
        self.act(second, "vote", [b])
        self.timeout()

    def round_trip(self) -> GameState:
        return GameState.from_json(self.state.to_json())
