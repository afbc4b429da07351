"""What a room is: its data as stored (`RoomData`, its `Player`s), a handler's decision (`Change`),
and the events the room itself declares (`ROOM_EVENTS`) and stores (`encode_event`).

Everything here is a pure value or a pure function: the lobby (actors.lobby), moderation
(actors.moderation) and the single writer (actors.room) build on it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

import rules
from rules import EVERYONE, EventKind, roles_in_play
from rules.events import ROUTING
from actors.store import FINAL, Stored
from actors.tables import Listing, Kind

ACKED_PER_SEAT = 16  # dedupe window: a retried frame is recognised among a seat's last 16 acks
# The seat of a spectator's socket: in no event's audience, so it gets public events only.
WATCHER = -1
# A public game's seat that lets AWAY_AFTER prompts in a row pass is shown away
# (actors.moderation: RULES.md, "Away seats").
AWAY_AFTER = 2
# How a bot's seat's token hash begins (no token hashes to it: a sha256 is hex): the seat of a bot
# is seated as a bot again at its table's next game (`RoomClient.again` joins every seat's hash).
BOT_TOKEN = "bot:"
# A public lobby remembers this many token hashes, name skeletons and address marks of the seats
# its vote removed (`RoomData.barred`), and past VOTED_OUT_UNLISTED seats so removed, it leaves
# the open list:
# quick play sends no more strangers to a table that keeps voting them off.
BARRED_KEPT = 32
VOTED_OUT_UNLISTED = 3
# Chat lines of each channel a welcome's view carries: the last ones. A chatty room's whole view
# held 628 KB of chat, all of it in one frame no slow-socket rule could see; built and encoded by
# the host for each socket's hello, it rode the reply message that carried other seats' acks.
WELCOME_CHAT_LINES = 100


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
    # Played by a bot (actors.bot_seats): a seat a bot took (its token known to nobody), or a
    # player's seat in a running game while it is away or left; the player takes it back.
    bot: bool = False
    seated_at: int | None = None  # when it sat down (ms; None: before this was kept, long ago)
    address: str = ""  # its address's mark (`actors.client.address_mark`; "": none known)
    # Played on the table's shared phone (`RoomData.phone`); the others are online, each on its
    # own device (RULES.md, "One phone + online").
    phone: bool = False

    @property
    def away(self) -> bool:
        return self.missed >= AWAY_AFTER

    def to_json(self) -> dict:
        """Only what differs from the defaults: the snapshot is written after every command."""
        out = {"name": self.name, "token_hash": self.token_hash, "gateways": self.gateways}
        for name in ("absent_since", "missed", "removers", "bot", "seated_at", "address",
                     "phone"):
            if value := getattr(self, name):
                out[name] = value
        return out

    @classmethod
    def from_json(cls, d: dict) -> Player:
        return cls(d["name"], d["token_hash"], tuple(d["gateways"]), d.get("absent_since"),
                   d.get("missed", 0), tuple(d.get("removers", ())),
                   d.get("bot", False),  # a snapshot stored before bots: every seat a human
                   d.get("seated_at"), d.get("address", ""), d.get("phone", False))

    @property
    def connected(self) -> bool:
        return bool(self.gateways)


@dataclass(frozen=True)
class RoomData:
    """Everything a room is, as stored: replaced, never mutated, so a failed write changes
    nothing."""

    code: str
    status: str = "lobby"
    seq: int = 0  # the last event's number
    players: tuple[Player, ...] = ()
    settings: rules.Settings = field(default_factory=rules.Settings.default)
    game: rules.GameState | None = None
    acked: dict[int, tuple] = field(default_factory=dict)  # seat -> keys of its latest acked frames
    idle_since: int | None = None  # when the last connected seat left (or the room was created)
    # gateway process -> spectator sockets there
    watchers: dict[str, int] = field(default_factory=dict)
    public: bool = False  # listed for strangers; starts by itself (see `_public_lobby`)
    language: str | None = None  # a public table's language
    starts_at: int | None = None  # a public lobby's countdown: when it starts by itself (ms)
    acted: frozenset = frozenset()  # seats of a public game that acted since the last deadline
    opened_at: int | None = None  # when the room was created (ms): a lobby's age
    # What the unplayed-game rule counts from (`endings.game_closes`): when the table was last heard
    # from (a command all of it sees, the deal, or a wait with no deadline beginning; the public
    # chat lines are read from the chat itself), and the last game day that heard from it.
    played_at: int | None = None
    played_day: int | None = None
    # A public lobby's seats removed by vote: their token hashes, name skeletons and address marks
    # (the last BARRED_KEPT), never seated there again, and how many were so removed.
    barred: tuple[str, ...] = ()
    voted_out: int = 0
    # Played on one phone passed around (its host says so: `table`): the phone paces the nights
    # and starts the day's clock (RULES.md, "One phone"). Always private. Its seats are those
    # marked `Player.phone`; any other plays online ("One phone + online").
    phone: bool = False

    def listing(self) -> Listing | None:
        """What the public tables' index shows of this room (actors.tables writes it): a public
        table's kind, seats and start, while it is stored (its creator seated) and not over;
        None for a private one, and for a lobby emptied (nobody to play with, no countdown: the
        next seat, by press or link, lists it again)."""
        if not self.public or self.status in FINAL or self.seq == 0:
            return None
        if self.status == "lobby" and (not self.players or self.voted_out >= VOTED_OUT_UNLISTED):
            return None
        return Listing(Kind(self.settings.preset, self.language), self.status == "running",
                       len(self.players), rules.max_players(self.settings), self.starts_at,
                       sum(p.bot for p in self.players))

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
            "barred": self.barred,
            "voted_out": self.voted_out,
            "phone": self.phone,
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
            barred=tuple(d.get("barred", ())),
            voted_out=d.get("voted_out", 0),
            phone=d.get("phone", False),  # a snapshot stored before one phone: online
        ), [orjson.loads(item) for item in stored.tail])

    def lobby(self) -> dict:
        """The public lobby facts (also the lobby part of every view)."""
        return {
            "room": self.code,
            "status": self.status,
            "host": 0,
            "players": [{"seat": seat, "name": p.name, "connected": p.connected, "away": p.away,
                         "bot": p.bot, "phone": p.phone} for seat, p in enumerate(self.players)],
            "settings": self.settings.to_json(),
            "roles_in_play": roles_in_play(len(self.players), self.settings),
            "spectators": sum(self.watchers.values()),
            "public": self.public,
            "language": self.language,
            "phone": self.phone,
            "starts_at": self.starts_at,
            "remove_votes": self.remove_votes(),
        }

    def remove_votes(self) -> dict[int, dict]:
        """A public lobby's votes to remove each seat: {seat: {"votes", "needed"}}."""
        needed = votes_to_remove(len(self.players))
        return {seat: {"votes": len(p.removers), "needed": needed}
                for seat, p in enumerate(self.players) if p.removers}

    def bot_seats(self) -> set[int]:
        """The seats bots play now: a running game's (in a lobby they wait for the deal)."""
        if self.status != "running":
            return set()
        return {seat for seat, player in enumerate(self.players) if player.bot}

    def view(self, seat: int, chat_lines: int | None = None) -> dict:
        """What `seat` may know; a spectator (WATCHER) gets the public table only. With
        `chat_lines`, the last that many lines of each chat channel (`rules.view`)."""
        view = self.lobby()
        if self.game is not None and self.status != "broken":  # a broken game may not even render
            view.update(rules.public_view(self.game, chat_lines) if seat == WATCHER
                        else rules.view(self.game, seat, chat_lines))
        return view

    def welcome(self, seat: int) -> dict:
        """{"seq": S, "view": ...}: what a socket of `seat` is welcomed with at this data's seq,
        the last WELCOME_CHAT_LINES of each chat channel (`chat_omitted` counts the others)."""
        return {"seq": self.seq, "view": self.view(seat, WELCOME_CHAT_LINES)}


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
    EventKind("joined", ("seat", "name", "bot", "roles_in_play"), EVERYONE,
              "a seat is taken in the lobby (`bot`: by a bot; a seat already listed: a human "
              "took a bot's seat); the cards the table would deal now"),
    EventKind("bot_seat", ("seat", "bot"), EVERYONE,
              "a running game's seat is played by a bot from now on (true: its player left or "
              "turned away), or its player took it back (false)"),
    EventKind("presence", ("seat", "connected"), EVERYONE, "a seat's sockets came or all went"),
    EventKind("spectators", ("count",), EVERYONE, "how many watch",
              types={"count": {"type": "integer", "minimum": 0}}),
    EventKind("settings", ("settings", "roles_in_play"), EVERYONE, "the host changed the settings"),
    EventKind("table", ("public", "language", "phone", "phone_seats"), EVERYONE,
              "the table went public or private, or is played on one phone (`phone`): the seats "
              "on it `phone_seats`, the others online",
              types={"phone_seats": {"type": "array", "items": {"type": "integer", "minimum": 0}}}),
    EventKind("countdown", ("starts_at",), EVERYONE,
              "a public table starts by itself at starts_at (null: the countdown stopped)"),
    EventKind("removed", ("seat", "name", "reason", "moved", "roles_in_play", "remove_votes"),
              EVERYONE,
              "a seat left the lobby or was removed; `moved`: the last seat took its place"),
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
    if "unseat" in event:  # the seats whose sockets must go (actors.subscriptions)
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


def _with_game(data: RoomData, game: rules.GameState) -> RoomData:
    status = "finished" if rules.outcome(game) is not None else "running"
    return replace(data, game=game, status=status)


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
