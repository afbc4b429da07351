"""The lobby's handlers: a seat joins, the host edits the settings, opens or closes the table,
starts; a public table counts down and starts by itself; the deal.

Handlers are pure functions of the room's data (actors.room_data) and the time, applied one at a
time by the room's single writer (actors.room); they raise Refused or rules.RulesError to refuse.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, replace

import rules
from rules import roles_in_play
from actors.names import BadName, clean_name, name_skeleton
from actors.room_data import Change, Player, Refused, RoomData, _with_game
from actors.tables import LANGUAGES


@dataclass(frozen=True)
class LobbyTiming:
    """How long a lobby waits (ms). A public one: from the moment it seats its preset's minimum
    to its start, and for a seat without a socket before it is removed (a closed tab must not
    hold a stranger's table). Any lobby: `max_age` from its creation, connected or not, before it
    closes (a lobby held open by one socket must not hold its host slot for ever); None: no
    limit. A game, however many are connected: `game_idle` with no command the table sees ends it
    (`room._game_closes`), and it lasts at most `game_max_age` from the room's creation; None:
    never."""
    countdown: int = 30_000
    absent: int = 60_000
    max_age: int | None = None
    game_idle: int | None = None
    game_max_age: int | None = None


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
        raise Refused("name_taken",
                      f"{name!r} is taken in this room (or looks like a name that is)")
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
    # the table is heard from at the deal (day 1 may be quiet: `room._game_closes`)
    return Change(replace(_with_game(data, game), played_at=now, played_day=game.day - 1), events)
