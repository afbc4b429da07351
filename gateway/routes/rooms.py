"""A room by its code: create, join, play again, report a seat, its lobby's facts, and the review
of a finished game."""
from __future__ import annotations

import orjson
from fastapi import APIRouter, HTTPException, Request, Response

from actors import (AgainRefused, Kind, NameTaken, RoomFull, RoomNotFound, RoomStarted,
                    ServerFull)
from gateway.frames import HttpCreate, HttpName, HttpReport, HttpSeat, HttpToken
from gateway.routes.admission import (Holding, address_of, admit_room, not_found, not_guessing,
                                      refusal, server_full, spend)
from gateway.state import Gateway, GatewayState

# Bytes of events a review answers at most: it is read whole and sent at once, so its bound is
# its size, not its count of events. A game's events average ~95 bytes (tests/rules/golden); a
# long chatty game of ~5,000 events, each a full 500-letter line of Arabic (2 bytes a letter),
# would store ~5.8 MB.
REVIEW_BYTES = 8 << 20
REVIEW_PAGE = 1000  # events read from the log at a time

# The HTTP status of each `again` refusal.
AGAIN_STATUS = {"not_authenticated": 401, "not_host": 403, "not_your_turn": 409}

router = APIRouter()


@router.post("/api/rooms", status_code=201, response_model=HttpSeat,
             responses={429: {"description": "rate_limited: too many rooms from this address"},
                        503: {"description": "server_full: every host slot is taken; "
                                             "storage_unavailable: Redis unreachable"}})
async def create_room(body: HttpCreate, request: Request, gw: Gateway):
    address = address_of(request)
    holding = Holding(gw, address)
    await holding.reserve(lobby=True)
    try:
        await admit_room(gw, address)
        seated = await gw.rooms.create_room(
            body.name, Kind(body.preset, body.language) if body.public else None, address)
        await holding.settle(seated, lobby=True)
        return seated
    except ServerFull:
        raise server_full("room") from None
    finally:
        await holding.release()


@router.post("/api/rooms/{room}/join", response_model=HttpSeat,
             responses={404: {"description": "no such room"},
                        409: {"description": "room_full, room_started or name_taken"},
                        429: {"description": "rate_limited: too many unknown room codes"},
                        503: {"description": "storage_unavailable: Redis unreachable"}})
async def join_room(room: str, body: HttpName, request: Request, gw: Gateway):
    address = await not_guessing(request, gw)
    limit = gw.config.joins_per_address  # seats taken: a loop of leaving and joining again
    if limit and await gw.limits.spent("joins", address) >= limit:
        raise refusal(429, "rate_limited", f"at most {limit} joins per address in "
                      f"{gw.limits.retry_after() // 60 + 1} minutes", gw.limits.retry_after())
    holding = Holding(gw, address)
    await holding.reserve()
    try:
        seated = await gw.rooms.join(room, body.name, address=address)
        if limit:
            await gw.limits.spend("joins", address)
        await holding.settle(seated)
        return seated
    except RoomNotFound:
        raise await not_found(gw, address) from None
    except RoomFull:
        raise HTTPException(409, {"code": "room_full"}) from None
    except RoomStarted:
        raise HTTPException(409, {"code": "room_started"}) from None
    except NameTaken:
        raise HTTPException(409, {"code": "name_taken"}) from None
    finally:
        await holding.release()


@router.post("/api/rooms/{room}/again", response_model=HttpSeat,
             responses={401: {"description": "not_authenticated"},
                        403: {"description": "not_host"},
                        404: {"description": "no such room"},
                        409: {"description": "not_your_turn: the game is not over"},
                        429: {"description": "rate_limited: too many rooms from this address"},
                        503: {"description": "server_full: every host slot is taken; "
                                             "storage_unavailable: Redis unreachable"}})
async def play_again(room: str, body: HttpToken, request: Request, gw: Gateway):
    address = await not_guessing(request, gw)
    holding = Holding(gw, address)

    async def admit() -> None:  # not for a retried click: that room is counted already
        await holding.reserve(lobby=True)
        await admit_room(gw, address)
    try:
        # The next game is a new room: it counts against the clicking address's rooms, and is
        # one it holds (else a finished game, even an unplayed one, was a way out of the count).
        seated = await gw.rooms.again(room, body.token, admit=admit)
        await holding.settle(seated, lobby=True)
        return seated
    except RoomNotFound:
        raise await not_found(gw, address) from None
    except ServerFull:
        raise server_full("room") from None
    except AgainRefused as e:
        raise HTTPException(AGAIN_STATUS.get(e.code, 409), {"code": e.code}) from None
    finally:
        await holding.release()


@router.post("/api/rooms/{room}/reports", status_code=201,
             responses={401: {"description": "not_authenticated: the token is no seat's"},
                        404: {"description": "no such room (or past its TTL)"},
                        409: {"description": "illegal_target: itself, or no such seat; "
                                             "too_many_reports: this seat's or this room's bound "
                                             "is reached"},
                        429: {"description": "rate_limited: too many reports from this address"}})
async def report(room: str, body: HttpReport, request: Request, gw: Gateway):
    """A seat reports another (in the lobby, the game or the review): kept for operators."""
    address = await not_guessing(request, gw)
    await spend(gw, "reports", address, gw.config.reports_per_address, "reports")
    try:
        filed = await gw.rooms.report(room, body.token, body.seat, body.reason, body.text)
    except RoomNotFound:
        raise await not_found(gw, address) from None
    except AgainRefused as e:
        raise HTTPException(401 if e.code == "not_authenticated" else 409,
                            {"code": e.code, "message": str(e)}) from None
    return {"ok": True, "duplicate": not filed}


@router.get("/api/rooms/{room}", responses={404: {"description": "no such room"},
                                            429: {"description": "rate_limited"}})
async def room_facts(room: str, request: Request, gw: Gateway):
    address = await not_guessing(request, gw)
    try:
        return await gw.rooms.lobby(room)
    except RoomNotFound:
        raise await not_found(gw, address) from None


@router.get("/api/rooms/{room}/review",
            responses={404: {"description": "no such room (or past its TTL)"},
                       409: {"description": "not_your_turn: the game is not over"},
                       429: {"description": "rate_limited: too many reviews from this address"}})
async def review(room: str, request: Request, gw: Gateway):
    """A finished game's whole stored log, every audience's events (after the end nothing is
    secret any more): what the review page replays. Kept as long as the room (finished_ttl).
    An unknown code counts against the lookups of the address (it was an existence oracle);
    each read counts against the address's reviews (it answers up to REVIEW_BYTES); the log is
    read up to REVIEW_BYTES of events (`truncated` says if more were stored)."""
    address = await not_guessing(request, gw)
    await spend(gw, "reviews", address, gw.config.reviews_per_address, "reviews")
    try:
        facts = await gw.rooms.lobby(room)
    except RoomNotFound:
        raise await not_found(gw, address) from None
    if facts["status"] != "finished":
        raise HTTPException(409, {"code": "not_your_turn"})
    items, truncated = await review_items(gw, facts["room"])
    head = orjson.dumps({**{k: facts[k] for k in ("room", "players", "settings", "next")},
                         "truncated": truncated})
    body = head[:-1] + b',"events":[' + b",".join(items) + b"]}"
    return Response(body, media_type="application/json")


async def review_items(gw: GatewayState, room: str) -> tuple[list[bytes], bool]:
    """The log's events as the review's items, read a page at a time up to REVIEW_BYTES (and
    whether more were stored). The stored frames are JSON text already:
    joined, not parsed and written again. Each keeps its audience (`to`: null = everybody),
    which the review shows as what was secret."""
    items: list[bytes] = []
    size = 0
    while True:
        page = await gw.rooms.events_after(room, len(items), len(items) + REVIEW_PAGE)
        for event in page:
            item = b'{"to":%s,"event":%s}' % (orjson.dumps(event["to"]), event["frame"].encode())
            if size + len(item) + 1 > REVIEW_BYTES:
                return items, True
            items.append(item)
            size += len(item) + 1
        if len(page) < REVIEW_PAGE:
            return items, False
