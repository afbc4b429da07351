"""The bots of one room: one `bots.Bot` per seat a bot plays in a running game, next to the
room, with no socket and no gateway.

Input, by construction: a bot is fed what its seat's socket would be fed and nothing else. After
each durable write the room hands `sync` the write's stored events exactly as they go out (the
encoded items of `actors.room_data.encode_event`), and each bot observes the decoded `frame` of
every item whose `to` is None or holds its seat; a bot that starts (a seat turned bot-played, the
deal, a room loaded after a host restart) first sees its seat's view (`RoomData.view(seat)`, what
a welcome carries). This module is never handed the room's data or the game state: only the bot
seats, a function giving a seat's view, and the stored items.

Output: the bots' decisions go into the room's mailbox as that seat's commands (`act` and `chat`
frames through `Room._command`, the same handlers and rate limits as a socket's), when the bot
says they are due (`Bot.wake_at`, its seeded think time) on the room's clock. One bot's commands
are in flight at a time: the next bot is asked once they are answered, when the events they
caused were fed to every bot.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Sequence

import orjson

from actors.clock import Clock
from bots import Bot, Decision

log = logging.getLogger(__name__)


class BotSeats:
    def __init__(self, code: str, clock: Clock,
                 submit: Callable[[int, dict], asyncio.Future],
                 make_bot: Callable[[int, str, str], Bot] = Bot) -> None:
        """`submit(seat, frame)`: the room's mailbox, answering the command's ack or error frame;
        `make_bot(seat, seed, language)`: a new bot (tests wrap it to watch its input)."""
        self._code = code
        self._clock = clock
        self._submit = submit
        self.language = "en"  # of the bots' lines: the table's (the room keeps it current)
        self._make_bot = make_bot
        self._bots: dict[int, Bot] = {}
        self._failed: set[int] = set()  # seats whose bot hit a bug: not started again
        self._waiting: dict[int, int] = {}  # seat -> its commands not answered yet
        self._poked = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.sent = 0  # commands the bots sent
        self.refused: list[tuple[int, dict, dict]] = []  # (seat, frame, error frame)

    @property
    def seats(self) -> set[int]:
        return set(self._bots)

    @property
    def busy(self) -> bool:
        """A bot's command is in the room's mailbox, not answered yet."""
        return any(self._waiting.values())

    @property
    def settled(self) -> bool:
        """Nothing for the bots to do before their next wake: no command in flight, no write
        they have not looked at (a test moves its fake clock only then)."""
        return not self.busy and (self._task is None or not self._poked.is_set())

    def next_wake(self) -> int | None:
        """When a bot has something due next (None: nothing planned)."""
        return min((wake for seat, bot in self._bots.items()
                    if (wake := bot.wake_at()) is not None), default=None)

    def sync(self, seats: Collection[int], view: Callable[[int], dict],
             items: Sequence[bytes] = ()) -> None:
        """After a durable write: `seats` are played by bots now (none unless a game runs), `items`
        the write's stored events, `view(seat)` a seat's view as of that write."""
        for item in items:
            if not self._bots:
                break
            stored = orjson.loads(item)
            to = stored["to"]
            for seat, bot in list(self._bots.items()):
                if to is None or seat in to:
                    self._guard(seat, bot.observe, orjson.loads(stored["frame"]))  # its own copy
        # its player took it back, or the game is over: after this write's events
        for seat in [s for s in self._bots if s not in seats]:
            del self._bots[seat]
        for seat in sorted(set(seats) - self._bots.keys() - self._failed):
            bot = self._bots[seat] = self._make_bot(seat, self._code, self.language)
            self._guard(seat, bot.see, view(seat))
        if self._bots and self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"bots of {self._code}")
        self._poked.set()

    def restart(self, seats: Collection[int], view: Callable[[int], dict]) -> None:
        """The room reloaded its data (events it never saw may have landed): every bot anew."""
        self._bots.clear()
        self.sync(seats, view)

    def _guard(self, seat: int, step: Callable, *args):
        """A bot's own step; a bug in a bot costs its seat its bot (its prompts then run their
        time), never the room."""
        try:
            return step(*args)
        except Exception:
            log.exception("room %s: seat %d's bot failed; the seat plays on without it",
                          self._code, seat)
            self._bots.pop(seat, None)
            self._failed.add(seat)
            return []

    def close(self) -> None:
        self._bots.clear()
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        while True:
            self._poked.clear()
            now = self._clock.now()
            # One bot's commands at a time: each bot decides from every event the others'
            # commands caused (two bots asking for the vote at once, the second one's request
            # would find the discussion over).
            for seat, bot in list(self._bots.items()):
                if self.busy:
                    break
                for decision in self._guard(seat, bot.decide, now):
                    self._send(seat, decision)
            waits = [asyncio.ensure_future(self._poked.wait())]
            wake = None if self.busy else self.next_wake()
            if wake is not None:
                waits.append(asyncio.ensure_future(self._clock.sleep_until(wake)))
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()

    def _send(self, seat: int, decision: Decision) -> None:
        if decision.action is not None:
            frame = {"type": "act", "action": decision.action, "targets": list(decision.targets)}
        else:
            frame = {"type": "chat", "text": decision.text, "channel": decision.channel}
        self._waiting[seat] = self._waiting.get(seat, 0) + 1
        self.sent += 1
        self._submit(seat, frame).add_done_callback(
            lambda answered: self._answered(seat, frame, answered.result()))

    def _answered(self, seat: int, frame: dict, reply: dict) -> None:
        self._waiting[seat] -= 1
        if reply.get("type") == "error":
            self.refused.append((seat, frame, reply))
            log.info("room %s: seat %d's bot was refused %s: %s", self._code, seat, frame,
                     reply.get("message"))
        self._poked.set()
