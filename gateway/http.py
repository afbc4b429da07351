"""uvicorn's httptools HTTP protocol with a deadline for each request to arrive, bounded request
heads, and a bounded kernel send buffer for every connection (WebSockets included).

uvicorn times out a keep-alive connection between requests, but not a connection that never
sends a request, nor one that sends its headers or body a byte at a time: such connections were
held without end (19,900 of them took 16,047 of 20,000 file descriptors). Here a request, from
its connection or its first byte to its last one, must arrive within `WW_HTTP_REQUEST_TIMEOUT`
seconds (default 10), or the connection is closed. A WebSocket is past this deadline once its
upgrade request has arrived; the hello deadline (gateway.ws) takes over from there.

Nor does uvicorn bound a request's head, and httptools joins the pieces of a header value as they
arrive (`bytes +=`, quadratic): one 128 MiB header cost a gateway 10.2 s of CPU, and every other
socket of the process waited meanwhile (a ping's ack took 4.2 s). Here a request line and headers
of more than `MAX_HEAD_BYTES`, or more than `MAX_HEADERS` headers, are answered `431` and the
connection closed; the bytes are counted as they arrive, before the parser sees them, so a huge
header is cut at the limit however slowly it comes.
"""
from __future__ import annotations

import asyncio
import os
import socket

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

REQUEST_TIMEOUT = float(os.environ.get("WW_HTTP_REQUEST_TIMEOUT", "10"))
# A request's head: its request line and headers, with their line ends (browsers send 0.5-2 KiB;
# this gateway sets no cookie).
MAX_HEAD_BYTES = int(os.environ.get("WW_HTTP_MAX_HEAD_BYTES", str(16 << 10)))
MAX_HEADERS = int(os.environ.get("WW_HTTP_MAX_HEADERS", "100"))
# Seconds a refused head's connection stays open (reading nothing more), so that a client that
# sends its whole head before it reads gets the 431, not a reset.
REFUSED_LINGER = 1.0
# The kernel's send buffer of a connection, fixed instead of autotuned (which lets it reach
# tcp_wmem's 4 MB): a client that stops reading then holds this much of the gateway's memory,
# not megabytes, and its writes block soon enough for the slow-socket guard to see it. Game
# frames are small: 64 KiB still moves 5 Mbit/s at a 100 ms round trip.
SEND_BUFFER_BYTES = 64 << 10

_TOO_LARGE_BODY = b"request header fields too large\n"


def too_large(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The 431, with the server's default headers (the security headers) as uvicorn's own 400."""
    return b"".join([
        STATUS_LINE[431], *(name + b": " + value + b"\r\n" for name, value in default_headers),
        b"content-type: text/plain; charset=utf-8\r\n",
        b"content-length: %d\r\n" % len(_TOO_LARGE_BODY), b"connection: close\r\n\r\n",
        _TOO_LARGE_BODY])


class TimedHttpProtocol(HttpToolsProtocol):
    _deadline: asyncio.TimerHandle | None = None
    _in_head = True  # reading a request's head (none yet counts: what comes is one)
    _head_bytes = 0  # of the head being read
    _header_count = 0
    _head_refused = False  # answered 431: what still comes is discarded

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """uvicorn's, feeding the parser at most what keeps the head within MAX_HEAD_BYTES (and
        the rest in pieces of that size, so the next request's head, pipelined behind a body in
        one read, is never fed unbounded either)."""
        if self._head_refused:
            return
        self._unset_keepalive_if_required()
        rest = memoryview(data)
        while rest and not self.transport.is_closing():
            size = MAX_HEAD_BYTES - self._head_bytes if self._in_head else MAX_HEAD_BYTES
            piece, rest = rest[:size], rest[size:]
            if self._in_head:
                self._head_bytes += len(piece)
            try:
                self.parser.feed_data(piece)
            except httptools.HttpParserError:
                if self._head_refused:  # MAX_HEADERS: on_header stopped the parser
                    return self._refuse_head()
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)
                return
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
                return
            if self._in_head and self._head_bytes >= MAX_HEAD_BYTES:
                return self._refuse_head()  # the limit reached and the head not over

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_count = 0
        if self._deadline is None:  # the next request on a kept-alive connection
            self._arm()

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > MAX_HEADERS:
            self._head_refused = True
            raise ValueError("too many headers")  # stops the parser: feed_data raises
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()

    def _refuse_head(self) -> None:
        """431, then close REFUSED_LINGER later; nothing more is read meanwhile."""
        self._head_refused = True
        self._disarm()
        self.transport.pause_reading()
        self.transport.write(too_large(self.server_state.default_headers))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(REFUSED_LINGER, self.transport.close)

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
