"""What the browser client loads: the rules as data, its WebSocket, and its static files
(mounted last by `create_app`, so the API routes win)."""
from __future__ import annotations

from pathlib import Path

import orjson
from fastapi import APIRouter, Response
from fastapi.staticfiles import StaticFiles

from actors import EVENTS
from bots.claims import CATALOGUE, KINDS, ROLE_NAMES
from gateway.ws import websocket_endpoint
from rules import declaration

# The rules never change while a gateway runs. With every event kind a frame may carry (the
# rules' and the room's): its fields, who hears it and what it means; and the bots' structured
# lines (bots/claims.py), which the client's quick claims render with the very same words.
DECLARATION = {**declaration(), "events": {kind: k.to_json() for kind, k in EVENTS.items()},
               "claims": {"kinds": KINDS, "catalogue": CATALOGUE, "role_names": ROLE_NAMES}}
# Encoded once: re-encoding it took 2 ms of the event loop per request, which any client could
# repeat at will (issue 34: another room's ping median went from 6 to 61 ms).
DECLARATION_JSON = orjson.dumps(DECLARATION)

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"

router = APIRouter()
router.add_api_websocket_route("/ws/{room}", websocket_endpoint)


@router.get("/api/rules")
async def declared_rules():
    """The roles, rules and presets as data (rules.declaration()): the client fetches it once
    and builds the host's form, the rules shown to every seat and the help from it (no
    welcome carries it: it was 80 % of a lobby welcome's bytes)."""
    return Response(DECLARATION_JSON, media_type="application/json")


def static_files() -> StaticFiles:
    """The client's files; html=True serves index.html at "/"."""
    return StaticFiles(directory=STATIC_DIR, html=True)
