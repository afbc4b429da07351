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
from actors.names import BadName, bot_name, clean_name, name_skeleton
from actors.room_data import BOT_TOKEN, Change, Player, Refused, RoomData, _with_game
from actors.tables import LANGUAGES


@dataclass(frozen=True)
class LobbyTiming:
    """How long a lobby waits (ms). A public one: from the moment it seats its preset's minimum
    to its start, and for a seat without a socket before it is removed (a closed tab must not
    hold a stranger's table). Any lobby: `max_age` from its creation, connected or not, before it
    closes (a lobby held open by one socket must not hold its host slot for ever); None: no
    limit. A game, however many are connected: `game_idle` with no command the table sees ends it
    (`endings.game_closes`), and it lasts at most `game_max_age` from the room's creation; None:
    never. A public lobby's seat votes to remove, and may be voted out, only `settled` after it
    sat down (a table cannot remove a newcomer the moment it arrives, nor newcomers vote at once).
    """
    countdown: int = 30_000
    absent: int = 60_000
    max_age: int | None = None
    game_idle: int | None = None
    game_max_age: int | None = None
    settled: int = 20_000


# A public table whose countdown ends short is filled with bots to its preset's smallest table,
# but to this many at least: a table of 6 or 7 is over in two nights.
PUBLIC_FILL = 8


def fill_size(settings: rules.Settings) -> int:
    """How many seats a public table whose countdown ended has once bots filled it."""
    return min(rules.max_players(settings), max(rules.min_players(settings), PUBLIC_FILL))


def _join(data: RoomData, now: int, name: str, token_hash: str, promised: bool, address: str,
          timing: LobbyTiming):
    """`promised`: the table index already counted this seat (a quick-play press claimed it);
    `address`: the joiner's mark, refused with its token and name once voted out."""
    for seat, player in enumerate(data.players):
        if player.token_hash == token_hash:  # a retried join that already happened
            return {"seat": seat}, None
    if data.status != "lobby":
        raise Refused("room_started", "the game has started")
    try:
        name = clean_name(name)
    except BadName as e:
        raise Refused(BadName.code, str(e)) from None
    # Until the deal, a human takes a bot's seat (the lowest): bots never keep a table from
    # filling with humans. In place: the seat keeps its number, nobody else moves.
    bot = token_hash.startswith(BOT_TOKEN)  # a bot of the last game at this table (`again`)
    bot_seat = None if bot else next((s for s, p in enumerate(data.players) if p.bot), None)
    most = rules.max_players(data.settings)  # 18, or 20 for seed 004's range
    if len(data.players) >= most and bot_seat is None:
        raise Refused("room_full", f"the room has {most} players")
    skeleton = name_skeleton(name)  # a look-alike of a seated name is taken too
    if {token_hash, skeleton, address} & set(data.barred):  # quick play tries another table
        raise Refused("room_full", "this table voted you out: it has no seat for you")
    if any(name_skeleton(p.name) == skeleton for s, p in enumerate(data.players) if s != bot_seat):
        raise Refused("name_taken",
                      f"{name!r} is taken in this room (or looks like a name that is)")
    joiner = Player(name=name, token_hash=token_hash, absent_since=None if bot else now, bot=bot,
                    seated_at=now, address=address)
    if bot_seat is None:
        seat, players = len(data.players), data.players + (joiner,)
    else:
        seat, players = bot_seat, data.players[:bot_seat] + (joiner,) + data.players[bot_seat + 1:]
    # The deal depends on how many are seated: every page's lobby shows the new one.
    event = {"kind": "joined", "to": None, "seat": seat, "name": name, "bot": bot,
             "roles_in_play": roles_in_play(len(players), data.settings)}
    change = Change(replace(data, players=players), [event])
    if data.public:
        change = _public_lobby(change, now, timing)
        # the index counts seats: a press counted its own, a bot's seat taken adds none
        change.seated = (0 if promised else 1) - (bot_seat is not None)
    return {"seat": seat}, change


def _public_lobby(change: Change, now: int, timing: LobbyTiming) -> Change:
    """A public table starts by itself: at once when it is full, else `timing.countdown` ms after
    its first seat (a later joiner resets nothing; the table emptying stops it), filled up with
    bots then if it is short (`_fill_and_deal`)."""
    data = change.data
    seated = len(data.players)
    if seated >= rules.max_players(data.settings):
        dealt = _deal(replace(data, starts_at=None), now)
        return Change(dealt.data, change.events + dealt.events)
    starts_at = data.starts_at
    if seated and starts_at is None:
        starts_at = now + timing.countdown
    elif not seated:
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
    """The host of a private table makes it public (listed, in `language`) or private again (link
    only), and says whether it is played on one phone passed around (`phone`, kept when not
    given) and which seats are on it (`phone_seats`; not given: those already, or every human
    seat), the others online; a public table has no host: the strangers seated there must not
    find themselves at a private table with a host."""
    _lobby_host(data, seat, "open or close the table")
    if data.public:
        raise Refused("not_host", "a public table has no host: it stays public, in its language")
    public, language = frame.get("public"), frame.get("language", data.language or "en")
    phone = frame.get("phone", data.phone)
    if type(public) is not bool or type(phone) is not bool or language not in LANGUAGES:
        raise Refused("bad_frame", f"table needs public true or false, phone true or false and "
                                   f"a language among {list(LANGUAGES)}")
    if public and phone:
        raise Refused("bad_frame", "a table played on one phone is private")
    if public and data.settings.preset is None:
        raise Refused("not_your_turn", "a public table plays a preset: pick one first")
    players = _phone_seats(data, phone, frame.get("phone_seats"))
    changed = replace(data, public=public, language=language if public else data.language,
                      starts_at=None, phone=phone, players=players)
    event = {"kind": "table", "to": None, "public": public, "language": changed.language,
             "phone": phone, "phone_seats": [s for s, p in enumerate(players) if p.phone]}
    change = Change(changed, [event])
    return _public_lobby(change, now, timing) if public else change


def _phone_seats(data: RoomData, phone: bool, seats) -> tuple[Player, ...]:
    """The players, each marked as played on the table's phone or not (`_table`)."""
    humans = {s for s, p in enumerate(data.players) if not p.bot}
    if seats is None:
        marked = {s for s, p in enumerate(data.players) if p.phone}
        seats = (marked or humans) if phone else set()
    elif not isinstance(seats, list) or any(type(s) is not int for s in seats) \
            or not phone or not seats or not set(seats) <= humans:
        raise Refused("bad_frame", "phone_seats needs phone true and some of the human seats")
    return tuple(replace(p, phone=s in seats) for s, p in enumerate(data.players))


def _add_bot(data: RoomData, now: int, seat: int, frame: dict) -> Change:
    """The host of a private lobby seats a bot (a public table has no host powers)."""
    _lobby_host(data, seat, "add a bot")
    if data.public:
        raise Refused("not_host", "a public table fills with bots by itself")
    if len(data.players) >= rules.max_players(data.settings):
        raise Refused("not_your_turn", "the table is full")
    return _with_bot(data, [])


def _with_bot(data: RoomData, events: list[dict]) -> Change:
    """A bot takes the next seat: a name no seat has, a token nobody holds (no socket opens it)."""
    name = bot_name([p.name for p in data.players])
    players = data.players + (Player(name=name, token_hash=BOT_TOKEN + secrets.token_hex(16),
                                     bot=True),)
    event = {"kind": "joined", "to": None, "seat": len(data.players), "name": name, "bot": True,
             "roles_in_play": roles_in_play(len(players), data.settings)}
    return Change(replace(data, players=players), [*events, event])


def _fill_and_deal(data: RoomData, now: int) -> Change:
    """A public table's countdown ended: bots take the seats it lacks (`fill_size`), then the
    deal."""
    events: list[dict] = []
    while len(data.players) < fill_size(data.settings):
        change = _with_bot(data, events)
        data, events = change.data, change.events
    dealt = _deal(replace(data, starts_at=None), now)
    return Change(dealt.data, events + dealt.events)


def _deal(data: RoomData, now: int) -> Change:
    # a phone table's seats that are not on it play online (a lobby kept from before: none)
    online = [s for s, p in enumerate(data.players) if not p.phone] \
        if any(p.phone for p in data.players) else []
    game, events = rules.start_game(names=[p.name for p in data.players], settings=data.settings,
                                    seed=secrets.randbits(63), now=now, phone=data.phone,
                                    online=online)
    # the table is heard from at the deal (day 1 may be quiet: `endings.game_closes`)
    return Change(replace(_with_game(data, game), played_at=now, played_day=game.day - 1), events)
