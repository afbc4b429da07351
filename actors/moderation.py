"""Moderation, in the lobby and in a public game: a seat leaves, the host removes one from a
private table, a public table's seats vote one out, a public lobby lets go of the seats that hold
no socket, and a public game's seat that lets the shared prompts pass is away, then passes them.

Pure handlers and helpers like the lobby's (actors.lobby), applied by the room (actors.room).
"""
from __future__ import annotations

from dataclasses import replace

import rules
from rules import roles_in_play
from actors.lobby import LobbyTiming, _public_lobby
from actors.names import name_skeleton
from actors.room_data import (BARRED_KEPT, Change, Player, Refused, RoomData, _with_game,
                              votes_to_remove)

# Past GONE_AFTER prompts let pass in a row, a public game's seat votes at once where every
# living seat votes alike (RULES.md, "Away seats"; away from AWAY_AFTER: actors.room_data).
GONE_AFTER = 4


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
    if reason == "vote":  # not seated at this table again, by its token, name or address
        barred = removed.barred + (gone.token_hash, name_skeleton(gone.name)) + (
            (gone.address,) if gone.address else ())
        removed = replace(removed, barred=barred[-BARRED_KEPT:], voted_out=data.voted_out + 1)
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
    """A seat leaves the lobby; in a running game a bot plays it from then on (its player may
    take it back). The host of a private lobby takes its bots with it: a human stays the host."""
    if data.status == "running":
        if data.players[seat].bot:
            raise Refused("not_your_turn", "a bot already plays this seat")
        return Change(*_bot_plays(data, seat, True))
    if data.status != "lobby":
        raise Refused("not_your_turn", "the game is over")
    change = Change(data, [])
    if seat == 0:
        for bot in reversed([s for s, p in enumerate(data.players) if p.bot]):
            removed = _remove(change.data, now, bot, "host", timing)
            change = Change(removed.data, change.events + removed.events,
                            change.seated + removed.seated)
    left = _remove(change.data, now, seat, "left", timing)
    return Change(left.data, change.events + left.events, change.seated + left.seated)


def _bot_plays(data: RoomData, seat: int, bot: bool) -> tuple[RoomData, list[dict]]:
    """From now on a bot plays a running game's seat (True), or its player again (False)."""
    players = list(data.players)
    if bot:
        players[seat] = replace(players[seat], bot=True)
        events = [{"kind": "bot_seat", "to": None, "seat": seat, "bot": True}]
    else:
        players[seat], events = _player_back(players[seat], seat)
    return replace(data, players=tuple(players)), events


def _player_back(player: Player, seat: int) -> tuple[Player, list[dict]]:
    """A bot-played seat's player is back: no bot, and no longer away (a bot's answers did not
    count: the seat stayed away while its player was)."""
    events = [{"kind": "bot_seat", "to": None, "seat": seat, "bot": False}]
    if player.away:
        events.append({"kind": "away", "to": None, "seat": seat, "away": False})
    return replace(player, bot=False, missed=0), events


def _remove_bot(data: RoomData, now: int, seat: int, frame: dict, timing: LobbyTiming) -> Change:
    """The host of a private lobby sends a bot away (the last seat moves into its place)."""
    target = frame.get("seat")
    if seat != 0 or data.public:
        raise Refused("not_host", "only the host of a private table removes a bot")
    if data.status != "lobby":
        raise Refused("not_your_turn", "a bot is removed in the lobby only")
    if type(target) is not int or not 0 <= target < len(data.players) \
            or not data.players[target].bot:
        raise Refused("illegal_target", "remove_bot needs the seat of a bot")
    return _remove(data, now, target, "host", timing)


def _remove_seat(data: RoomData, now: int, seat: int, frame: dict, timing: LobbyTiming) -> Change:
    """A private table's host removes a seat; at a public one, a seat votes to remove another,
    which goes once most of the others voted so; only seats seated `timing.settled` ago vote or
    are voted on."""
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
    if not _settled(data.players[seat], now, timing):
        raise Refused("not_your_turn", f"a seat votes {timing.settled // 1000} s after it sat down")
    if not _settled(accused, now, timing):
        raise Refused("not_your_turn", "this seat just sat down: it cannot be voted out yet")
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


def _settled(player: Player, now: int, timing: LobbyTiming) -> bool:
    return player.seated_at is None or now >= player.seated_at + timing.settled


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
        if player.bot:  # a bot answers for it: its player stays as away as it was
            continue
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
            if changed.away and not changed.bot:  # a bot plays it until its player is back
                players[seat] = replace(changed, bot=True)
                events.append({"kind": "bot_seat", "to": None, "seat": seat, "bot": True})
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
