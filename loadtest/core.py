"""Pure, transport-free pieces of the load-test player: event-stream checks, prompt answers, chat
lines that carry their own send time. No Locust, gevent or socket import here, so this is unit
tested on its own and shared by every driver (Locust tables, latency script).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from bots import Bot

# Event kinds every seat receives (audience "all" in docs/protocol.md). Every seat that was
# connected from seq 1 (hello since=0) must hold exactly the same set of these.
PUBLIC_KINDS = frozenset({
    "joined", "presence", "settings", "game_started", "phase", "death", "mayor",
    "vote_requested", "voted", "vote_result", "game_over",
})

DAY_PHASES = frozenset({"day.election", "day.discussion", "day.vote", "day.tiebreak"})
WOLF_CHAT_PHASES = frozenset({"night.wolves"})
ASK_TO_VOTE = "vote.request"

CHAT_MARK = "lt"


@dataclass(frozen=True)
class LoadModel:
    """How a simulated table plays. `human`: people at a real table on the default phase
    durations; `rush`: the stress ramp (short phases, fast answers, more chat); `quickplay`:
    strangers who each press quick play and play their seat as `human` does."""

    name: str
    think: tuple[float, float]  # seconds before answering a prompt
    day_gap: tuple[float, float] | float  # seconds between two lines of a living player by day:
    night_gap: tuple[float, float] | float  # uniform (lo, hi), or the mean of a Poisson process
    ask_fraction: tuple[float, float]  # ask-to-vote sent this far into the discussion's time left
    durations: dict | None  # the stack's phase durations (None: the server's defaults)
    max_game: float  # seconds before a game counts as timed out
    # What one Locust user is: "table" (it creates a room and seats all its players) or "player"
    # (one stranger: home page, quick play, its own seat; a table forms from many such presses).
    arrives: str = "table"
    # Who answers prompts and talks: "random" (random targets, chat on the gaps above) or "bots"
    # (each seat a `bots.Bot` fed its socket's frames: `BotSeat`; think and chat are the bot's).
    brain: str = "random"

    def chat_gap(self, channel: str, rng: random.Random) -> float:
        gap = self.day_gap if channel == "day" else self.night_gap
        return rng.uniform(*gap) if isinstance(gap, tuple) else rng.expovariate(1.0 / gap)


# Phases short enough that a table finishes games within a few minutes, long enough for a
# realistic amount of chat by day (seconds; WW_DURATION_<PHASE> of the real stack).
RUSH_DURATIONS = {"cupid": 3, "seer": 3, "wolves": 5, "witch": 3, "election": 5,
                  "discussion": 15, "vote": 5, "tiebreak": 3, "hunter": 3, "successor": 3}

MODELS = {
    "human": LoadModel("human", think=(2.0, 15.0), day_gap=(20.0, 40.0), night_gap=(20.0, 40.0),
                       ask_fraction=(0.7, 0.95), durations=None,
                       max_game=3600),  # 18 seats at the default durations: ~20-45 min
    "rush": LoadModel("rush", think=(0.3, 2.0), day_gap=20.0, night_gap=10.0,
                      ask_fraction=(0.3, 0.9), durations=RUSH_DURATIONS, max_game=900),
    # Issue 23: the same players as `human`, but each one alone, seated by POST /api/quickplay.
    "quickplay": LoadModel("quickplay", think=(2.0, 15.0), day_gap=(20.0, 40.0),
                           night_gap=(20.0, 40.0), ask_fraction=(0.7, 0.95), durations=None,
                           max_game=3600, arrives="player"),
    # Issue 33: tables whose seats claim, accuse and vote like the bots, at the bots' pace.
    "bots": LoadModel("bots", think=(2.0, 15.0), day_gap=(20.0, 40.0), night_gap=(20.0, 40.0),
                      ask_fraction=(0.7, 0.95), durations=None, max_game=3600, brain="bots"),
}
TABLE_MODELS = sorted(name for name, m in MODELS.items() if m.arrives == "table")


def now_ms() -> float:
    return time.time() * 1000.0


def chat_text(seat: int, n: int, t_ms: float | None = None) -> str:
    """A chat line that carries its send time (wall clock ms: every reader is on this box)."""
    return f"{CHAT_MARK} {t_ms if t_ms is not None else now_ms():.3f} {seat} {n} hello table"


def parse_chat_text(text: str) -> tuple[float, int, int] | None:
    """(send ms, sender seat, n) for a load-test chat line, else None."""
    parts = text.split(" ", 4)
    if len(parts) < 4 or parts[0] != CHAT_MARK:
        return None
    try:
        return float(parts[1]), int(parts[2]), int(parts[3])
    except ValueError:
        return None


@dataclass
class StreamCheck:
    """One seat's received event stream: seqs must rise strictly (gaps allowed: private events)."""

    seqs: list = field(default_factory=list)
    kinds: dict = field(default_factory=dict)   # seq -> kind
    duplicated: int = 0
    reordered: int = 0

    def add(self, seq: int, kind: str) -> str | None:
        """Record one event; return "duplicated"/"reordered" when the stream breaks the contract."""
        if self.seqs and seq <= self.seqs[-1]:
            if seq in self.kinds:
                self.duplicated += 1
                return "duplicated"
            self.reordered += 1
            self.kinds[seq] = kind
            return "reordered"
        self.seqs.append(seq)
        self.kinds[seq] = kind
        return None

    def public(self, upto: int | None = None) -> set:
        return {s for s, k in self.kinds.items()
                if k in PUBLIC_KINDS and (upto is None or s <= upto)}


def lost_public_events(streams: dict, upto: int | None = None) -> dict:
    """seat -> sorted public seqs that seat missed while the others got them.

    `streams` maps seat -> StreamCheck for seats connected since seq 1 (hello since=0).
    """
    union: set = set()
    for st in streams.values():
        union |= st.public(upto)
    return {seat: sorted(union - st.public(upto)) for seat, st in streams.items()
            if union - st.public(upto)}


def compare_replay(live: StreamCheck, replay_seqs: list, upto: int) -> tuple[list, list]:
    """(missing live, extra live) seqs <= upto between a live stream and a since=0 replay."""
    a = {s for s in live.seqs if s <= upto}
    b = {s for s in replay_seqs if s <= upto}
    return sorted(b - a), sorted(a - b)


def choose_targets(prompt: dict, rng: random.Random) -> list:
    """A legal random answer: between min and max distinct choices, preferring to act (not pass)."""
    choices = list(prompt.get("choices") or [])
    lo = int(prompt.get("min") or 0)
    hi = int(prompt.get("max") if prompt.get("max") is not None else len(choices))
    hi = min(hi, len(choices))
    if hi <= 0:
        return []
    k = max(lo, min(hi, 1 if lo <= 1 else lo))
    return rng.sample(choices, k)


def answer_delay(prompt: dict, rng: random.Random, think: tuple[float, float], now_s: float,
                 ask_fraction: tuple[float, float] = (0.3, 0.9)) -> float:
    """Seconds to wait before answering: a think time, never past the prompt's deadline.

    Ask-to-vote is answered late in the discussion (a fraction of the time left) so the table talks.
    """
    deadline = prompt.get("deadline")
    left = (deadline / 1000.0 - now_s) if deadline else None
    if prompt.get("action") == ASK_TO_VOTE and left is not None and left > 0:
        return left * rng.uniform(*ask_fraction)
    d = rng.uniform(*think)
    if left is not None:
        d = max(0.0, min(d, left - 0.5))
    return d


@dataclass
class SeatState:
    """What the load-test player tracks of its own seat."""

    seat: int
    role: str | None = None
    wolf: bool = False
    alive: bool = True
    phase: str | None = None
    over: bool = False
    over_seq: int | None = None
    starts_at: int | None = None  # a public lobby's countdown: when it starts by itself (ms)
    prompts: dict = field(default_factory=dict)     # action -> prompt frame

    def on_event(self, ev: dict) -> None:
        kind = ev.get("kind")
        if kind == "role":
            self.role = ev.get("role")
            if self.role in ("werewolf", "wolf"):
                self.wolf = True
        elif kind == "wolves":
            self.wolf = True
        elif kind == "phase":
            self.phase = ev.get("phase")
        elif kind == "countdown":
            self.starts_at = ev.get("starts_at")
        elif kind == "death" and ev.get("seat") == self.seat:
            self.alive = False
        elif kind == "prompt":
            self.prompts[ev.get("action")] = ev
        elif kind == "prompt_closed":
            self.prompts.pop(ev.get("action"), None)
        elif kind == "game_over":
            self.over = True
            self.over_seq = ev.get("seq")
            self.prompts.clear()

    def chat_channel(self) -> str | None:
        """"day"/"wolves" if this seat would talk now in the load model, else None."""
        if self.over or not self.alive or self.phase is None:
            return None
        if self.phase in DAY_PHASES:
            return "day"
        if self.phase in WOLF_CHAT_PHASES and self.wolf:
            return "wolves"
        return None



def start_view(started: dict) -> dict:
    """A seat's view at the deal, from its socket's `game_started` frame: every seat alive and its
    card unknown (the seat's own `role` and night facts are the events that follow)."""
    seats = [{"seat": s["seat"], "name": s["name"], "alive": True, "role": None}
             for s in started["seats"]]
    return {"seats": seats, "me": {"role": None}, "phase": "start", "day": 1, "prompts": [],
            "outcome": None}


class BotSeat:
    """One load-test seat played by a `bots.Bot` fed exactly that socket's frames: the welcome's
    view when it is of a running game, else the view its `game_started` frame gives; then every
    event frame past the welcome's seq (those up to it are in the view, or before the deal)."""

    def __init__(self, seat: int, seed: int | str, language: str = "en"):
        self.bot: Bot = Bot(seat, seed, language)
        self.welcome_seq = 0
        self.playing = False  # a game's view was seen

    def welcome(self, frame: dict) -> None:
        self.welcome_seq = frame["seq"]
        if "phase" in frame["view"]:  # a running or finished game (a lobby has no phase)
            self.bot.see(frame["view"])
            self.playing = True

    def event(self, frame: dict) -> None:
        if frame["seq"] <= self.welcome_seq:
            return
        if frame["kind"] == "game_started":
            self.bot.see(start_view(frame))
            self.playing = True
        elif self.playing:
            self.bot.observe({k: v for k, v in frame.items() if k not in ("type", "seq")})

    @property
    def over(self) -> bool:
        return self.playing and self.bot.mind.over

    def wake_at(self) -> int | None:
        """When (epoch ms) the bot has something due; None: only a frame can give it one."""
        return self.bot.wake_at() if self.playing else None

    def due(self, now: int) -> list[dict]:
        """The client frames due at `now` (ms): chat lines and at most one act, in order."""
        if not self.playing:
            return []
        frames = []
        for d in self.bot.decide(now):
            if d.action is not None:
                frames.append({"type": "act", "action": d.action, "targets": list(d.targets)})
            else:
                frames.append({"type": "chat", "text": d.text, "channel": d.channel})
        return frames
