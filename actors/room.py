"""One room: its lobby, then its `rules` game, behind a single-writer mailbox.

Lifecycle
---------
created   `Room.create` (new code) or `Room.load` (from the stored snapshot, after a host
          restart); either way the room first claims a new epoch, which fences older writers.
lobby     players join (seat = arrival order, seat 0 is the host); the host edits settings
          and starts once at least six are seated.
running   the rules game: commands (`act`, `chat`) and deadlines (one timer task sleeping until
          `rules.next_deadline`) go through the mailbox and apply one at a time, in order.
finished  the rules report an outcome, or nobody has been connected for `idle_close` (an abandoned
          lobby or game must not hold its host slot forever; an empty lobby: `lobby_idle_close`),
          or a lobby or a game reached its maximum age, or a game nobody plays ended (`unplayed`,
          see `_game_closes`) with sockets connected or not.
          The final persist releases the room from its host and gives
          its keys a TTL; the room then closes.
broken    an unexpected exception while applying a command: the room stops answering (errors
          `internal`, then `room_closed`) and is released like a finished room. Its neighbours in
          the same host never notice.
disposed  `close()`: timer and mailbox stopped; whatever is still queued is answered `room_closed`.

Every change is persisted (snapshot + numbered events, one atomic `Store.persist`) before the
command that caused it is acknowledged (group commit: whatever the mailbox holds is applied in
order and made durable by one persist, then answered), and before the room's in-memory state moves on: readers
(`welcome`, `lobby`) only ever see what is durable.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

import rules
from rules import EVERYONE, EventKind, roles_in_play
from rules.events import ROUTING, check as check_events
from rules.text import MAX_MARKS, is_invisible, marks_pile_up, strip_variation_selectors
from actors.clock import Clock
from actors.names import name_skeleton
from actors.ratelimit import TokenBucket
from actors.store import FINAL, StaleEpoch, Store, Stored
from actors.tables import LANGUAGES, Kind

log = logging.getLogger(__name__)

NAME_MAX = 24
ACKED_PER_SEAT = 16  # dedupe window: a retried frame is recognised among a seat's last 16 acks
# Per seat and command kind: (burst, then per second). A vote changed back and forth, or settings
# sent in a loop, is one broadcast to every seat and one stored event each: none may flood a room.
RATE_LIMITS = {"chat": (5, 1.0), "act": (10, 2.0), "settings": (30, 2.0), "start": (5, 0.5),
               "table": (5, 0.2), "leave": (2, 0.1), "remove": (5, 0.1)}
STORAGE_RETRY_MS = 1000  # after a failed write, when the room tries again by itself
GROUP_MAX = 64  # requests applied together and made durable by one persist
WATCHER = -1  # the seat of a spectator's socket: in no event's audience, so it gets public events only
# A public game's seat that lets AWAY_AFTER prompts in a row pass is shown away; past GONE_AFTER its
# votes pass at once where every living seat votes alike (RULES.md, "Away seats").
AWAY_AFTER, GONE_AFTER = 2, 4
# A timed game is unplayed once this many whole days passed with nothing the table saw from a seat
# (and LobbyTiming.game_idle did): RULES.md, "Unplayed games".
QUIET_DAYS = 2
REPLY_OK = 0  # a reply's status in a gateway's reply message (actors.host has the others)
# What `Room.command` returns when its reply rode the write's events message to the gateway
# (`rider`): the host has nothing left to send.
RODE = object()
PROOF_CHARS = 16  # of a seat's token hash, sent with each request: a seat that moved is refused


class BadName(ValueError):
    code = "bad_name"


@dataclass(frozen=True)
class LobbyTiming:
    """How long a lobby waits (ms). A public one: from the moment it seats its preset's minimum
    to its start, and for a seat without a socket before it is removed (a closed tab must not
    hold a stranger's table). Any lobby: `max_age` from its creation, connected or not, before it
    closes (a lobby held open by one socket must not hold its host slot for ever); None: no limit.
    A game, however many are connected: `game_idle` with no command the table sees ends it
    (`_game_closes`), and it lasts at most `game_max_age` from the room's creation; None: never."""
    countdown: int = 30_000
    absent: int = 60_000
    max_age: int | None = None
    game_idle: int | None = None
    game_max_age: int | None = None


# Characters no name may hold: controls (NUL...), format characters (zero-width, bidi overrides),
# lone surrogates, private use and unassigned code points. NFKC has already folded the odd
# spaces and the fullwidth forms.
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def clean_name(name: object) -> str:
    """A player name: variation selectors dropped, NFKC-normalised, inner whitespace runs made one
    space, 1-24 characters, at least one letter or digit, nothing invisible, no letter under more
    than a few marks (docs/protocol.md)."""
    if not isinstance(name, str):
        raise BadName("a name is a string")
    # Stripped, not refused: a variation selector only picks a glyph (a phone keyboard puts one
    # after many an emoji), so "Omar" with one is "Omar", and then taken if "Omar" is seated.
    name = " ".join(unicodedata.normalize("NFKC", strip_variation_selectors(name)).split())
    if not 1 <= len(name) <= NAME_MAX:
        raise BadName(f"a name has 1 to {NAME_MAX} characters")
    categories = [unicodedata.category(c) for c in name]
    # Refused, not stripped: every other invisible character (a joiner, the Hangul fillers, which
    # are letters, a braille blank) has no use in a name but to hide something or seem blank, and
    # the player should see the name that will be shown.
    if _INVISIBLE.intersection(categories) or any(map(is_invisible, name)):
        raise BadName("a name may not hold control, invisible or direction characters")
    if marks_pile_up(name):
        raise BadName(f"a name puts at most {MAX_MARKS} marks on one character")
    if not any(c[0] in "LN" for c in categories):
        raise BadName("a name needs a letter or a digit")
    return name


def votes_to_remove(seated: int) -> int:
    """Votes that remove a seat of a public lobby: a majority of the others."""
    return (seated - 1) // 2 + 1


@dataclass(frozen=True)
class Player:
    name: str
    token_hash: str
    # The gateway processes holding a socket of this seat: a seat with a phone and a laptop on two
    # replicas stays connected while either is there, and a gateway that dies without a word
    # (its presence lease lapses, see `RoomHost.sweep_presence`) is taken out of every seat.
    gateways: tuple[str, ...] = ()
    absent_since: int | None = None  # since when no socket holds the seat (a public lobby drops it)
    missed: int = 0  # prompts of a public game let pass in a row
    removers: tuple[str, ...] = ()  # token hashes of the seats voting to remove this one (lobby)

    @property
    def away(self) -> bool:
        return self.missed >= AWAY_AFTER

    def to_json(self) -> dict:
        """Only what differs from the defaults: the snapshot is written after every command."""
        out = {"name": self.name, "token_hash": self.token_hash, "gateways": self.gateways}
        for name in ("absent_since", "missed", "removers"):
            if value := getattr(self, name):
                out[name] = value
        return out

    @classmethod
    def from_json(cls, d: dict) -> Player:
        return cls(d["name"], d["token_hash"], tuple(d["gateways"]), d.get("absent_since"),
                   d.get("missed", 0), tuple(d.get("removers", ())))

    @property
    def connected(self) -> bool:
        return bool(self.gateways)


@dataclass(frozen=True)
class RoomData:
    """Everything a room is, as stored: replaced, never mutated, so a failed write changes nothing."""

    code: str
    status: str = "lobby"
    seq: int = 0  # the last event's number
    players: tuple[Player, ...] = ()
    settings: rules.Settings = field(default_factory=rules.Settings.default)
    game: rules.GameState | None = None
    acked: dict[int, tuple] = field(default_factory=dict)  # seat -> keys of its latest acked frames
    idle_since: int | None = None  # when the last connected seat left (or the room was created)
    watchers: dict[str, int] = field(default_factory=dict)  # gateway process -> spectator sockets there
    public: bool = False  # listed for strangers; starts by itself (see `_public_lobby`)
    language: str | None = None  # a public table's language, kept if it turns private again
    starts_at: int | None = None  # a public lobby's countdown: when it starts by itself (ms)
    acted: frozenset = frozenset()  # seats of a public game that acted since the last deadline
    opened_at: int | None = None  # when the room was created (ms): a lobby's age
    # What the unplayed-game rule counts from (`_game_closes`): when the table was last heard
    # from (a command all of it sees, the deal, or a wait with no deadline beginning; the public
    # chat lines are read from the chat itself), and the last game day that heard from it.
    played_at: int | None = None
    played_day: int | None = None

    @property
    def kind(self) -> Kind | None:
        """The list a public table is in (its preset and language); None for a private one."""
        return Kind(self.settings.preset, self.language) if self.public else None

    def table_facts(self) -> dict:
        """What the list shows of a public lobby besides its seats."""
        return {"size": rules.max_players(self.settings), "starts_at": self.starts_at}

    def to_json(self) -> bytes:
        return orjson.dumps({
            "code": self.code,
            "status": self.status,
            "seq": self.seq,
            "players": [p.to_json() for p in self.players],
            "settings": self.settings.to_json(),
            # The chat lines are stored apart (Store.persist's `chat`): here only their count.
            "game": None if self.game is None else {**vars(self.game), "chat": len(self.game.chat)},
            "acked": [[seat, list(ids)] for seat, ids in self.acked.items()],
            "idle_since": self.idle_since,
            "watchers": self.watchers,
            "public": self.public,
            "language": self.language,
            "starts_at": self.starts_at,
            "acted": sorted(self.acted),
            "opened_at": self.opened_at,
            "played_at": self.played_at,
            "played_day": self.played_day,
        })

    @classmethod
    def from_stored(cls, stored: Stored) -> RoomData:
        d = orjson.loads(stored.snapshot)
        game = d["game"]
        if game is not None and type(game["chat"]) is int:  # else a snapshot that held its chat
            game["chat"] = [orjson.loads(line) for line in stored.chat]
        return with_logged(cls(
            code=d["code"],
            status=d["status"],
            seq=d["seq"],
            players=tuple(Player.from_json(p) for p in d["players"]),
            settings=rules.Settings.from_json(d["settings"]),
            game=None if game is None else rules.GameState.from_json(game),
            acked={seat: tuple(ids) for seat, ids in d["acked"]},
            idle_since=d["idle_since"],
            watchers=d.get("watchers", {}),  # a snapshot stored before spectators: none
            public=d.get("public", False),  # and before public tables: private
            language=d.get("language"),
            starts_at=d.get("starts_at"),
            acted=frozenset(d.get("acted", ())),
            opened_at=d.get("opened_at"),  # a room stored before lobbies aged: no limit
            played_at=d.get("played_at"),  # and before games did: only their age ends them
            played_day=d.get("played_day"),
        ), [orjson.loads(item) for item in stored.tail])

    def lobby(self) -> dict:
        """The public lobby facts (also the lobby part of every view)."""
        return {
            "room": self.code,
            "status": self.status,
            "host": 0,
            "players": [{"seat": seat, "name": p.name, "connected": p.connected, "away": p.away}
                        for seat, p in enumerate(self.players)],
            "settings": self.settings.to_json(),
            "roles_in_play": roles_in_play(len(self.players), self.settings),
            "spectators": sum(self.watchers.values()),
            "public": self.public,
            "language": self.language,
            "starts_at": self.starts_at,
            "remove_votes": self.remove_votes(),
        }

    def remove_votes(self) -> dict[int, dict]:
        """A public lobby's votes to remove each seat: {seat: {"votes", "needed"}}."""
        needed = votes_to_remove(len(self.players))
        return {seat: {"votes": len(p.removers), "needed": needed}
                for seat, p in enumerate(self.players) if p.removers}

    def view(self, seat: int) -> dict:
        """What `seat` may know; a spectator (WATCHER) gets the public table only."""
        view = self.lobby()
        if self.game is not None and self.status != "broken":  # a broken game may not even render
            view.update(rules.public_view(self.game) if seat == WATCHER else rules.view(self.game, seat))
        return view


@dataclass
class Change:
    """What a handler decided: the new data (seq not yet advanced) and the events it emits."""

    data: RoomData
    events: list[dict]
    seated: int = 0  # seats of a public lobby the index has not counted (a join by link: +1)
    ack: tuple[int, str] | None = None  # (seat, frame key) the command added to `data.acked`


class Refused(Exception):
    """A handler refusing a request; `code` is the protocol error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def error_frame(frame_id: Any, code: str, message: str) -> dict:
    return {"type": "error", "id": frame_id, "code": code, "message": message}


# The room's own events, beside the rules' (rules.EVENTS): the lobby's and the sockets'.
ROOM_EVENTS = {kind.kind: kind for kind in (
    EventKind("joined", ("seat", "name", "roles_in_play"), EVERYONE,
              "a seat is taken in the lobby; the cards the table would deal now"),
    EventKind("presence", ("seat", "connected"), EVERYONE, "a seat's sockets came or all went"),
    EventKind("spectators", ("count",), EVERYONE, "how many watch",
              types={"count": {"type": "integer", "minimum": 0}}),
    EventKind("settings", ("settings", "roles_in_play"), EVERYONE, "the host changed the settings"),
    EventKind("table", ("public", "language"), EVERYONE, "the table went public or private"),
    EventKind("countdown", ("starts_at",), EVERYONE,
              "a public table starts by itself at starts_at (null: the countdown stopped)"),
    EventKind("removed", ("seat", "name", "reason", "moved", "roles_in_play", "remove_votes"),
              EVERYONE, "a seat left the lobby or was removed; `moved`: the last seat took its place"),
    EventKind("remove_vote", ("seat", "votes", "needed"), EVERYONE,
              "votes to remove a seat of a public lobby"),
    EventKind("closed", ("reason",), EVERYONE,
              "the room closed without a game over: `idle` (nobody connected for a while), "
              "`max_age` (a lobby that never started), `unplayed` (a game nobody played for a "
              "while) or `game_max_age` (a game that lasted too long)"),
    EventKind("away", ("seat", "away"), EVERYONE,
              "a public game's seat let the shared prompts pass (true), or is back (false)"),
)}
assert not ROOM_EVENTS.keys() & rules.EVENTS.keys(), "an event kind is the rules' or the room's"
EVENTS = {**rules.EVENTS, **ROOM_EVENTS}  # every kind an event frame may carry


def encode_event(seq: int, event: dict, ack: tuple[int, str] | None = None) -> bytes:
    """A stored event: who may see it, and the client frame built once as JSON text; `ack`: the
    (seat, frame key) of the command that caused it, so a room loaded from an older snapshot
    still knows the command was applied (`with_logged`). Only `frame` ever reaches a client."""
    payload = {k: v for k, v in event.items() if k not in ROUTING}
    frame = orjson.dumps({"type": "event", "seq": seq, "kind": event["kind"], **payload},
                         option=orjson.OPT_NON_STR_KEYS)
    to = event.get("to")
    item = {"seq": seq, "to": None if to is None else sorted(to), "frame": frame.decode()}
    if "unseat" in event:  # the seats whose sockets must go (actors.client.Subscriptions)
        item["unseat"] = event["unseat"]
    if ack is not None:
        item["ack"] = ack
    return orjson.dumps(item)


def with_logged(data: RoomData, items: Sequence[dict]) -> RoomData:
    """`data` with the log items after it applied: their last seq, and the acks they carry. A
    write whose new state is exactly this (and the chat list) stores no snapshot (`Room._persist`),
    and `RoomData.from_stored` rebuilds it the same way."""
    if not items:
        return data
    return replace(data, seq=items[-1]["seq"], acked=_with_acks(data.acked, items))


def _with_acks(acked: dict[int, tuple], items: Sequence[dict]) -> dict[int, tuple]:
    for item in items:
        if "ack" in item:
            acked = _with_ack(acked, *item["ack"])
    return acked


def _with_ack(acked: dict[int, tuple], seat: int, key: str) -> dict[int, tuple]:
    """`acked` with `key` the seat's latest (its last ACKED_PER_SEAT kept)."""
    return {**acked, seat: (acked.get(seat, ()) + (key,))[-ACKED_PER_SEAT:]}


# Handlers are pure: (data, now, *args) -> (reply, Change | None), but for the rate limits
# `_command` is handed (kept in memory, not room state). They raise Refused or rules.RulesError
# to refuse, anything else is a bug that breaks the room.

def _join(data: RoomData, now: int, name: str, token_hash: str, promised: bool,
          timing: LobbyTiming):
    """`promised`: the table index already counted this seat (a quick-play press claimed it)."""
    for seat, player in enumerate(data.players):
        if player.token_hash == token_hash:  # a retried join that already happened
            return {"seat": seat}, None
    if data.status != "lobby":
        raise Refused("room_started", "the game has started")
    try:
        name = clean_name(name)
    except BadName as e:
        raise Refused(BadName.code, str(e)) from None
    most = rules.max_players(data.settings)  # 18, or 20 for seed 004's range
    if len(data.players) >= most:
        raise Refused("room_full", f"the room has {most} players")
    skeleton = name_skeleton(name)  # a look-alike of a seated name is taken too
    if any(name_skeleton(p.name) == skeleton for p in data.players):
        raise Refused("name_taken", f"{name!r} is taken in this room (or looks like a name that is)")
    seat = len(data.players)
    players = data.players + (Player(name=name, token_hash=token_hash, absent_since=now),)
    # The deal depends on how many are seated: every page's lobby shows the new one.
    event = {"kind": "joined", "to": None, "seat": seat, "name": name,
             "roles_in_play": roles_in_play(len(players), data.settings)}
    change = Change(replace(data, players=players), [event])
    if data.public:
        change = _public_lobby(change, now, timing)
        change.seated = 0 if promised else 1
    return {"seat": seat}, change


def _public_lobby(change: Change, now: int, timing: LobbyTiming) -> Change:
    """A public table starts by itself: at once when it is full, else `timing.countdown` ms after
    it reached its preset's minimum (a later joiner resets nothing; falling below it stops it)."""
    data = change.data
    seated, need = len(data.players), rules.min_players(data.settings)
    if seated >= rules.max_players(data.settings):
        dealt = _deal(replace(data, starts_at=None), now)
        return Change(dealt.data, change.events + dealt.events)
    starts_at = data.starts_at
    if seated >= need and starts_at is None:
        starts_at = now + timing.countdown
    elif seated < need:
        starts_at = None
    if starts_at == data.starts_at:
        return change
    return Change(replace(data, starts_at=starts_at),
                  change.events + [{"kind": "countdown", "to": None, "starts_at": starts_at}],
                  change.seated)


def _remove(data: RoomData, now: int, seat: int, reason: str, timing: LobbyTiming) -> Change:
    """Seat `seat` leaves the lobby: the last seat moves into its place (one seat renumbered, so
    one player's sockets reconnect), its token stops working, and votes against or by it go."""
    players = list(data.players)
    gone, last = players[seat], len(players) - 1
    moved = last if seat != last else None
    players[seat] = players[last]
    players.pop()
    players = [replace(p, removers=tuple(h for h in p.removers if h != gone.token_hash))
               if gone.token_hash in p.removers else p for p in players]
    idle_since = data.idle_since
    if not any(p.connected for p in players) and idle_since is None:
        idle_since = now
    removed = replace(data, players=tuple(players), idle_since=idle_since)
    event = {"kind": "removed", "to": None, "seat": seat, "name": gone.name, "reason": reason,
             "moved": moved, "roles_in_play": roles_in_play(len(players), data.settings),
             "remove_votes": removed.remove_votes(),  # fewer seats: another majority
             "unseat": [seat] if moved is None else [seat, moved]}
    change = Change(removed, [event])
    if data.public:
        change = _public_lobby(change, now, timing)
        change.seated = -1
    return change


def _leave(data: RoomData, now: int, seat: int, frame: dict, timing: LobbyTiming) -> Change:
    if data.status != "lobby":
        raise Refused("not_your_turn", "a seat leaves in the lobby; in a game it plays on")
    return _remove(data, now, seat, "left", timing)


def _remove_seat(data: RoomData, now: int, seat: int, frame: dict, timing: LobbyTiming) -> Change:
    """A private table's host removes a seat; at a public one, a seat votes to remove another,
    which goes once most of the others voted so."""
    target = frame.get("seat")
    if data.status != "lobby":
        raise Refused("not_your_turn", "a seat is removed in the lobby only")
    if type(target) is not int or not 0 <= target < len(data.players) or target == seat:
        raise Refused("illegal_target", "remove needs the seat of another player")
    if not data.public:
        if seat != 0:
            raise Refused("not_host", "only the host removes a player from a private table")
        return _remove(data, now, target, "host", timing)
    voter, accused = data.players[seat].token_hash, data.players[target]
    if voter in accused.removers:
        return Change(data, [])
    removers = accused.removers + (voter,)
    needed = votes_to_remove(len(data.players))
    if len(removers) >= needed:
        return _remove(data, now, target, "vote", timing)
    players = list(data.players)
    players[target] = replace(accused, removers=removers)
    event = {"kind": "remove_vote", "to": None, "seat": target, "votes": len(removers),
             "needed": needed}
    return Change(replace(data, players=tuple(players)), [event])


def _remove_absent(data: RoomData, now: int, timing: LobbyTiming) -> Change | None:
    """A public lobby lets go of the seats that held no socket for `timing.absent`."""
    change = None
    while True:
        current = data if change is None else change.data
        seat = next((s for s, p in enumerate(current.players) if p.absent_since is not None
                     and now >= p.absent_since + timing.absent), None)
        if seat is None:
            return change
        removed = _remove(current, now, seat, "away", timing)
        if change is not None:
            removed = Change(removed.data, change.events + removed.events,
                             change.seated + removed.seated)
        change = removed


def _shared_actions(game: rules.GameState) -> set[str]:
    """The open prompts every living seat holds alike (a day's vote, an election): only these
    count for away, since a prompt some seats lack (a night role's) would tell who holds it."""
    living = {s for s, alive in enumerate(game.alive) if alive}
    holders: dict[str, set[int]] = {}
    for p in game.prompts:
        holders.setdefault(p["action"], set()).add(p["seat"])
    return {action for action, seats in holders.items() if seats >= living}


def _count_missed(data: RoomData) -> tuple[RoomData, list[dict]]:
    """At a public game's deadline: each seat holding a shared prompt (`_shared_actions`) it did
    not answer since the last deadline missed one more; one that answered one missed none.
    `away` events as that changes."""
    shared = _shared_actions(data.game)
    prompted = {p["seat"] for p in data.game.prompts if p["action"] in shared}
    players, events = list(data.players), []
    for seat, player in enumerate(players):
        if seat in data.acted:
            missed = 0
        elif seat in prompted:
            missed = player.missed + 1
        else:
            continue
        if missed != player.missed:
            players[seat] = changed = replace(player, missed=missed)
            if changed.away != player.away:
                events.append({"kind": "away", "to": None, "seat": seat, "away": changed.away})
    return replace(data, players=tuple(players), acted=frozenset()), events


def _pass_for_gone(data: RoomData, now: int) -> tuple[RoomData, list[dict]]:
    """A seat gone for GONE_AFTER prompts in a row passes at once where every living seat holds
    the same prompt (a day's vote: nothing about its card follows); elsewhere its prompts run
    their time like anyone's, since an early end would tell the table what it holds."""
    events: list[dict] = []
    done: set[tuple[int, str]] = set()  # a vote stays open once cast: each prompt passed once
    for _ in range(4 * len(data.players)):
        game = data.game
        if game is None or rules.outcome(game) is not None:
            break
        shared = _shared_actions(game)
        passing = next((p for p in game.prompts
                        if data.players[p["seat"]].missed >= GONE_AFTER and p["min"] == 0
                        and p["action"] in shared and (p["seat"], p["action"]) not in done), None)
        if passing is None:
            break
        done.add((passing["seat"], passing["action"]))
        game, more = rules.act(game, seat=passing["seat"], action=passing["action"], targets=[],
                               now=now)
        data, events = _with_game(data, game), events + more
    return data, events


def _check_seat(data: RoomData, seat: int) -> None:
    if type(seat) is not int or not 0 <= seat < len(data.players):
        raise Refused("not_authenticated", f"no seat {seat!r} in this room")


def _presence(data: RoomData, now: int, seat: int, gateway: str, connected: bool):
    _check_seat(data, seat)
    held = data.players[seat].gateways
    if connected == (gateway in held):
        return None, None
    gateways = held + (gateway,) if connected else tuple(g for g in held if g != gateway)
    return None, _with_gateways(data, now, {seat: gateways})


def _gateways_gone(data: RoomData, now: int, gone: frozenset):
    changed = {seat: tuple(g for g in p.gateways if g not in gone)
               for seat, p in enumerate(data.players) if gone.intersection(p.gateways)}
    change = _with_gateways(data, now, changed) if changed else None
    if gone.intersection(data.watchers):
        change = _with_watchers(change.data if change else data, change.events if change else [],
                                {g: n for g, n in data.watchers.items() if g not in gone})
    return None, change


def _watch(data: RoomData, now: int, gateway: str, count: int):
    """Gateway process `gateway` now holds `count` spectator sockets of this room."""
    if type(count) is not int or count < 0:
        raise Refused("bad_frame", "a spectator count is a non-negative integer")
    if data.watchers.get(gateway, 0) == count:
        return None, None
    watchers = {g: n for g, n in data.watchers.items() if g != gateway}
    if count:
        watchers[gateway] = count
    return None, _with_watchers(data, [], watchers)


def _with_watchers(data: RoomData, events: list, watchers: dict[str, int]) -> Change:
    """New spectator counts; a `spectators` event when the room's total changes."""
    total = sum(watchers.values())
    if total != sum(data.watchers.values()):
        events = [*events, {"kind": "spectators", "to": None, "count": total}]
    return Change(replace(data, watchers=watchers), events)


def _with_gateways(data: RoomData, now: int, gateways: dict[int, tuple[str, ...]]) -> Change:
    """New gateway sets for some seats; a `presence` event for each seat that came or went."""
    players = list(data.players)
    events = []
    for seat, held in gateways.items():
        player = players[seat]
        if bool(held) != player.connected:
            events.append({"kind": "presence", "to": None, "seat": seat, "connected": bool(held)})
        absent_since = None if held else (player.absent_since or now)
        players[seat] = replace(player, gateways=held, absent_since=absent_since)
    if any(p.connected for p in players):
        idle_since = None
    else:
        idle_since = now if data.idle_since is None else data.idle_since
    return Change(replace(data, players=tuple(players), idle_since=idle_since), events)


def _idle_limit(data: RoomData, idle_close: int | None, lobby_idle_close: int | None) -> int | None:
    if data.status == "lobby" and lobby_idle_close is not None:
        return lobby_idle_close if idle_close is None else min(idle_close, lobby_idle_close)
    return idle_close


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
        times += [p.absent_since + timing.absent for p in data.players if p.absent_since is not None]
    if data.status == "lobby" and (closes := _lobby_closes(data, timing)) is not None:
        times.append(closes)
    if (ends := _game_closes(data, timing)) is not None:
        times.append(ends[0])
    idle_close = _idle_limit(data, idle_close, lobby_idle_close)
    if idle_close is not None and data.idle_since is not None and data.status not in FINAL:
        times.append(data.idle_since + idle_close)
    return min(times, default=None)


def _lobby_closes(data: RoomData, timing: LobbyTiming | None) -> int | None:
    """When a lobby closes however many are connected: `timing.max_age` after its creation."""
    if timing is None or timing.max_age is None or data.opened_at is None:
        return None
    return data.opened_at + timing.max_age


def _game_closes(data: RoomData, timing: LobbyTiming | None) -> tuple[int, str] | None:
    """When and why a running game ends however many are connected (RULES.md, "Unplayed games"):
    `game_max_age` after its room opened; `unplayed` `game_idle` after the table was last heard
    from, if the game waits with no deadline (only the table ends such a wait) or QUIET_DAYS whole
    days have passed since (a game on timers runs on without anyone). Only what the whole table
    sees counts, so when a game ends tells nobody what a night role did."""
    if data.status != "running" or timing is None:
        return None
    ends = []
    if timing.game_max_age is not None and data.opened_at is not None:
        ends.append((data.opened_at + timing.game_max_age, "game_max_age"))
    if timing.game_idle is not None and data.played_at is not None and (
            rules.next_deadline(data.game) is None
            or data.played_day is not None and data.game.day - 1 - data.played_day >= QUIET_DAYS):
        ends.append((_heard_at(data.game, data.played_at) + timing.game_idle, "unplayed"))
    return min(ends, default=None)


def _heard_at(game: rules.GameState, played_at: int) -> int:
    """When the table was last heard from: `played_at`, or a later line of the public chat."""
    line = next((line for line in reversed(game.chat) if line.get("to") is None), None)
    return played_at if line is None else max(played_at, line["ts"])


def _heard(data: RoomData, now: int, day: int) -> RoomData:
    """The whole table saw a seat's command (or the deal) at `now`, in game day `day`."""
    return replace(data, played_at=now, played_day=day)


def _waits_untimed(old: RoomData, new: RoomData, now: int) -> RoomData:
    """A wait with no deadline (a discussion without a timer) beginning now is counted from now:
    the night before it heard nothing from the table, and must not count."""
    if new.status == "running" and rules.next_deadline(new.game) is None \
            and rules.next_deadline(old.game) is not None:
        return replace(new, played_at=now)
    return new


def _closed(reason: str) -> dict:
    return {"kind": "closed", "to": None, "reason": reason}


def _tick(data: RoomData, now: int, idle_close: int | None, lobby_idle_close: int | None,
          timing: LobbyTiming):
    idle_close = _idle_limit(data, idle_close, lobby_idle_close)
    if idle_close is not None and data.idle_since is not None and now >= data.idle_since + idle_close:
        # Nobody has been at the table for idle_close: close it, so it frees its host slot.
        return None, Change(replace(data, status="finished"), [_closed("idle")])
    if data.status == "lobby" and (closes := _lobby_closes(data, timing)) is not None \
            and now >= closes:  # whoever is connected is told, not left in a dead lobby
        return None, Change(replace(data, status="finished"), [_closed("max_age")])
    if (ends := _game_closes(data, timing)) is not None and now >= ends[0]:
        # Nobody plays it, or it lasted too long: it ends whoever is connected, freeing its slot.
        return None, Change(replace(data, status="finished"), [_closed(ends[1])])
    if data.status == "lobby":
        change = _remove_absent(data, now, timing) if data.public else None
        current = data if change is None else change.data
        if current.status != "lobby" or current.starts_at is None or current.starts_at > now:
            return None, change
        dealt = _deal(replace(current, starts_at=None), now)
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
    data = _waits_untimed(data, _with_game(data, game), now)
    if data.public:
        data, passed = _pass_for_gone(data, now)
        events += passed
    return None, Change(data, missed + events)


def _with_game(data: RoomData, game: rules.GameState) -> RoomData:
    status = "finished" if rules.outcome(game) is not None else "running"
    return replace(data, game=game, status=status)


def _command(data: RoomData, now: int, seat: int, frame: dict, received: int | None,
             take_token: Callable[[int, str, int], bool], timing: LobbyTiming,
             proof: str | None = None):
    _check_seat(data, seat)
    if proof is not None and not data.players[seat].token_hash.startswith(proof):
        raise Refused("not_authenticated", "this seat is not yours any more: reconnect")
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
    data = _heard(data, now, before.game.day) if shared else _waits_untimed(before, data, now)
    # Only an answer to a shared prompt says the seat is back (a night act is secret).
    if shared and data.public:
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
    if events[0]["to"] is None and data.played_day != game.day:  # the day's first public line
        data = replace(data, played_day=game.day)  # (its time is read from the chat: `_heard_at`)
    return Change(_with_game(data, game), events)


def _lobby_host(data: RoomData, seat: int, what: str) -> None:
    if seat != 0:
        raise Refused("not_host", f"only the host may {what}")
    if data.status != "lobby":
        raise Refused("not_your_turn", f"{what}: the game has started")


def _settings(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    _lobby_host(data, seat, "change the settings")
    # rules.Settings validates the whole change (BadSettings: bad_frame, nothing changed)
    settings = data.settings.change({k: frame[k] for k in rules.SETTINGS_FIELDS if k in frame})
    if data.public and (settings.preset, settings.roles, settings.rules) != (
            data.settings.preset, data.settings.roles, data.settings.rules):
        raise Refused("not_host", "a public table keeps its preset: only the durations change")
    event = {"kind": "settings", "to": None, "settings": settings.to_json(),
             "roles_in_play": roles_in_play(len(data.players), settings)}
    return Change(replace(data, settings=settings), [event])


def _start(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    _lobby_host(data, seat, "start the game")
    if data.public:
        raise Refused("not_host", "a public table starts by itself")
    needed = rules.min_players(data.settings)
    if len(data.players) < needed:
        raise Refused("not_your_turn", f"{needed} players are needed for these roles, "
                                       f"{len(data.players)} seated")
    return _deal(data, now)


def _table(data: RoomData, now: int, seat: int, frame: dict, timing: LobbyTiming) -> Change:
    """The host makes the table public (listed, in `language`) or private (link only)."""
    _lobby_host(data, seat, "open or close the table")
    public, language = frame.get("public"), frame.get("language", data.language or "en")
    if type(public) is not bool or language not in LANGUAGES:
        raise Refused("bad_frame", f"table needs public true or false and a language among "
                                   f"{list(LANGUAGES)}")
    if public and data.settings.preset is None:
        raise Refused("not_your_turn", "a public table plays a preset: pick one first")
    changed = replace(data, public=public, language=language if public else data.language,
                      starts_at=None)
    event = {"kind": "table", "to": None, "public": public, "language": changed.language}
    change = Change(changed, [event])
    return _public_lobby(change, now, timing) if public else change


def _deal(data: RoomData, now: int) -> Change:
    game, events = rules.start_game(names=[p.name for p in data.players], settings=data.settings,
                                    seed=secrets.randbits(63), now=now)
    return Change(_heard(_with_game(data, game), now, game.day - 1), events)  # day 1 may be quiet


_COMMANDS: dict[str, Callable[..., Change]] = {
    "act": _act, "chat": _chat, "settings": _settings, "start": _start, "table": _table,
    "leave": _leave, "remove": _remove_seat,
}
_TAKES_TIMING = frozenset(("table", "leave", "remove"))


class Room:
    def __init__(self, data: RoomData, *, epoch: int, host: str, store: Store, clock: Clock,
                 on_close: Callable[[str], None] | None = None, idle_close: int | None = None,
                 lobby_idle_close: int | None = None,
                 on_persist: Callable[[float, int], None] | None = None, chat_stored: int = 0,
                 timing: LobbyTiming = LobbyTiming()) -> None:
        self.data = data  # committed: durable in the store
        self._timing = timing  # a public lobby's countdown and patience with absent seats
        # The store's chat list: which game's lines it holds and how many (each persist adds the new ones).
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
        self._resync = False  # a write failed ambiguously: reload the snapshot before the next one
        self._armed: int | None = None
        self._limits: dict[tuple[int, str], TokenBucket] = {}  # in memory: a restart refills them
        self._timer: asyncio.Task | None = None
        self._worker = asyncio.create_task(self._run(), name=f"room {data.code}")
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

    async def join(self, name: str, token_hash: str, promised: bool = False) -> dict:
        """{"seat": n}, or {"error": code, "message": ...}. `promised`: a quick-play press
        already counted this seat in the table index."""
        return await self._submit(_join, (name, token_hash, promised, self._timing),
                                  lambda code, message: {"error": code, "message": message})

    async def command(self, seat: int, frame: dict, received: int | None = None,
                      proof: str | None = None, rider: tuple[str, int] | None = None):
        """The ack or error frame answering `frame` (act, chat, settings, start, table, leave,
        remove); `received`: when a gateway read it (wall clock ms), for the rate limit; `proof`:
        the start of the seat's token hash (refused if the seat is another player's now).
        `rider`: (gateway, request number) of a gateway that listens to this room: if the write
        publishes events, the reply goes out in their message and this returns RODE."""
        if not isinstance(frame, dict):
            return error_frame(None, "bad_frame", "a command is a JSON object")
        frame_id = frame.get("id")
        return await self._submit(_command, (seat, frame, received, self._take_token,
                                             self._timing, proof),
                                  lambda code, message: error_frame(frame_id, code, message), rider)

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

    def welcome(self, seat: int, proof: str | None = None) -> dict:
        """The view of `seat` at exactly seq S (the committed state), as {"seq": S, "view": ...};
        {"moved": True} if `proof` (the start of its token hash) is not that seat's any more."""
        data = self.data
        if proof is not None and seat != WATCHER and not (
                0 <= seat < len(data.players) and data.players[seat].token_hash.startswith(proof)):
            return {"moved": True}
        return {"seq": data.seq, "view": data.view(seat)}

    def close(self) -> None:
        """Dispose: stop the timer and the mailbox; queued requests are answered room_closed."""
        if self._closed:
            return
        self._closed = True
        self._set_timer(None)
        if asyncio.current_task() is not self._worker:
            self._worker.cancel()
        while not self._mailbox.empty():
            _, _, on_error, future, _ = self._mailbox.get_nowait()
            if not future.done():
                future.set_result(on_error("room_closed", "the room is closed"))
        if self._on_close is not None:
            self._on_close(self.code)

    # -- the single writer -----------------------------------------------------------------

    def _submit(self, handler, args: tuple, on_error,
                rider: tuple[str, int] | None = None) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        if self._closed:
            future.set_result(on_error("room_closed", "the room is closed"))
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
                        future.set_result(on_error("room_closed", "the room is closed"))
                raise
            except Exception:  # the loop must outlive any bug; the room does not
                log.exception("room %s broke in its mailbox", self.code)
                await self._break()
                replies = [on_error("internal", "this room hit an internal error and is closed")
                           for _, _, on_error, _, _ in group]
            for (_, _, _, future, _), reply in zip(group, replies):
                if not future.done():
                    future.set_result(reply)
            if self.data.status in FINAL:
                self.close()
                return

    async def _apply_group(self, group: list) -> list:
        """Group commit: apply every request the mailbox held, one after the other, then make them
        durable with ONE persist (snapshot + all their events) before any is answered. Under load
        a room pays one snapshot write per mailbox drain instead of one per command."""
        if self._resync and not await self._reload():
            self._retry_later()
            return [on_error("internal", "storage unavailable, retry") for _, _, on_error, _, _ in group]
        committed = data = self.data
        events: list[bytes] = []
        logged: list[dict] = []  # what `with_logged` reads of each event: its seq, its ack
        replies: list = []
        broken = False
        seated = 0
        for handler, args, on_error, _, _ in group:
            if broken:
                replies.append(on_error("internal", "this room hit an internal error and is closed"))
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
                        logged.append({"seq": seq + i} if ack is None else {"seq": seq + i, "ack": ack})
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
            riders: dict[str, list] = {}
            # Not the last write: its store also releases the room's host slot, after the
            # script, and an ack still means all of that is done.
            if events and data.status not in FINAL:
                for (_, _, _, _, rider), reply in zip(group, replies):
                    if rider is not None:
                        gateway, number = rider
                        riders.setdefault(gateway, []).append([number, REPLY_OK, reply])
            failure = await self._persist(committed, data, events, len(group), riders, logged)
            if failure is not None:
                return [failure(on_error) for _, _, on_error, _, _ in group]
            await self._reindex(committed, data, seated)
            if riders:
                replies = [RODE if rider is not None else reply
                           for (_, _, _, _, rider), reply in zip(group, replies)]
        if broken:
            await self._break()
        return replies

    async def _persist(self, old: RoomData, new: RoomData, events: list[bytes], requests: int,
                       riders: dict[str, list] | None = None, logged: Sequence[dict] = ()):
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
        try:
            await self._store.persist(old.code, epoch=self.epoch, host=self.host,
                                      snapshot=None if _only_logged(old, new, logged) else new.to_json(),
                                      status=new.status,
                                      first_seq=old.seq + 1, events=events,
                                      tokens=_new_tokens(old, new), untokens=_gone_tokens(old, new),
                                      chat_from=chat_from, riders=riders,
                                      chat=[orjson.dumps(line) for line in lines[chat_from or 0:]])
        except StaleEpoch:
            log.warning("room %s: epoch %d fenced by a newer owner; stopping", old.code, self.epoch)
            self.close()
            return lambda on_error: on_error("internal", "the room moved, retry")
        except Exception as e:  # storage down, or a write we cannot tell landed: reload first
            log.warning("room %s: persist failed (%r); will reload before the next write", old.code, e)
            self._resync = True
            self._retry_later()
            return lambda on_error: on_error("internal", "storage unavailable, retry")
        finally:
            if self._on_persist is not None:
                self._on_persist(time.perf_counter() - started, requests)
        self.data = new
        self._chat_stored = (game, len(lines))
        self._arm()
        return None

    async def _reindex(self, old: RoomData, new: RoomData, seated: int) -> None:
        """Tell the public tables' index what this durable change did to the table: listed,
        seats, countdown, started, gone. Before the replies, so a page that lists tables after
        its join sees it; a failure only leaves the list stale (a press that finds a table
        started or full moves on, see `RoomClient.quick_play`)."""
        if not (old.public or new.public):
            return
        index, code = self._store.tables, new.code
        try:
            if old.public and (old.kind != new.kind or new.status in FINAL):
                await index.ended(old.kind, code)
            if not new.public or new.status in FINAL:
                return
            if new.status == "running":
                if old.status == "lobby":
                    await index.started(new.kind, code, self._clock.now(), {
                        "seats": len(new.players), "size": rules.max_players(new.settings),
                        "started": self._clock.now()})
            elif old.kind != new.kind or old.seq == 0:  # made public, or made so
                await index.listed(new.kind, code, len(new.players), new.table_facts())
            else:
                if seated:
                    await index.seated(new.kind, code, seated)
                if old.table_facts() != new.table_facts():
                    await index.facts(new.kind, code, new.table_facts())
        except Exception as e:
            log.warning("room %s: the table index was not updated (%r)", code, e)

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
        except Exception as e:
            log.warning("room %s: reload failed (%r)", self.code, e)
            return False
        self.data = data
        self._chat_stored = (_game_id(data), chat_stored)
        self._resync = False
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


def _only_logged(old: RoomData, new: RoomData, logged: Sequence[dict]) -> bool:
    """`new` is `with_logged(old, logged)` with the game's new chat lines, and nothing else
    (attribute by attribute, most of them the same objects: cheaper than the snapshot's
    encoding it saves; building that data and comparing it whole cost as much as the encoding)."""
    if not logged or old.game is None or new.game is None:
        return False
    return (new.seq == logged[-1]["seq"] and _same_but(old, new, ("seq", "acked", "game"))
            and _same_but(old.game, new.game, ("chat",))
            and new.acked == _with_acks(old.acked, logged))


def _same_but(old, new, but: tuple[str, ...]) -> bool:
    theirs = vars(new)
    return all(value is theirs[name] or value == theirs[name]
               for name, value in vars(old).items() if name not in but)


def _game_id(data: RoomData) -> int | None:
    """Which game a room's stored chat lines belong to (its seed; None before the start)."""
    return None if data.game is None else data.game.seed


def _new_tokens(old: RoomData, new: RoomData) -> dict[str, int]:
    """The token hashes whose seat is new: a joiner's, or one that moved into a removed seat."""
    if old.players is new.players:
        return {}
    return {p.token_hash: seat for seat, p in enumerate(new.players)
            if seat >= len(old.players) or old.players[seat].token_hash != p.token_hash}


def _gone_tokens(old: RoomData, new: RoomData) -> list[str]:
    """The token hashes of the seats removed (their tokens prove nothing any more)."""
    if len(new.players) >= len(old.players):
        return []
    kept = {p.token_hash for p in new.players}
    return [p.token_hash for p in old.players if p.token_hash not in kept]
