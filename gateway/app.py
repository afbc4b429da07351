"""The gateway: HTTP API, WebSocket sessions, health, metrics and the static client.

Stateless: everything about a room lives in Redis and in its host actor, reached through
`actors.client.RoomClient`; the process only keeps its sockets and its pub/sub subscriptions.
"""
from __future__ import annotations

import asyncio
import functools
import hmac
import logging
import signal
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Literal

import orjson
import ray
from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST

from actors import (EVENTS, AgainRefused, Config, Kind, NameTaken, RoomClient, RoomFull,
                    RoomNotFound, RoomStarted, ServerFull, StorageUnavailable, watch_loop_lag)
from gateway.frames import (HttpCreate, HttpName, HttpQuickPlay, HttpReport, HttpSeat, HttpTables,
                            HttpToken)
from gateway.limits import AddressLimits, client_address
from gateway.metrics import Metrics
from bots.claims import CATALOGUE, KINDS, ROLE_NAMES
from rules import declaration
from gateway.seats import LocalSeats, PresenceReports
from gateway.state import GatewayState, gateway_state
from gateway.tables import PublicTables
from gateway.ws import keep_presence_lease, report_presence, websocket_endpoint

# The rules never change while a gateway runs. With every event kind a frame may carry (the
# rules' and the room's): its fields, who hears it and what it means; and the bots' structured
# lines (bots/claims.py), which the client's quick claims render with the very same words.
DECLARATION = {**declaration(), "events": {kind: k.to_json() for kind, k in EVENTS.items()},
               "claims": {"kinds": KINDS, "catalogue": CATALOGUE, "role_names": ROLE_NAMES}}

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
READY_TIMEOUT = 2.0

REVIEW_EVENTS = 20_000  # events a review answers at most (a long chatty game stores ~5,000)
MAX_BODY_BYTES = 8192  # every body is a name or a token; a larger one is refused unread (413)

GAUGE_INTERVAL = 1.0
STORAGE_RETRY_AFTER = 5  # seconds a client waits before it tries again while Redis is unreachable

# The HTTP status of each `again` refusal.
AGAIN_STATUS = {"not_authenticated": 401, "not_host": 403, "not_your_turn": 409}


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


class GuardRequests:
    """Plain ASGI, outermost: refuses a body past MAX_BODY_BYTES with 413 before the app sees it
    (a declared Content-Length at once; a chunked body as soon as it grows past the limit, so
    at most that much is ever held)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
            return await _too_large(send)
        body, message = b"", {"more_body": True}
        while message.get("more_body"):
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            body += message.get("body", b"")
            if len(body) > MAX_BODY_BYTES:
                return await _too_large(send)
        replayed = False

        async def receive_body():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, receive_body, send)


async def _too_large(send) -> None:
    body = b'{"detail":{"code":"too_large","message":"a request body is at most %d bytes"}}' % (
        MAX_BODY_BYTES)
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _refusal(status: int, code: str, message: str, retry_after: int | None = None) -> HTTPException:
    headers = None if retry_after is None else {"Retry-After": str(retry_after)}
    return HTTPException(status, {"code": code, "message": message}, headers=headers)


async def sample_gauges(metrics: Metrics, seats: LocalSeats, rooms: RoomClient) -> None:
    """Lifespan task: gauges read from this process's state, set every second (prometheus_client's
    multiprocess mode reads values from its files, so a gauge cannot be a callback)."""
    while True:
        metrics.rooms.set(seats.room_count)
        metrics.requests_waiting.set(rooms.pending_requests())
        await asyncio.sleep(GAUGE_INTERVAL)


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
        rooms.observe_push = metrics.inbox_push.observe
        rooms.subscriptions.observe_read = metrics.events_read.inc
        app.state.gateway = gw = GatewayState(
            config=config, rooms=rooms, seats=seats, metrics=metrics,
            limits=AddressLimits(rooms.redis, rooms.keys, config.request_patience,
                                 config.limit_window, config.lobby_max_age),
            presence=PresenceReports(seats, functools.partial(report_presence, rooms)),
            tables=PublicTables(rooms))
        watchdogs = [asyncio.create_task(keep_presence_lease(gw)),
                     asyncio.create_task(watch_loop_lag(metrics.loop_lag.observe)),
                     asyncio.create_task(sample_gauges(metrics, seats, rooms))]
        try:
            yield
        finally:
            for task in watchdogs:
                task.cancel()
            await rooms.close()
            metrics.process_exited()

    # The OpenAPI document stays at /openapi.json; the /docs and /redoc pages would load
    # scripts from a CDN on this origin.
    app = FastAPI(title="Werewolf gateway", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.add_middleware(TimeRequests, metrics=metrics)
    app.add_middleware(GuardRequests)

    @app.exception_handler(RequestValidationError)
    async def unprocessable(request: Request, exc: RequestValidationError):
        # Where and why only: echoing the input sends a large body back, and a lone surrogate
        # in it cannot even be encoded.
        errors = [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(StorageUnavailable)
    async def storage_unavailable(request: Request, exc: StorageUnavailable):
        # Redis stayed unreachable for all of WW_REQUEST_PATIENCE (a failover that takes long):
        # whatever the request had begun was given back (RoomClient._open_room).
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": {"code": "storage_unavailable",
                                        "message": "the game store cannot be reached, try again"}},
                            status_code=503, headers={"Retry-After": str(STORAGE_RETRY_AFTER)})

    async def not_guessing(request: Request, gw: GatewayState) -> str:
        """Refuse an address that tried too many unknown room codes (429); returns the address."""
        address = client_address(request.client and request.client.host)
        limit = gw.config.lookup_failures_per_address
        if limit and await gw.limits.spent("lookups", address) >= limit:
            raise _refusal(429, "rate_limited", "too many unknown room codes from this address",
                           gw.limits.retry_after())
        return address

    async def not_found(gw: GatewayState, address: str) -> HTTPException:
        if gw.config.lookup_failures_per_address:
            await gw.limits.spend("lookups", address)
        return HTTPException(404, {"code": "room_not_found"})

    async def spend(gw: GatewayState, what: str, address: str, limit: int, things: str) -> None:
        """Count one more `what` of `address` in the window; 429 past `limit` (0: no limit)."""
        if limit and await gw.limits.spend(what, address) > limit:
            raise _refusal(429, "rate_limited", f"at most {limit} {things} per address in "
                           f"{gw.limits.retry_after() // 60 + 1} minutes", gw.limits.retry_after())

    async def not_holding_too_much(gw: GatewayState, address: str, lobby: bool = False) -> None:
        """429 if the address already holds its share of lobbies (opening one) or lobby seats:
        held lobbies must not fill the server (docs/architecture.md, "Abuse limits")."""
        config, limits = gw.config, gw.limits
        if lobby and await limits.holds_too_much("lobbies", address,
                                                 config.open_lobbies_per_address):
            raise _refusal(429, "rate_limited", f"at most {config.open_lobbies_per_address} open "
                           "lobbies per address: start or leave one first", 60)
        if await limits.holds_too_much("seats", address, config.lobby_seats_per_address):
            raise _refusal(429, "rate_limited", f"at most {config.lobby_seats_per_address} seats "
                           "in lobbies per address: start or leave one first", 60)

    async def held(gw: GatewayState, address: str, seated: dict, lobby: bool = False) -> None:
        """Count what the address now holds (only while a cap is on)."""
        config, room = gw.config, seated["room"]
        if lobby and config.open_lobbies_per_address:
            await gw.limits.hold("lobbies", address, room, room)
        if config.lobby_seats_per_address:
            await gw.limits.hold("seats", address, room, f"{room}:{seated['seat']}")

    async def admit_room(gw: GatewayState, address: str) -> None:
        """Count one more new room of `address` (a creation or a play again); 429 past the limit."""
        await spend(gw, "rooms", address, gw.config.rooms_per_address, "new rooms")

    @app.post("/api/rooms", status_code=201, response_model=HttpSeat,
              responses={429: {"description": "rate_limited: too many rooms from this address"},
                         503: {"description": "server_full: every host slot is taken; "
                                              "storage_unavailable: Redis unreachable"}})
    async def create_room(body: HttpCreate, request: Request, gw: Gateway):
        address = client_address(request.client and request.client.host)
        await not_holding_too_much(gw, address, lobby=True)
        await admit_room(gw, address)
        try:
            seated = await gw.rooms.create_room(
                body.name, Kind(body.preset, body.language) if body.public else None)
            await held(gw, address, seated, lobby=True)
            return seated
        except ServerFull:
            raise _refusal(503, "server_full", "no room can be opened now, try again later",
                           60) from None

    @app.post("/api/quickplay", response_model=HttpSeat,
              responses={429: {"description": "rate_limited: too many presses from this address"},
                         503: {"description": "server_full: no table could be opened; "
                                              "storage_unavailable: Redis unreachable"}})
    async def quick_play(body: HttpQuickPlay, request: Request, gw: Gateway):
        """Seat the caller at the fullest open public table of the preset and language, or at
        a new one (which the caller then hosts, for its durations only)."""
        address = client_address(request.client and request.client.host)
        await spend(gw, "quickplay", address, gw.config.quick_plays_per_address, "quick plays")
        await not_holding_too_much(gw, address)
        try:
            seated = await gw.rooms.quick_play(body.name, Kind(body.preset, body.language),
                                               body.press)
            await held(gw, address, seated)
            return seated
        except ServerFull:
            raise _refusal(503, "server_full", "no table can be opened now, try again later",
                           60) from None

    @app.get("/api/tables", response_model=HttpTables)
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

    @app.post("/api/rooms/{room}/join", response_model=HttpSeat,
              responses={404: {"description": "no such room"},
                         409: {"description": "room_full, room_started or name_taken"},
                         429: {"description": "rate_limited: too many unknown room codes"},
                         503: {"description": "storage_unavailable: Redis unreachable"}})
    async def join_room(room: str, body: HttpName, request: Request, gw: Gateway):
        address = await not_guessing(request, gw)
        limit = gw.config.joins_per_address  # seats taken: a loop of leaving and joining again
        if limit and await gw.limits.spent("joins", address) >= limit:
            raise _refusal(429, "rate_limited", f"at most {limit} joins per address in "
                           f"{gw.limits.retry_after() // 60 + 1} minutes", gw.limits.retry_after())
        await not_holding_too_much(gw, address)
        try:
            seated = await gw.rooms.join(room, body.name)
            if limit:
                await gw.limits.spend("joins", address)
            await held(gw, address, seated)
            return seated
        except RoomNotFound:
            raise await not_found(gw, address) from None
        except RoomFull:
            raise HTTPException(409, {"code": "room_full"}) from None
        except RoomStarted:
            raise HTTPException(409, {"code": "room_started"}) from None
        except NameTaken:
            raise HTTPException(409, {"code": "name_taken"}) from None

    @app.post("/api/rooms/{room}/again", response_model=HttpSeat,
              responses={401: {"description": "not_authenticated"}, 403: {"description": "not_host"},
                         404: {"description": "no such room"},
                         409: {"description": "not_your_turn: the game is not over"},
                         429: {"description": "rate_limited: too many rooms from this address"},
                         503: {"description": "server_full: every host slot is taken; "
                                              "storage_unavailable: Redis unreachable"}})
    async def play_again(room: str, body: HttpToken, request: Request, gw: Gateway):
        address = await not_guessing(request, gw)
        try:
            # The next game is a new room: it counts against the clicking address's rooms.
            return await gw.rooms.again(room, body.token, admit=lambda: admit_room(gw, address))
        except RoomNotFound:
            raise await not_found(gw, address) from None
        except ServerFull:
            raise _refusal(503, "server_full", "no room can be opened now, try again later",
                           60) from None
        except AgainRefused as e:
            raise HTTPException(AGAIN_STATUS.get(e.code, 409), {"code": e.code}) from None

    @app.post("/api/rooms/{room}/reports", status_code=201,
              responses={401: {"description": "not_authenticated: the token is no seat's"},
                         404: {"description": "no such room (or past its TTL)"},
                         409: {"description": "illegal_target: itself, or no such seat"},
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
                                {"code": e.code}) from None
        return {"ok": True, "duplicate": not filed}

    @app.get("/api/admin/reports", include_in_schema=False)
    async def admin_reports(request: Request, gw: Gateway,
                            limit: Annotated[int, Query(ge=1, le=1000)] = 100):
        """Operators only (docs/protocol.md, "Admin"): the newest reports with the reported
        lines. Without WW_ADMIN_SECRET there is no admin API at all (404)."""
        secret = gw.config.admin_secret
        if not secret:
            raise HTTPException(404, {"code": "room_not_found"})
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {secret}".encode()):
            raise HTTPException(401, {"code": "not_authenticated"},
                                headers={"WWW-Authenticate": "Bearer"})
        return {"reports": await gw.rooms.reports(limit)}

    @app.get("/api/rooms/{room}", responses={404: {"description": "no such room"},
                                             429: {"description": "rate_limited"}})
    async def room_facts(room: str, request: Request, gw: Gateway):
        address = await not_guessing(request, gw)
        try:
            return await gw.rooms.lobby(room)
        except RoomNotFound:
            raise await not_found(gw, address) from None

    @app.get("/api/rooms/{room}/review",
             responses={404: {"description": "no such room (or past its TTL)"},
                        409: {"description": "not_your_turn: the game is not over"}})
    async def review(room: str, request: Request, gw: Gateway):
        """A finished game's whole stored log, every audience's events (after the end nothing is
        secret any more): what the review page replays. Kept as long as the room (finished_ttl).
        An unknown code counts against the lookups of the address (it was an existence oracle);
        the log is read up to REVIEW_EVENTS (`truncated` says if more were stored)."""
        address = await not_guessing(request, gw)
        try:
            facts = await gw.rooms.lobby(room)
        except RoomNotFound:
            raise await not_found(gw, address) from None
        if facts["status"] != "finished":
            raise HTTPException(409, {"code": "not_your_turn"})
        events = await gw.rooms.events_after(facts["room"], 0, REVIEW_EVENTS + 1)
        truncated = len(events) > REVIEW_EVENTS
        events = events[:REVIEW_EVENTS]
        # The stored frames are JSON text already: joined, not parsed and written again. Each
        # keeps its audience (`to`: null = everybody), which the review shows as what was secret.
        head = orjson.dumps({**{k: facts[k] for k in ("room", "players", "settings", "next")},
                             "truncated": truncated})
        items = b",".join(b'{"to":%s,"event":%s}' % (orjson.dumps(e["to"]), e["frame"].encode())
                          for e in events)
        body = head[:-1] + b',"events":[' + items + b"]}"
        return Response(body, media_type="application/json")

    @app.get("/api/rules")
    async def declared_rules():
        """The roles, rules and presets as data (rules.declaration()): the client fetches it once
        and builds the host's form, the rules shown to every seat and the help from it (no
        welcome carries it: it was 80 % of a lobby welcome's bytes)."""
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
    async def prometheus(request: Request, gw: Gateway):
        """With WW_METRICS_TOKEN set, Prometheus scrapes with `authorization: credentials:` (the
        token as a bearer): the metrics tell rooms and traffic to whoever reads them."""
        token = gw.config.metrics_token
        if token and not hmac.compare_digest(request.headers.get("authorization", "").encode(),
                                             f"Bearer {token}".encode()):
            raise HTTPException(401, {"code": "not_authenticated"},
                                headers={"WWW-Authenticate": "Bearer"})
        return Response(metrics.text(), media_type=CONTENT_TYPE_LATEST)

    app.add_api_websocket_route("/ws/{room}", websocket_endpoint)
    # Last, so the API routes win; html=True serves index.html at "/".
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="static")
    return app


def app_from_env() -> FastAPI:
    """uvicorn factory (`gateway.app:app_from_env`): configuration from the environment."""
    return create_app(Config.from_env())
