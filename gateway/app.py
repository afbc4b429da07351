"""The gateway: HTTP API, WebSocket sessions, health, metrics and the static client.

Stateless: everything about a room lives in Redis and in its host actor, reached through
`actors.client.RoomClient`; the process only keeps its sockets and its pub/sub subscriptions.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated

import ray
from fastapi import Depends, FastAPI, HTTPException, Response
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, StringConstraints

from actors.client import AgainRefused, NameTaken, RoomClient, RoomFull, RoomNotFound, RoomStarted
from actors.config import Config
from actors.metrics import watch_loop_lag
from gateway.metrics import Metrics
from rules import declaration
from gateway.seats import LocalSeats
from gateway.state import GatewayState, gateway_state
from gateway.ws import drop_slow_sockets, keep_presence_lease, websocket_endpoint

DECLARATION = declaration()  # the rules never change while a gateway runs

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
READY_TIMEOUT = 2.0

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=24)]


class NameBody(BaseModel):
    name: Name


class TokenBody(BaseModel):
    token: str


# The HTTP status of each `again` refusal.
AGAIN_STATUS = {"not_authenticated": 401, "not_host": 403, "not_your_turn": 409}


class Seat(BaseModel):
    room: str
    seat: int
    token: str


Gateway = Annotated[GatewayState, Depends(gateway_state)]


class TimeRequests:
    """HTTP latency by route and status, as plain ASGI: `@app.middleware("http")` wraps every
    request in a task group and its own streams (a visible share of a gateway's CPU while tables
    arrive), and WebSockets need not pass through it at all."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started, status = time.perf_counter(), [500]

        async def send_status(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)
        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            self.metrics.http_seconds.labels(
                scope["method"], getattr(route, "path", None) or "static", str(status[0]),
            ).observe(time.perf_counter() - started)


def create_app(config: Config) -> FastAPI:
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        rooms = RoomClient(config)
        # ray.init() makes SIGTERM a bare sys.exit; keep uvicorn's graceful shutdown instead.
        on_sigterm = signal.getsignal(signal.SIGTERM)
        await rooms.start()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_sigterm)
        seats = LocalSeats()
        metrics.rooms.set_function(lambda: seats.room_count)
        metrics.requests_waiting.set_function(rooms.pending_requests)
        rooms.observe_push = metrics.inbox_push.observe
        app.state.gateway = gw = GatewayState(config=config, rooms=rooms, seats=seats,
                                              metrics=metrics)
        watchdogs = [asyncio.create_task(drop_slow_sockets(gw.sessions, metrics)),
                     asyncio.create_task(keep_presence_lease(gw)),
                     asyncio.create_task(watch_loop_lag(metrics.loop_lag.observe))]
        try:
            yield
        finally:
            for task in watchdogs:
                task.cancel()
            await rooms.close()

    app = FastAPI(title="Werewolf gateway", lifespan=lifespan)
    app.add_middleware(TimeRequests, metrics=metrics)

    @app.post("/api/rooms", status_code=201, response_model=Seat)
    async def create_room(body: NameBody, gw: Gateway):
        return await gw.rooms.create_room(body.name)

    @app.post("/api/rooms/{room}/join", response_model=Seat,
              responses={404: {"description": "no such room"},
                         409: {"description": "room_full, room_started or name_taken"}})
    async def join_room(room: str, body: NameBody, gw: Gateway):
        try:
            return await gw.rooms.join(room, body.name)
        except RoomNotFound:
            raise HTTPException(404, {"code": "room_not_found"}) from None
        except RoomFull:
            raise HTTPException(409, {"code": "room_full"}) from None
        except RoomStarted:
            raise HTTPException(409, {"code": "room_started"}) from None
        except NameTaken:
            raise HTTPException(409, {"code": "name_taken"}) from None

    @app.post("/api/rooms/{room}/again", response_model=Seat,
              responses={401: {"description": "not_authenticated"}, 403: {"description": "not_host"},
                         404: {"description": "no such room"},
                         409: {"description": "not_your_turn: the game is not over"}})
    async def play_again(room: str, body: TokenBody, gw: Gateway):
        try:
            return await gw.rooms.again(room, body.token)
        except RoomNotFound:
            raise HTTPException(404, {"code": "room_not_found"}) from None
        except AgainRefused as e:
            raise HTTPException(AGAIN_STATUS.get(e.code, 409), {"code": e.code}) from None

    @app.get("/api/rooms/{room}")
    async def room_facts(room: str, gw: Gateway):
        try:
            return await gw.rooms.lobby(room)
        except RoomNotFound:
            raise HTTPException(404, {"code": "room_not_found"}) from None

    @app.get("/api/rules")
    async def declared_rules():
        """The roles, rules and presets as data (rules.declaration()), for the help page's
        generated tables and the rules shown during a game; the lobby view carries it too."""
        return DECLARATION

    @app.get("/healthz")
    async def healthz():
        return {"ok": True}

    @app.get("/readyz")
    async def readyz(gw: Gateway):
        checks = {"redis": False, "ray": False}
        try:
            checks["redis"] = bool(await asyncio.wait_for(gw.rooms.redis.ping(), READY_TIMEOUT))
        except Exception:
            log.warning("readyz: Redis unreachable", exc_info=True)
        try:
            # ray.nodes() asks the GCS, so it fails when the cluster is gone.
            nodes = await asyncio.wait_for(asyncio.to_thread(ray.nodes), READY_TIMEOUT)
            checks["ray"] = any(node.get("Alive") for node in nodes)
        except Exception:
            log.warning("readyz: Ray unreachable", exc_info=True)
        ok = all(checks.values())
        return JSONResponse({"ok": ok, **checks}, status_code=200 if ok else 503)

    @app.get("/metrics")
    async def prometheus():
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    app.add_api_websocket_route("/ws/{room}", websocket_endpoint)
    # Last, so the API routes win; html=True serves index.html at "/".
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="static")
    return app


def app_from_env() -> FastAPI:
    """uvicorn factory (`gateway.app:app_from_env`): configuration from the environment."""
    return create_app(Config.from_env())
