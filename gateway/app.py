"""The gateway: HTTP API, WebSocket sessions, health, metrics and the static client (their
routes in gateway/routes/; here the app: its lifespan, middleware and error handlers).

Stateless: everything about a room lives in Redis and in its host actor, reached through
`actors.client.RoomClient`; the process only keeps its sockets and its pub/sub subscriptions.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import math
import signal
import threading
import time
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from actors import Config, RoomClient, StorageUnavailable, freeze_startup_heap, watch_loop_lag
from gateway.limits import AddressLimits, Bursts, client_address
from gateway.metrics import Metrics
from gateway.routes import admin, health, pages, rooms, tables
from gateway.seats import LocalSeats, PresenceReports
from gateway.state import GatewayState
from gateway.tables import PublicTables
from gateway.ws import keep_presence_lease, report_presence

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 8192  # every body is a name or a token; a larger one is refused unread (413)

GAUGE_INTERVAL = 1.0
STORAGE_RETRY_AFTER = 5  # seconds a client waits before it tries again while Redis is unreachable

ROUTERS = [rooms.router, tables.router, admin.router, pages.router, health.router]


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


class LimitBursts:
    """Plain ASGI, outermost: a request of a kind past its address's burst (`Bursts`) is answered
    429 before the body is read or the app runs (a refusal the app answered cost it every
    middleware, the body's validation and a Redis count)."""

    def __init__(self, app, bursts: Bursts) -> None:
        self.app, self.bursts = app, bursts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and (what := burst_kind(scope["method"], scope["path"])):
            client = scope.get("client")
            wait = self.bursts.wait(what, client_address(client[0] if client else None))
            if wait:
                retry_after = math.ceil(wait)
                refusal = JSONResponse(
                    {"detail": {"code": "rate_limited",
                                "message": f"too many {BURST_THINGS[what]} at once from this "
                                           f"address: try again in {retry_after} s"}},
                    status_code=429, headers={"Retry-After": str(retry_after)})
                return await refusal(scope, receive, send)
        await self.app(scope, receive, send)


def burst_kind(method: str, path: str) -> str | None:
    """The kind of burst a request counts in (Config's quick_play_burst, report_burst)."""
    if method != "POST":
        return None
    if path == "/api/quickplay":
        return "quickplay"
    if path.startswith("/api/rooms/") and path.endswith("/reports"):
        return "reports"
    return None




BURST_THINGS = {"quickplay": "quick-play presses", "reports": "reports"}


async def _too_large(send) -> None:
    body = b'{"detail":{"code":"too_large","message":"a request body is at most %d bytes"}}' % (
        MAX_BODY_BYTES)
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"connection", b"close"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def sample_gauges(metrics: Metrics, seats: LocalSeats, rooms: RoomClient) -> None:
    """Lifespan task: gauges read from this process's state, set every second (prometheus_client's
    multiprocess mode reads values from its files, so a gauge cannot be a callback), and the
    counts kept off the per-frame path added to their counters."""
    while True:
        metrics.rooms.set(seats.room_count)
        metrics.flush()
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
                                 config.limit_window, config.room_max_age()),
            presence=PresenceReports(seats, functools.partial(report_presence, rooms)),
            tables=PublicTables(rooms))
        watchdogs = [asyncio.create_task(keep_presence_lease(gw)),
                     asyncio.create_task(watch_loop_lag(metrics.loop_lag.observe)),
                     asyncio.create_task(sample_gauges(metrics, seats, rooms))]
        freeze_startup_heap()
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
    app.add_middleware(LimitBursts, bursts=Bursts({
        "quickplay": (config.quick_play_burst if config.quick_plays_per_address else 0,
                      config.quick_play_pace),
        "reports": (config.report_burst if config.reports_per_address else 0,
                    config.report_pace)}))

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

    for router in ROUTERS:
        app.include_router(router)
    # Last, so the API routes win.
    app.mount("/", pages.static_files(), name="static")
    return app


def app_from_env() -> FastAPI:
    """uvicorn factory (`gateway.app:app_from_env`): configuration from the environment."""
    return create_app(Config.from_env())
