"""The gateway's worker processes: uvicorn, serving `gateway.app:app_from_env` (each worker
builds its app from the environment the command line set)."""
from __future__ import annotations

import os
import sys
import time
import urllib.request
from contextlib import contextmanager

from gateway.serve.processes import STARTUP_TIMEOUT
from gateway.serve.stopping import STOP

WS_MAX_BYTES = 1 << 20  # frames between 4 KiB and this get a `bad_frame` error; above, close 1009
# uvicorn's WebSocket implementations; the default is the cheapest per frame measured here
# (loadtest/README.md, "WebSocket implementations").
# "framed": websockets-sansio writing each event's frame as the same bytes to all its sockets
# (gateway/framing.py); the others are uvicorn's own.
WS_IMPLEMENTATIONS = ("framed", "websockets-sansio", "websockets", "wsproto")
SHUTDOWN_GRACE_SECONDS = 10  # SIGTERM: open connections get this long to close, then are closed


def uvicorn_ws(name: str) -> str:
    """uvicorn's `ws` setting for one of WS_IMPLEMENTATIONS."""
    return "gateway.framing:FramedWebSocketProtocol" if name == "framed" else name


def uvicorn_config(host: str, port: int, workers: int, ws: str, log_level: str):
    import uvicorn

    from gateway.headers import SECURITY_HEADERS

    return uvicorn.Config(
        "gateway.app:app_from_env", factory=True, host=host, port=port,
        workers=workers, loop="uvloop", ws=uvicorn_ws(ws),
        ws_max_size=WS_MAX_BYTES,
        ws_per_message_deflate=False,  # see gateway/framing.py
        http="gateway.http:TimedHttpProtocol", limit_concurrency=_max_connections(),
        headers=[(k.decode(), v.decode()) for k, v in SECURITY_HEADERS],
        # a socket that never closes may not hold a SIGTERM up: closed after this long
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        log_level=log_level)


def run_gateway(config) -> None:
    """uvicorn.run, but a signal noted before uvicorn listened for its own is acted on too (it
    would otherwise be lost: the gateway would serve on)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    if config.workers > 1:
        supervisor = Multiprocess(config, sockets=[config.bind_socket()])
        try:  # its handlers are in place: anything later reaches its queue
            if STOP.signum is not None:
                supervisor.signal_queue.append(STOP.signum)
            supervisor.run()
        finally:
            STOP.install()  # uvicorn leaves its handlers, which only queue, installed
        return

    class Server(uvicorn.Server):
        @contextmanager
        def capture_signals(self):
            with super().capture_signals():
                if STOP.signum is not None:
                    self.handle_exit(STOP.signum, None)
                yield

    server = Server(config)
    try:
        server.run()
    finally:
        # This process was a Ray driver: leave while the head still answers (at exit, after the
        # head is stopped, ray's own shutdown waited ~8 s for it).
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()
    if not server.started and STOP.signum is None:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE: the app did not start (it said why)


def _max_connections() -> int:
    """Connections a gateway process takes before answering 503: what its open-file limit
    holds, less a reserve for Redis, Ray and files (a process out of descriptors fails at
    everything, its healthy sockets included)."""
    if os.environ.get("WW_MAX_CONNECTIONS"):
        return int(os.environ["WW_MAX_CONNECTIONS"])
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(256, soft - 1024)


def announce(url: str) -> None:
    """Print the URL to open once the gateway is ready (Ray and Redis reachable)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "readyz", timeout=2):
                print(f"Open {url}", flush=True)
                return
        except OSError:  # not listening yet, or 503 (HTTPError is an OSError) while starting
            time.sleep(0.3)
