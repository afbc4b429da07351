"""When a room ends by itself, whoever is connected (RULES.md, "Unplayed games"; the lifecycle in
actors/room.py): an empty table after its idle time, a lobby at its maximum age, a running game
nobody plays or that lasted too long. Pure functions of the room's data; the room's timer
(`room.wakeup`, `room._tick`) asks them when to wake and whether to close.
"""
from __future__ import annotations

from dataclasses import replace

import rules
from actors.lobby import LobbyTiming
from actors.room_data import RoomData

# A timed game is unplayed once this many whole days passed with nothing the table saw from a seat
# (and LobbyTiming.game_idle did): RULES.md, "Unplayed games".
QUIET_DAYS = 2


def idle_limit(data: RoomData, idle_close: int | None, lobby_idle_close: int | None) -> int | None:
    if data.status == "lobby" and lobby_idle_close is not None:
        return lobby_idle_close if idle_close is None else min(idle_close, lobby_idle_close)
    return idle_close


def lobby_closes(data: RoomData, timing: LobbyTiming | None) -> int | None:
    """When a lobby closes however many are connected: `timing.max_age` after its creation."""
    if timing is None or timing.max_age is None or data.opened_at is None:
        return None
    return data.opened_at + timing.max_age


def game_closes(data: RoomData, timing: LobbyTiming | None) -> tuple[int, str] | None:
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
            rules.next_deadline(data.game) is None or _quiet(data)):
        ends.append((_heard_at(data) + timing.game_idle, "unplayed"))
    return min(ends, default=None)


def _heard_at(data: RoomData) -> int:
    """When the table was last heard from: `played_at`, or a later line of the public chat that
    `counts`."""
    line = next((line for line in reversed(data.game.chat)
                 if line.get("to") is None and counts(data, line["seat"])), None)
    return data.played_at if line is None else max(data.played_at, line["ts"])


def _quiet(data: RoomData) -> bool:
    """QUIET_DAYS whole days passed since the table was last heard from."""
    return data.played_day is not None and data.game.day - 1 - data.played_day >= QUIET_DAYS


def counts(data: RoomData, seat: int) -> bool:
    """Whether a command of `seat` may be the table heard from: a human's; a bot's only once bots
    play every living seat (the game then plays itself out while its humans, dead or gone,
    watch). Bots alone must not keep up a game its humans stopped playing: a silent wolf and two
    bots voting each other would play on until the game's maximum age."""
    return not data.players[seat].bot or all(
        data.players[s].bot for s, alive in enumerate(data.game.alive) if alive)


def heard(data: RoomData, now: int, day: int) -> RoomData:
    """The whole table saw a seat's command (one that `counts`, or the deal) at `now`, in game
    day `day`."""
    return replace(data, played_at=now, played_day=day)


def waits_untimed(old: RoomData, new: RoomData, now: int) -> RoomData:
    """A wait with no deadline (a discussion without a timer) beginning now is counted from now:
    the night before it heard nothing from the table, and must not count. Not once the table is
    quiet (the bots, who end such waits, would otherwise put its end off day after day)."""
    if new.status == "running" and rules.next_deadline(new.game) is None \
            and rules.next_deadline(old.game) is not None and not _quiet(new):
        return replace(new, played_at=now)
    return new


def closed(reason: str) -> dict:
    return {"kind": "closed", "to": None, "reason": reason}
