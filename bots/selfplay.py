"""Whole games of bots through the engine alone, each bot fed its seat's frames as a room would
send them: the benchmark's and the tests' table."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bots.bot import Bot, Decision
from bots.mind import PACK_SIDE, WOLF_CARDS
from rules import (GameState, RulesError, Settings, act, advance, next_deadline, outcome,
                   roles_in_play, say, start_game, view)

START = 1_700_000_000_000
NAMES = ("Layla", "Omar", "Zoe", "Minh", "Wei", "Sara", "Karim", "Lan", "Hana", "Yusuf", "Mai",
         "Chen", "Nour", "Tuan", "Li", "Amira", "Bao", "Jun", "Rania", "Quang")
# the win conditions' side; any other reason is its own side (the Piper, the lovers...)
SIDES = {"no_wolves_alive": "village", "only_wolves_alive": "wolves",
         "village_side_killed": "wolves", "wolves_at_parity": "wolves"}


@dataclass
class Game:
    state: GameState
    bots: list[Bot]
    dealt: list[str]  # the cards as dealt (the Thief's swap changes some)
    refused: list[tuple[int, Decision, str]] = field(default_factory=list)
    commands: int = 0

    @property
    def side(self) -> str | None:
        result = outcome(self.state)
        return None if result is None else SIDES.get(result.reason, result.reason)

    def seer_found_wolf(self) -> bool | None:
        """Whether the dealt Seer read a wolf (None: no Seer in play)."""
        seers = [s for s, card in enumerate(self.dealt) if card == "seer"]
        if not seers:
            return None
        readings = self.bots[seers[0]].mind.readings  # (the Piper and the Fox read bad too)
        return any(bad and self.state.roles[s] in WOLF_CARDS for s, bad in readings.items())


def village_or_wolves(village: str, wolves: str) -> Callable[[str], str]:
    """The style of a seat by its dealt card: the pack's side or everyone else."""
    return lambda card: wolves if card in PACK_SIDE else village


def play(settings: Settings, players: int, seed: int, style: Callable[[str], str] | None = None,
         language: str = "en", trace: Callable[[int, str, object], None] | None = None,
         bot_seed: int | None = None, started: GameState | None = None,
         max_commands: int = 50_000) -> Game:
    """One game of `players` bots (style by dealt card; plausible by default; the bots' seed is
    the game's unless given). `trace(seat, what, item)` is told each bot's input (`view`,
    `event`, `decide` at a time) and output (`decision`) in order. `started`: the game just
    dealt, to play instead of dealing one."""
    now = START
    state = started or start_game(list(NAMES[:players]), settings, seed, now)[0]
    style = style or village_or_wolves("plausible", "plausible")
    bots = [Bot(s, seed if bot_seed is None else bot_seed, language, style(card))
            for s, card in enumerate(state.roles)]
    game = Game(state, bots, list(state.roles))
    # what a room's view adds to the seat's: the deal the table was told and its settings
    # (actors/room_data.py, the lobby part of every view)
    told = {"roles_in_play": roles_in_play(len(state.roles), settings),
            "settings": settings.to_json()}
    for bot in bots:
        frame = {**view(state, bot.seat), **told}
        if trace:
            trace(bot.seat, "view", frame)
        bot.see(frame)

    def deliver(events: list[dict]) -> None:
        for event in events:
            frame = {k: v for k, v in event.items() if k != "to"}
            for bot in bots:
                if event["to"] is None or bot.seat in event["to"]:
                    if trace:
                        trace(bot.seat, "event", frame)
                    bot.observe(frame)

    while game.state.phase != "over" and game.commands < max_commands:
        acted = True
        while acted and game.state.phase != "over" and game.commands < max_commands:
            acted = False
            for bot in bots:
                if trace:
                    trace(bot.seat, "decide", now)
                for decision in bot.decide(now):
                    if trace:
                        trace(bot.seat, "decision", decision)
                    game.commands += 1
                    try:
                        if decision.action is not None:
                            game.state, events = act(game.state, bot.seat, decision.action,
                                                     list(decision.targets), now)
                        else:
                            assert decision.text is not None
                            game.state, events = say(game.state, bot.seat, decision.text, now,
                                                     channel=decision.channel)
                    except RulesError as error:
                        game.refused.append((bot.seat, decision, str(error)))
                        continue
                    deliver(events)
                    acted = True
        times = [t for t in (bot.wake_at() for bot in bots) if t is not None]
        deadline = next_deadline(game.state)
        if deadline is not None:
            times.append(deadline)
        if not times:
            break  # nobody will act and no deadline comes: stuck (the caller sees no outcome)
        now = max(now, min(times))
        if deadline is not None and deadline <= now:
            game.state, events = advance(game.state, now)
            deliver(events)
    return game
