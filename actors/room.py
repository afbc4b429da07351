"""One room: its lobby, then its `rules` game, behind a single-writer mailbox.

The writer: mailbox, group commit, persist, timers, the game's `_act` and `_chat`; it
applies pure handlers of its data (actors.room_data), the lobby's, moderation's and presence's
(actors.lobby, actors.moderation, actors.presence). Replies are the host's to send (actors.inbox).

Lifecycle
---------
created   `Room.create` (new code) or `Room.load` (from the stored snapshot, after a host
          restart); either way the room first claims a new epoch, which fences older writers.
lobby     players join (seat = arrival order, seat 0 is the host); the host edits settings
          and starts once at least six are seated.
running   the rules game: commands (`act`, `chat`) and deadlines (one timer task sleeping until
          `rules.next_deadline`) go through the mailbox and apply one at a time, in order.
finished  the rules report an outcome, or the room ended by itself (actors/endings.py: empty
          for its idle time, too old, a game nobody plays). The final persist releases the room
          from its host and gives its keys a TTL; the room then closes.
broken    an unexpected exception while applying a command: the room stops answering (errors
          `internal`, then `room_closed`) and is released like a finished room. Its neighbours in
          the same host never notice.
disposed  `close()`: timer and mailbox stopped; whatever is still queued is answered `room_closed`
          (`internal`, retry, when a newer owner fenced the room: it goes on there).

Every change is persisted (snapshot + numbered events, one atomic `Store.persist`) before the
command that caused it is acknowledged (group commit: what the mailbox holds is applied in order,
made durable by one persist, then answered) and before the in-memory state moves on: readers
(`welcome`, `lobby`) only ever see what is durable. The persist publishes the acks it carries
before it returns here, so a reader who saw an ack reads through `durable()`, which waits for the
write in flight.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import orjson

import rules
from rules.events import check as check_events
from actors import endings
from actors.clock import Clock
from actors.inbox import RODE, Rider
from actors.bot_seats import BotSeats
from actors.lobby import LobbyTiming, _add_bot, _fill_and_deal, _join, _settings, _start, _table
from actors.moderation import (_bot_plays, _count_missed, _leave, _pass_for_gone, _remove_absent,
                               _remove_bot, _remove_seat, _shared_actions)
from actors.presence import _check_seat, _gateways_gone, _presence, _watch
from actors.ratelimit import TokenBucket
from actors.refusals import ROOM_MOVED
from actors.room_data import (EVENTS, WATCHER, Change, Refused, RoomData, _game_id, _gone_tokens,
                              _new_tokens, _only_logged, _with_ack, _with_game, encode_event,
                              error_frame)
from actors.store import FINAL, StaleEpoch, Store
from actors.tables import Kind, relist

log = logging.getLogger(__name__)

# Per seat and command kind: (burst, then per second). A vote changed back and forth, or settings
# sent in a loop, is one broadcast to every seat and one stored event each: none may flood a room.
RATE_LIMITS = {"chat": (5, 1.0), "act": (10, 2.0), "settings": (30, 2.0), "start": (5, 0.5),
               "table": (5, 0.2), "leave": (2, 0.1), "remove": (5, 0.1), "add_bot": (20, 2.0),
               "remove_bot": (20, 2.0), "round_done": (5, 1.0), "dawn_shown": (5, 1.0)}
STORAGE_RETRY_MS = 1000  # after a failed write, when the room tries again by itself
GROUP_MAX = 64  # requests applied together and made durable by one persist
PROOF_CHARS = 16  # of a seat's token hash, sent with each request: a seat that moved is refused


# Handlers are pure: (data, now, *args) -> (reply, Change | None), but for the rate limits
# `_command` is handed (kept in memory, not room state). They raise Refused or rules.RulesError
# to refuse, anything else is a bug that breaks the room. A command's own handler (here,
# actors.lobby, actors.moderation) takes (data, now, seat, frame[, timing]) -> Change.


def wakeup(data: RoomData, idle_close: int | None,
           lobby_idle_close: int | None = None, timing: LobbyTiming | None = None) -> int | None:
    """When the room's timer must fire: the game's next deadline, or the end of an empty table
    (an empty lobby closes after `lobby_idle_close`, sooner than an abandoned game)."""
    times = []
    if data.status == "running" and (deadline := rules.next_deadline(data.game)) is not None:
        times.append(deadline)
    if data.status == "lobby" and data.starts_at is not None:
        times.append(data.starts_at)
    if data.status == "lobby" and data.public and timing is not None:
        times += [p.absent_since + timing.absent for p in data.players
                  if p.absent_since is not None]
    if data.status == "lobby" and (closes := endings.lobby_closes(data, timing)) is not None:
        times.append(closes)
    if (ends := endings.game_closes(data, timing)) is not None:
        times.append(ends[0])
    idle_close = endings.idle_limit(data, idle_close, lobby_idle_close)
    if idle_close is not None and data.idle_since is not None and data.status not in FINAL:
        times.append(data.idle_since + idle_close)
    return min(times, default=None)


def _tick(data: RoomData, now: int, idle_close: int | None, lobby_idle_close: int | None,
          timing: LobbyTiming):
    idle_close = endings.idle_limit(data, idle_close, lobby_idle_close)
    if (idle_close is not None and data.idle_since is not None
            and now >= data.idle_since + idle_close):
        # Nobody has been at the table for idle_close: close it, so it frees its host slot.
        return None, Change(replace(data, status="finished"), [endings.closed("idle")])
    if data.status == "lobby" and (closes := endings.lobby_closes(data, timing)) is not None \
            and now >= closes:  # whoever is connected is told, not left in a dead lobby
        return None, Change(replace(data, status="finished"), [endings.closed("max_age")])
    if (ends := endings.game_closes(data, timing)) is not None and now >= ends[0]:
        # Nobody plays it, or it lasted too long: it ends whoever is connected, freeing its slot.
        return None, Change(replace(data, status="finished"), [endings.closed(ends[1])])
    if data.status == "lobby":
        change = _remove_absent(data, now, timing) if data.public else None
        current = data if change is None else change.data
        if current.status != "lobby" or current.starts_at is None or current.starts_at > now:
            return None, change
        dealt = _fill_and_deal(current, now)
        return None, dealt if change is None else Change(dealt.data, change.events + dealt.events,
                                                          change.seated)
    deadline = rules.next_deadline(data.game) if data.status == "running" else None
    if deadline is None or deadline > now:
        return None, None  # a stale timer: a command moved the deadline meanwhile
    missed: list[dict] = []
    if data.public:
        data, missed = _count_missed(data)
    game, events = rules.advance(data.game, now=now)
    after = rules.next_deadline(game)
    if after is not None and after <= now and rules.outcome(game) is None:
        raise RuntimeError(f"rules.advance left deadline {after} due at {now}")
    data = endings.waits_untimed(data, _with_game(data, game), now)
    if data.public:
        data, passed = _pass_for_gone(data, now)
        events += passed
    return None, Change(data, missed + events)


def _command(data: RoomData, now: int, seat: int, frame: dict, received: int | None,
             take_token: Callable[[int, str, int], bool], timing: LobbyTiming,
             proof: str | None = None, by_bot: bool = False):
    """`by_bot`: the seat's bot sent it (actors.bot_seats), not one of the seat's sockets."""
    _check_seat(data, seat)
    if proof is not None and not data.players[seat].token_hash.startswith(proof):
        raise Refused("not_authenticated", "this seat is not yours any more: reconnect")
    if by_bot != data.players[seat].bot:
        if by_bot:  # decided before its player took the seat back
            raise Refused("not_your_turn", "a bot does not play this seat any more")
        if data.status == "running" and frame.get("type") != "leave":
            # The player is back: the seat is theirs again, whatever becomes of the command.
            data, events = _bot_plays(data, seat, False)
            try:
                reply, change = _command(data, now, seat, frame, received, take_token, timing)
            except (Refused, rules.RulesError) as e:
                return error_frame(frame.get("id"), e.code, str(e)), Change(data, events)
            if change is None:
                return reply, Change(data, events)
            change.events = events + change.events
            return reply, change
    frame_id = frame.get("id")
    kind = frame.get("type")
    key = None if frame_id is None else frame_key(frame)
    if key is not None and key in data.acked.get(seat, ()):
        return {"type": "ack", "id": frame_id}, None
    handler = _COMMANDS.get(kind)
    if handler is None:
        raise Refused("bad_frame", f"unknown command type {kind!r}")
    # After the retry check, so a command already applied is acked again; before the rules, so
    # every command sent counts, refused or not. Counted when the gateway read it: lines that
    # waited together in a queue were not sent together.
    if not take_token(seat, kind, now if received is None else min(now, received)):
        raise Refused("rate_limited", f"too many {kind} commands, slow down")
    change = handler(data, now, seat, frame, *((timing,) if kind in _TAKES_TIMING else ()))
    if key is not None:
        change.data = replace(change.data, acked=_with_ack(change.data.acked, seat, key))
        change.ack = (seat, key)
    return {"type": "ack", "id": frame_id}, change


def frame_key(frame: dict) -> str:
    """Identifies a retry: the same id *and* content. A client that restarts its ids at 1 (a page
    reload) sends new frames with old ids, and those must not be taken for retries."""
    try:
        canonical = orjson.dumps(frame, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as e:  # e.g. an integer beyond 64 bits
        raise Refused("bad_frame", f"unreadable frame: {e}") from None
    return hashlib.blake2b(canonical, digest_size=8).hexdigest()


def _running(data: RoomData) -> None:
    if data.status != "running":
        raise Refused("not_your_turn", "the game has not started")


def _act(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    _running(data)
    action, targets = frame.get("action"), frame.get("targets", [])
    if not isinstance(action, str) or not isinstance(targets, list) or not all(
            type(t) is int for t in targets):
        raise Refused("bad_frame", "act needs an action name and a list of seats")
    shared = action in _shared_actions(data.game)
    game, events = rules.act(data.game, seat=seat, action=action, targets=targets, now=now)
    before, data = data, _with_game(data, game)
    if shared and endings.counts(data, seat):
        data = endings.heard(data, now, before.game.day)
    else:
        data = endings.waits_untimed(before, data, now)
    # Only an answer to a shared prompt says the seat is back (a night act is secret); a bot's
    # says nothing of its player: the seat stays away until its player is back.
    if shared and data.public and not data.players[seat].bot:
        data = replace(data, acted=data.acted | {seat})
        if data.players[seat].missed:
            player = data.players[seat]
            if player.away:
                events = [{"kind": "away", "to": None, "seat": seat, "away": False}, *events]
            players = list(data.players)
            players[seat] = replace(player, missed=0)
            data = replace(data, players=tuple(players))
    return Change(data, events)


def _chat(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    _running(data)
    text = frame.get("text")
    if not isinstance(text, str):
        raise Refused("bad_frame", "chat needs a text")
    game, events = rules.say(data.game, seat=seat, text=text, now=now, channel=frame.get("channel"))
    if events[0]["to"] is None and data.played_day != game.day and endings.counts(data, seat):
        data = replace(data, played_day=game.day)  # the day's first line heard (time: `_heard_at`)
    return Change(_with_game(data, game), events)


def _round_done(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    """One phone: it has called every living player for the night step (rules.round_done)."""
    _running(data)
    phase, day = frame.get("phase"), frame.get("day")
    if not isinstance(phase, str) or type(day) is not int:
        raise Refused("bad_frame", "round_done needs the night step's phase and day")
    game, events = rules.round_done(data.game, now=now, phase=phase, day=day)
    return Change(endings.waits_untimed(data, _with_game(data, game), now), events)


def _dawn_shown(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    """One phone: it shows the dawn; the day's clock starts (rules.dawn_shown)."""
    _running(data)
    day = frame.get("day")
    if type(day) is not int:
        raise Refused("bad_frame", "dawn_shown needs the day")
    game, events = rules.dawn_shown(data.game, now=now, day=day)
    return Change(_with_game(data, game), events)


_COMMANDS: dict[str, Callable[..., Change]] = {
    "act": _act, "chat": _chat, "settings": _settings, "start": _start, "table": _table,
    "leave": _leave, "remove": _remove_seat, "add_bot": _add_bot, "remove_bot": _remove_bot,
    "round_done": _round_done, "dawn_shown": _dawn_shown,
}
_TAKES_TIMING = frozenset(("table", "leave", "remove", "remove_bot"))


class Room:
    def __init__(self, data: RoomData, *, epoch: int, host: str, store: Store, clock: Clock,
                 on_close: Callable[[Room], None] | None = None, idle_close: int | None = None,
                 lobby_idle_close: int | None = None,
                 on_persist: Callable[[float, int], None] | None = None, chat_stored: int = 0,
                 timing: LobbyTiming = LobbyTiming(),
                 make_bot: Callable[..., Any] | None = None) -> None:
        """`make_bot`: how the room's bots are made (`actors.bot_seats.BotSeats`; tests)."""
        self.data = data  # committed: durable in the store
        self._timing = timing  # a public lobby's countdown and patience with absent seats
        # The store's chat list: which game's lines it holds and how many (each persist adds the
        # new ones).
        self._chat_stored = (_game_id(data), chat_stored)
        self._on_persist = on_persist  # (seconds, requests) of every persist: the host's metrics
        self._idle_close = idle_close  # ms an empty table stays open; None: forever
        self._lobby_idle_close = lobby_idle_close  # the same for a lobby (shorter)
        self.epoch = epoch
        self.host = host
        self._store = store
        self._clock = clock
        self._on_close = on_close
        self._mailbox: asyncio.Queue = asyncio.Queue()
        self._closed = False
        self._fenced = False  # a newer owner's epoch refused a write: this Room stops
        self._resync = False  # a write failed ambiguously: reload the snapshot before the next one
        self._writing: asyncio.Future | None = None  # the persist in flight, done when it returns
        self._armed: int | None = None
        self._limits: dict[tuple[int, str], TokenBucket] = {}  # in memory: a restart refills them
        self._timer: asyncio.Task | None = None
        self._worker = asyncio.create_task(self._run(), name=f"room {data.code}")
        # The seats bots play, beside the room: fed the stored events after each durable write.
        self.bots = BotSeats(data.code, clock, self._bot_command,
                             **({"make_bot": make_bot} if make_bot else {}))
        self._sync_bots()
        self._arm()

    @property
    def code(self) -> str:
        return self.data.code

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def backlog(self) -> int:
        """Requests waiting in the mailbox (the host's mailbox-depth metric)."""
        return self._mailbox.qsize()

    @classmethod
    async def create(cls, code: str, *, settings: rules.Settings, host: str, store: Store,
                     clock: Clock, kind: Kind | None = None, **options) -> Room:
        """A new room (`kind`: a public table of that preset and language, listed once its
        creator's seat is stored); `options`: the constructor's keywords."""
        epoch = await store.claim(code, host)
        data = RoomData(code=code, settings=settings, idle_since=clock.now(), opened_at=clock.now(),
                        public=kind is not None, language=kind.language if kind else None)
        return cls(data, epoch=epoch, host=host, store=store, clock=clock, **options)

    @classmethod
    async def load(cls, code: str, *, host: str, store: Store, clock: Clock,
                   **options) -> Room | None:
        """Take the room over from its snapshot (None if there is nothing live to take over)."""
        stored = await store.load(code)
        if stored is None:
            return None
        data = RoomData.from_stored(stored)
        if data.status in FINAL:
            return None
        epoch = await store.claim(code, host)
        return cls(data, epoch=epoch, host=host, store=store, clock=clock,
                   chat_stored=len(stored.chat), **options)

    # -- the API a host calls --------------------------------------------------------------

    async def join(self, name: str, token_hash: str, promised: bool = False,
                   address: str = "") -> dict:
        """{"seat": n}, or {"error": code, "message": ...}. `promised`: a quick-play press
        already counted this seat in the table index; `address`: the joiner's mark
        (`actors.client.address_mark`, "" for none)."""
        return await self._submit(_join, (name, token_hash, promised, address, self._timing),
                                  lambda code, message: {"error": code, "message": message})

    async def command(self, seat: int, frame: dict, received: int | None = None,
                      proof: str | None = None, rider: Rider | None = None):
        """The ack or error frame answering `frame` (act, chat, settings, start, table, leave,
        remove); `received`: when a gateway read it (wall clock ms), for the rate limit; `proof`:
        the start of the seat's token hash (refused if the seat is another player's now).
        `rider` (actors.inbox, taken as it is): if the write publishes events, the reply goes out
        in their message and this returns RODE."""
        if not isinstance(frame, dict):
            return error_frame(None, "bad_frame", "a command is a JSON object")
        frame_id = frame.get("id")
        return await self._submit(_command, (seat, frame, received, self._take_token,
                                             self._timing, proof),
                                  lambda code, message: error_frame(frame_id, code, message), rider)

    def _sync_bots(self, items: Sequence[bytes] = (), restart: bool = False) -> None:
        """Feed the bots what the durable write `items` told their seats (actors.bot_seats)."""
        data = self.data
        self.bots.language = data.language or "en"  # a private table's lines: English
        if restart:
            self.bots.restart(data.bot_seats(), data.view)
        else:
            self.bots.sync(data.bot_seats(), data.view, items)

    def _bot_command(self, seat: int, frame: dict) -> asyncio.Future:
        """A command of the seat's bot (actors.bot_seats): a socket's way, from the room."""
        return self._submit(_command, (seat, frame, None, self._take_token, self._timing, None,
                                       True),
                            lambda code, message: error_frame(None, code, message))

    def _take_token(self, seat: int, kind: str, now: int) -> bool:
        """The rate limit of a seat's commands of one kind, whichever gateways its sockets use."""
        bucket = self._limits.get((seat, kind))
        if bucket is None:
            burst, rate = RATE_LIMITS[kind]
            bucket = self._limits[(seat, kind)] = TokenBucket(rate, burst, now / 1000)
        return bucket.take(now / 1000)

    async def presence(self, seat: int, gateway: str, connected: bool) -> None:
        """Gateway process `gateway` has gained its first / lost its last socket of `seat`."""
        await self._submit(_presence, (seat, gateway, connected), lambda code, message: None)

    def gateways(self) -> set[str]:
        return {g for p in self.data.players for g in p.gateways} | set(self.data.watchers)

    async def watch(self, gateway: str, count: int) -> None:
        """Gateway process `gateway` now holds `count` spectator sockets of this room."""
        await self._submit(_watch, (gateway, count), lambda code, message: None)

    async def gateways_gone(self, gone: frozenset) -> None:
        """These gateway processes are dead: none of their sockets is here any more."""
        await self._submit(_gateways_gone, (gone,), lambda code, message: None)

    async def durable(self) -> RoomData:
        """The committed state once the write in flight (if any) has returned: its acks may
        already be out, and whoever read one must then read what it acknowledged."""
        if self._writing is not None:
            await asyncio.shield(self._writing)
        return self.data

    def welcome(self, seat: int, proof: str | None = None) -> dict:
        """The view of `seat` at exactly seq S (the committed state), as {"seq": S, "view": ...}
        (`RoomData.welcome`: the end of the chat); {"moved": True} if `proof` (the start of its
        token hash) is not that seat's any more."""
        data = self.data
        if proof is not None and seat != WATCHER and not (
                0 <= seat < len(data.players) and data.players[seat].token_hash.startswith(proof)):
            return {"moved": True}
        return data.welcome(seat)

    def close(self) -> None:
        """Dispose: stop the timer and the mailbox; queued requests are answered room_closed, or,
        if a newer owner fenced this Room (its epoch), told to retry: the room goes on there,
        and a retried command is acknowledged once (its frame key)."""
        if self._closed:
            return
        self._closed = True
        self._set_timer(None)
        self.bots.close()
        if asyncio.current_task() is not self._worker:
            self._worker.cancel()
        while not self._mailbox.empty():
            _, _, on_error, future, _ = self._mailbox.get_nowait()
            if not future.done():
                future.set_result(self._closed_answer(on_error))
        if self._on_close is not None:
            self._on_close(self)

    def _closed_answer(self, on_error):
        if self._fenced:
            return on_error("internal", ROOM_MOVED)
        return on_error("room_closed", "the room is closed")

    # -- the single writer -----------------------------------------------------------------

    def _submit(self, handler, args: tuple, on_error,
                rider: Rider | None = None) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        if self._closed:
            future.set_result(self._closed_answer(on_error))
        else:
            self._mailbox.put_nowait((handler, args, on_error, future, rider))
        return future

    async def _run(self) -> None:
        while True:
            group = [await self._mailbox.get()]
            while len(group) < GROUP_MAX and not self._mailbox.empty():
                group.append(self._mailbox.get_nowait())
            try:
                replies = await self._apply_group(group)
            except asyncio.CancelledError:  # closed mid-command
                for _, _, on_error, future, _ in group:
                    if not future.done():
                        future.set_result(self._closed_answer(on_error))
                raise
            except Exception:  # the loop must outlive any bug; the room does not
                log.exception("room %s broke in its mailbox", self.code)
                await self._break()
                replies = [on_error("internal", "this room hit an internal error and is closed")
                           for _, _, on_error, _, _ in group]
            for (_, _, _, future, _), reply in zip(group, replies):
                if not future.done():
                    future.set_result(reply)
            if self._fenced or self.data.status in FINAL:
                self.close()
                return

    async def _apply_group(self, group: list) -> list:
        """Group commit: apply every request the mailbox held, one after the other, then make them
        durable with ONE persist (snapshot + all their events) before any is answered. Under load
        a room pays one snapshot write per mailbox drain instead of one per command."""
        if self._resync and not await self._reload():
            self._retry_later()
            return [on_error("internal", "storage unavailable, retry")
                    for _, _, on_error, _, _ in group]
        committed = data = self.data
        events: list[bytes] = []
        logged: list[dict] = []  # what `with_logged` reads of each event: its seq, its ack
        replies: list = []
        broken = False
        seated = 0
        for handler, args, on_error, _, _ in group:
            if broken:
                replies.append(on_error("internal",
                                        "this room hit an internal error and is closed"))
                continue
            if data.status in FINAL:
                replies.append(on_error("room_closed", "the room is closed"))
                continue
            try:
                reply, change = handler(data, self._clock.now(), *args)
                if change is not None:
                    seq = data.seq
                    checked = check_events(EVENTS, change.events)
                    for i, event in enumerate(checked, 1):
                        ack = change.ack if i == 1 else None  # carried by its first event
                        events.append(encode_event(seq + i, event, ack))
                        logged.append({"seq": seq + i} if ack is None
                                      else {"seq": seq + i, "ack": ack})
                    data = replace(change.data, seq=seq + len(checked))
                    seated += change.seated
            except Refused as e:
                reply = on_error(e.code, str(e))
            except rules.RulesError as e:
                reply = on_error(e.code, str(e))
            except Exception:  # a bug: what came before it is still committed, then the room breaks
                log.exception("room %s broke applying %s%r", data.code, handler.__name__, args)
                broken = True
                reply = on_error("internal", "this room hit an internal error and is closed")
            replies.append(reply)
        if data is not committed:
            riders = []
            # Not the last write: its store also releases the room's host slot, after the
            # script, and an ack still means all of that is done.
            if events and data.status not in FINAL:
                riders = [(rider, reply) for (_, _, _, _, rider), reply in zip(group, replies)
                          if rider is not None]
            failure = await self._persist(committed, data, events, len(group), riders, logged)
            if failure is not None:
                return [failure(on_error) for _, _, on_error, _, _ in group]
            await self._reindex(committed, data, seated)
            self._sync_bots(events)
            if riders:
                replies = [RODE if rider is not None else reply
                           for (_, _, _, _, rider), reply in zip(group, replies)]
        if broken:
            await self._break()
        return replies

    async def _persist(self, old: RoomData, new: RoomData, events: list[bytes], requests: int,
                       riders: Sequence[tuple[Rider, Any]] = (), logged: Sequence[dict] = ()):
        """Store `new`; None once durable, else how to answer every request of the group.
        `riders`: replies that go out with the events (`Store.persist`); `logged`: the events'
        seqs and acks: when they and the new chat lines are all that changed (chat lines, mostly),
        the snapshot stays as it was and a load rebuilds `new` from it and the log's tail."""
        started = time.perf_counter()
        lines = [] if new.game is None else new.game.chat
        game = _game_id(new)
        stored_game, chat_from = self._chat_stored
        if game != stored_game or len(lines) < chat_from:  # another game: its chat starts afresh
            chat_from = None
        writing = self._writing = asyncio.get_running_loop().create_future()
        try:
            await self._store.persist(old.code, epoch=self.epoch, host=self.host,
                                      snapshot=(None if _only_logged(old, new, logged)
                                                else new.to_json()),
                                      status=new.status,
                                      first_seq=old.seq + 1, events=events,
                                      tokens=_new_tokens(old, new), untokens=_gone_tokens(old, new),
                                      chat_from=chat_from, riders=riders,
                                      chat=[orjson.dumps(line) for line in lines[chat_from or 0:]])
        except StaleEpoch:
            log.warning("room %s: epoch %d fenced by a newer owner; stopping", old.code, self.epoch)
            self._fenced = True  # closed once this group is answered: before the queued ones
            return self._closed_answer
        except Exception as e:  # storage down, or a write we cannot tell landed: reload first
            log.warning("room %s: persist failed (%r); will reload before the next write",
                        old.code, e)
            self._resync = True
            self._retry_later()
            return lambda on_error: on_error("internal", "storage unavailable, retry")
        finally:
            if self._on_persist is not None:
                self._on_persist(time.perf_counter() - started, requests)
            self._writing = None
            writing.set_result(None)  # after `self.data = new` below: no await comes between
        self.data = new
        self._chat_stored = (game, len(lines))
        self._arm()
        return None

    async def _reindex(self, old: RoomData, new: RoomData, seated: int) -> None:
        """Tell the public tables' index what this durable change did to the table's listing
        (`RoomData.listing`; `actors.tables.relist` decides the writes). Before the replies, so
        a page that lists tables after its join sees it; a failure only leaves the list stale (a
        press that finds a table started or full moves on, see `RoomClient.quick_play`)."""
        before, after = old.listing(), new.listing()
        if before is None and after is None:
            return
        try:
            await relist(self._store.tables, new.code, before, after, seated, self._clock.now())
        except Exception as e:
            log.warning("room %s: the table index was not updated (%r)", new.code, e)

    async def _reload(self) -> bool:
        try:
            stored = await self._store.load(self.code)
            if stored is None and self.data.seq == 0:
                # A new room whose first write (its creator's seat) never landed: what it holds
                # is all there is, and the creator's retry seats them.
                data, chat_stored = self.data, 0
            else:
                data, chat_stored = RoomData.from_stored(stored), len(stored.chat)
            if data.seq > self.data.seq:  # a write whose outcome we never learnt did land
                await self._store.publish_stored(self.code, self.data.seq)
                if data.status in FINAL:  # the room's last write: its release may not have run
                    await self._store.release(self.host, self.code)
        except Exception as e:
            log.warning("room %s: reload failed (%r)", self.code, e)
            return False
        self.data = data
        self._chat_stored = (_game_id(data), chat_stored)
        self._resync = False
        self._sync_bots(restart=True)
        self._arm()
        return True

    async def _break(self) -> None:
        """Persist status `broken` (no events) so the directory and every gateway see it."""
        broken = replace(self.data, status="broken")
        try:
            await self._store.persist(self.code, epoch=self.epoch, host=self.host,
                                      snapshot=broken.to_json(), status="broken",
                                      first_seq=broken.seq + 1, events=[], tokens={}, untokens=[],
                                      chat_from=self._chat_stored[1], chat=[])
        except Exception:
            log.exception("room %s: could not store its broken status", self.code)
        self.data = broken
        self._set_timer(None)

    # -- the timer -------------------------------------------------------------------------

    def _arm(self) -> None:
        self._set_timer(wakeup(self.data, self._idle_close, self._lobby_idle_close, self._timing))

    def _retry_later(self) -> None:
        """After a failed write or reload, tick again soon: a deadline whose write failed must
        still fire once storage is back, even if no seat sends anything (the tick reloads first)."""
        self._set_timer(self._clock.now() + STORAGE_RETRY_MS)

    def _set_timer(self, deadline: int | None) -> None:
        if deadline == self._armed:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._armed = deadline
        self._timer = None if deadline is None else asyncio.create_task(self._sleep(deadline))

    async def _sleep(self, deadline: int) -> None:
        await self._clock.sleep_until(deadline)
        self._armed = None
        self._timer = None
        self._submit(_tick, (self._idle_close, self._lobby_idle_close, self._timing),
                     lambda code, message: None)
