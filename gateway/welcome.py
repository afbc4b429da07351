"""A socket's welcome: the room's view of its seat at a seq, as the frame it sends, fetched once
for every socket of that seat saying hello at once (gateway/ws.py sends it)."""
from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

import orjson

from actors import WATCHER, RoomClient


def forbids_spectators(view: dict) -> bool:
    """The lobby facts, a view or a `settings` event say the house rule forbids spectators."""
    return (view.get("settings") or {}).get("rules", {}).get("spectators") == "forbidden"


def forbidding(event: dict) -> bool:
    """A `settings` event that forbids spectators (read only when its text may say so)."""
    frame = event["frame"]
    if '"forbidden"' not in frame or '"kind":"settings"' not in frame:
        return False
    data = orjson.loads(frame)
    return data.get("kind") == "settings" and forbids_spectators(data)


@dataclass(frozen=True)
class Welcome:
    """A welcome as a socket sends it: the frame's text, made once."""
    seq: int = 0
    text: str = ""
    moved: bool = False  # the token's seat moved (a lobby seat was removed): no welcome
    forbids_spectators: bool = False


# RoomClient -> {(room, seat, proof): the welcome being fetched}
_welcomes_in_flight: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def shared_welcome(rooms: RoomClient, room: str, seat: int, proof: str | None) -> Welcome:
    """The room's welcome for `seat`, one request for every socket of that seat (or, WATCHER, of
    a spectator) asking while it is fetched: 168 sockets saying hello at once cost the room's host
    one view. A welcome at S is right for any socket subscribed to the room, even one that
    subscribed after it was asked for: what it missed after S comes from the log (its `Since`,
    module docstring), and its queue skips what S already holds."""
    flights = _welcomes_in_flight.setdefault(rooms, {})
    key = (room, seat, proof)
    flight = flights.get(key)
    if flight is None:
        flight = flights[key] = asyncio.ensure_future(_fetch_welcome(rooms, room, seat, proof))
        flight.add_done_callback(lambda done: flights.pop(key, None) if flights.get(key) is done
                                 else None)
    return await asyncio.shield(flight)  # a socket that gives up leaves it to the others


async def _fetch_welcome(rooms: RoomClient, room: str, seat: int, proof: str | None) -> Welcome:
    welcome = await rooms.welcome(room, seat, proof)
    if welcome.get("moved"):
        return Welcome(moved=True)
    view = welcome["view"]
    text = orjson.dumps({"type": "welcome", "seat": None if seat == WATCHER else seat,
                         "seq": welcome["seq"], "view": view}).decode()
    return Welcome(welcome["seq"], text, forbids_spectators=forbids_spectators(view))
