"""A light WebSocket client for the load generator, on plain sockets (so gevent's, inside Locust).

The `websockets` library's sans-I/O protocol does the opening handshake and frames what the client
sends (masking in C). What the server sends is read here: whatever the kernel holds (up to 64 KiB)
in one `recv`, split into frames by their header. Server frames are unmasked and, from this
gateway, never fragmented, so reading them is a few slices, where websocket-client spends several
`recv` calls and websockets' generator-based parser several Python frames per message (measured:
`python -m loadtest.gencost`).
"""
from __future__ import annotations

import socket
import struct
import threading
from collections import deque
from urllib.parse import urlsplit

from websockets.client import ClientProtocol
from websockets.http11 import Response
from websockets.uri import parse_uri

READ_BYTES = 65536
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING = 0x0, 0x1, 0x2, 0x8, 0x9


class Closed(ConnectionError):
    """The server closed the socket (or the TCP connection ended)."""


class ProtocolError(ConnectionError):
    """The server sent something this client does not expect from the gateway."""


class LightSocket:
    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        self._sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._proto = ClientProtocol(parse_uri(url), max_size=None)
        # A reader's pong and a sender's frame must not interleave on the wire (under gevent's
        # monkey-patching this lock is cooperative).
        self._write = threading.Lock()
        self._buffer = b""
        self._frames: deque[bytes] = deque()
        self._handshake()

    def _handshake(self) -> None:
        self._proto.send_request(self._proto.connect())
        self._flush()
        while True:
            data = self._sock.recv(READ_BYTES)
            if not data:
                raise Closed("connection ended during the handshake")
            self._proto.receive_data(data)
            events = self._proto.events_received()
            if events and isinstance(events[0], Response):
                break
        if self._proto.handshake_exc is not None:
            raise self._proto.handshake_exc
        # Nothing follows the response in that read: the gateway speaks only after our hello.

    def settimeout(self, seconds: float | None) -> None:
        self._sock.settimeout(seconds)

    def send(self, text: str) -> None:
        with self._write:
            self._proto.send_text(text.encode())
            self._sock.sendall(b"".join(self._proto.data_to_send()))

    def recv(self) -> bytes:
        """The next text frame's payload (JSON bytes); raises Closed when the socket ends."""
        while not self._frames:
            data = self._sock.recv(READ_BYTES)
            if not data:
                raise Closed("connection ended")
            self._split(self._buffer + data if self._buffer else data)
        return self._frames.popleft()

    def _split(self, data: bytes) -> None:
        """Every whole frame of `data` to `_frames` (text) or answered (ping); keep the rest."""
        at, end = 0, len(data)
        while end - at >= 2:
            first, second = data[at], data[at + 1]
            if second & 0x80:
                raise ProtocolError("a server frame is masked")
            size, head = second & 0x7F, 2
            if size == 126:
                if end - at < 4:
                    break
                size, head = struct.unpack_from("!H", data, at + 2)[0], 4
            elif size == 127:
                if end - at < 10:
                    break
                size, head = struct.unpack_from("!Q", data, at + 2)[0], 10
            if end - at < head + size:
                break
            payload = data[at + head:at + head + size]
            at += head + size
            opcode = first & 0x0F
            if not first & 0x80 or opcode == OP_CONT:
                raise ProtocolError("a fragmented server frame")
            if opcode == OP_TEXT or opcode == OP_BINARY:
                self._frames.append(payload)
            elif opcode == OP_PING:  # uvicorn's keepalive
                with self._write:
                    self._proto.send_pong(payload)
                    self._sock.sendall(b"".join(self._proto.data_to_send()))
            elif opcode == OP_CLOSE:
                raise Closed("closed by the server")
        self._buffer = data[at:]

    def close(self) -> None:
        try:
            with self._write:
                self._proto.send_close(1000)
                self._flush()
        except Exception:  # already closed or broken: nothing to say goodbye to
            pass
        self._sock.close()

    def _flush(self) -> None:
        data = b"".join(self._proto.data_to_send())
        if data:
            self._sock.sendall(data)
