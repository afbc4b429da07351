"""A request to a room's host and its reply, both ends in one place: what a gateway process sends
(`write_request`), how the host reads it (`read_request`), how the reply goes back (the host's
`Outbox`, or riding the events of the write the command caused: `Rider`, `riders_item`), and how
the gateway takes it (`replies_in`, `events_and_replies`, `settle`). Why requests travel
through Redis and not as Ray calls: docs/architecture.md, "actors/".

On the wire:
- a request, in the host's inbox (`P:host:{H}:inbox`): `[gateway id, request number, kind, code,
  seat, arg]`; a command's arg is `[frame, received, proof, listening]`;
- replies on the gateway's channel (`P:replies:{gateway id}`): `{"host": H, "replies": [[number,
  status, value], ...]}`, those completed in one turn of the host's loop in one message;
- replies riding a write's events message on the room's channel: `[event, ..., {"replies":
  {gateway id: [[number, status, value], ...]}}]`, for the commands of gateways listening to the
  room (`listening`): one SPUBLISH and one message to read fewer per command, and the gateway
  hands the ack over after the events, so an ack never overtakes what it caused.

The room never reads a gateway id or a request number: it is handed a command's `Rider` as it
is, gives the riders of a write with events to its store beside the events, and answers `RODE`
for them.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

import orjson

# A reply's status: the value (REPLY_OK), or "the room is unavailable" (raised to the caller only).
REPLY_OK = 0
REPLY_UNAVAILABLE = 1
# What the room answers a command whose reply rode the write's events message: the host has
# nothing left to send.
RODE = object()

log = logging.getLogger(__name__)


class RoomUnavailable(Exception):
    """The room could not be loaded (e.g. Redis is unreachable); retrying later may work."""


class Rider(NamedTuple):
    """Where a command's reply goes if it rides its write's events: the gateway process that
    listens to the room, and its request's number."""
    gateway: str
    number: int


class Request(NamedTuple):
    """A request as the host reads it; a command's `arg` is (frame, received, proof, rider)."""
    gateway: str
    number: int
    kind: str
    code: str
    seat: int | None
    arg: Any


# -- the gateway sends, the host reads --------------------------------------------------------

def write_request(gateway: str, number: int, kind: str, code: str, seat: int | None, arg) -> bytes:
    return orjson.dumps([gateway, number, kind, code, seat, arg])


def read_request(raw: bytes) -> Request:
    """Raises ValueError or TypeError for a request that cannot be read."""
    gateway, number, kind, code, seat, arg = orjson.loads(raw)
    if kind == "command" and isinstance(arg, list) and len(arg) == 4:
        # a gateway listening to the room may take the reply with the events
        arg = [*arg[:3], Rider(gateway, number) if arg[3] else None]
    return Request(gateway, number, kind, code, seat, arg)


# -- the host replies ---------------------------------------------------------------------------

def riders_item(rides: Sequence[tuple[Rider, Any]]) -> bytes:
    """The replies riding an events message (its last element), b"" for none."""
    if not rides:
        return b""
    replies: dict[str, list] = {}
    for rider, reply in rides:
        replies.setdefault(rider.gateway, []).append([rider.number, REPLY_OK, reply])
    return orjson.dumps({"replies": replies})


def events_message(events: list[bytes], riders: bytes = b"") -> bytes:
    """Stored events as one message of a room's channel: a JSON array, `riders_item` last (as the
    store's persist script sends it)."""
    return b"[" + b",".join([*events, riders] if riders else events) + b"]"


def reply_message(host: str, replies: list) -> bytes:
    return orjson.dumps({"host": host, "replies": replies}, option=orjson.OPT_NON_STR_KEYS)


class Outbox:
    """A host's replies, each put as soon as it is done and sent once the replies completed in
    this turn of the loop are in: one message per gateway process (`send`: to its channel)."""

    def __init__(self, host: str, send: Callable[[str, bytes], Awaitable[None]],
                 keep: Callable[[asyncio.Task], None]) -> None:
        self._host = host
        self._send = send
        self._keep = keep  # the host's running tasks (stopped with it)
        self._replies: dict[str, list] = {}  # gateway -> [request number, status, reply]
        self._flushing = False

    def put(self, gateway: str, number: int, reply) -> None:
        """`reply`: a value, RoomUnavailable (raised to the caller), or RODE (already sent)."""
        if reply is RODE:
            return
        if isinstance(reply, RoomUnavailable):
            self._replies.setdefault(gateway, []).append([number, REPLY_UNAVAILABLE, str(reply)])
        else:
            self._replies.setdefault(gateway, []).append([number, REPLY_OK, reply])
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(
                lambda: self._keep(asyncio.create_task(self._flush())))

    async def _flush(self) -> None:
        replies, self._replies, self._flushing = self._replies, {}, False
        for gateway, items in replies.items():
            try:
                await self._send(gateway, reply_message(self._host, items))
            except Exception as e:  # the gateway times out, asks for our incarnation and waits on
                log.warning("host %s: replies to %s lost (%r)", self._host, gateway, e)


# -- the gateway takes the reply ----------------------------------------------------------------

def replies_in(message: bytes) -> list:
    """The replies of a message on a gateway's reply channel."""
    return orjson.loads(message)["replies"]


def events_and_replies(message: bytes, gateway: str | None) -> tuple[list[dict], list]:
    """A room channel's message: its events, and the replies riding them for `gateway`."""
    events = orjson.loads(message)
    riders = events.pop()["replies"] if events and "replies" in events[-1] else {}
    return events, riders.get(gateway, [])


def settle(waiting: dict[int, asyncio.Future], replies: list) -> None:
    """Answer the requests waiting for these replies (by request number)."""
    for number, status, value in replies:
        future = waiting.get(number)
        if future is None or future.done():  # answered twice (a resend), or given up on
            continue
        if status == REPLY_UNAVAILABLE:
            future.set_exception(RoomUnavailable(value))
        else:
            future.set_result(value)
