"""uvicorn's httptools HTTP protocol with a deadline for each request to arrive, and a bounded
kernel send buffer for every connection (WebSockets included).

uvicorn times out a keep-alive connection between requests, but not a connection that never
sends a request, nor one that sends its headers or body a byte at a time: such connections were
held without end (19,900 of them took 16,047 of 20,000 file descriptors). Here a request, from
its connection or its first byte to its last one, must arrive within `WW_HTTP_REQUEST_TIMEOUT`
seconds (default 10), or the connection is closed. A WebSocket is past this deadline once its
upgrade request has arrived; the hello deadline (gateway.ws) takes over from there.
"""
from __future__ import annotations

import asyncio
import os
import socket

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_TIMEOUT = float(os.environ.get("WW_HTTP_REQUEST_TIMEOUT", "10"))
# The kernel's send buffer of a connection, fixed instead of autotuned (which lets it reach
# tcp_wmem's 4 MB): a client that stops reading then holds this much of the gateway's memory,
# not megabytes, and its writes block soon enough for the slow-socket guard to see it. Game
# frames are small: 64 KiB still moves 5 Mbit/s at a 100 ms round trip.
SEND_BUFFER_BYTES = 64 << 10


class TimedHttpProtocol(HttpToolsProtocol):
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:  # the next request on a kept-alive connection
            self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(REQUEST_TIMEOUT, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()
