"""Who is at the table: the seats' sockets (which gateway processes hold them) and the
spectators' counts, as pure handlers of the room's data (applied by actors.room's writer)."""
from __future__ import annotations

from dataclasses import replace

from actors.moderation import _player_back
from actors.room_data import Change, Refused, RoomData


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
        if held and not player.connected and player.bot and data.status == "running":
            # its player is back (a socket of the seat connected): the seat is theirs again
            players[seat], back = _player_back(players[seat], seat)
            events += back
    if any(p.connected for p in players):
        idle_since = None
    else:
        idle_since = now if data.idle_since is None else data.idle_since
    return Change(replace(data, players=tuple(players), idle_since=idle_since), events)
