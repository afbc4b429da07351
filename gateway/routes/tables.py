"""The public tables: quick play (a seat at the fullest open table of a kind) and their list."""
from __future__ import annotations

import functools
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Request

from actors import Kind, ServerFull
from gateway.frames import HttpQuickPlay, HttpSeat, HttpTables
from gateway.routes.admission import Holding, address_of, refusal, server_full, spend
from gateway.state import Gateway

router = APIRouter()


@router.post("/api/quickplay", response_model=HttpSeat,
             responses={429: {"description": "rate_limited: too many presses from this address"},
                        503: {"description": "server_full: no table could be opened; "
                                             "storage_unavailable: Redis unreachable"}})
async def quick_play(body: HttpQuickPlay, request: Request, gw: Gateway):
    """Seat the caller at the fullest open public table of the preset and language, or at
    a new one (which the caller then hosts, for its durations only)."""
    address = address_of(request)
    await spend(gw, "quickplay", address, gw.config.quick_plays_per_address, "quick plays")
    limit = gw.config.rooms_per_address
    if limit and await gw.limits.spent("rooms", address) >= limit:
        raise refusal(429, "rate_limited", f"at most {limit} new rooms per address in "
                      f"{gw.limits.retry_after() // 60 + 1} minutes", gw.limits.retry_after())
    holding = Holding(gw, address)
    await holding.reserve()  # its seat; a room only if it opens a table (a join holds none)
    try:
        seated = await gw.rooms.quick_play(
            body.name, Kind(body.preset, body.language), body.press, address,
            admit=functools.partial(holding.reserve, lobby=True, seat=False))
        # Seat 0: the press opened the table (a join takes the next seat), so it is a room of
        # this address, as if created by link.
        opened = seated["seat"] == 0
        if opened and limit:
            await gw.limits.spend("rooms", address)
        await holding.settle(seated, lobby=opened)
        return seated
    except ServerFull:
        raise server_full("table") from None
    finally:
        await holding.release()


@router.get("/api/tables", response_model=HttpTables)
async def public_tables(gw: Gateway, state: Literal["open", "running"] = "open",
                        preset: str | None = None, language: str | None = None,
                        page: Annotated[int, Query(ge=1, le=10_000)] = 1):
    """The public tables: open lobbies (fullest first) or running games (newest first, for
    spectators), filtered by preset and language; read from the index, never the rooms."""
    try:
        return await gw.tables.page(state, preset or None, language or None, page)
    except ValueError:
        raise HTTPException(422, {"code": "bad_kind",
                                  "message": "no such preset or language"}) from None
