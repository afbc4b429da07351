"""One WebSocket frame for every recipient of an event, instead of one per socket; and what a
session needs to know of its connection's writes.

uvicorn's websockets-sansio protocol frames each `websocket.send` itself: through Starlette's
wrappers, uvicorn's checks and websockets' `Frame.serialize`, per socket (with the kernel write,
38 % of a gateway's samples under the `rush` load; 27 % with this: loadtest/README.md). Server
frames are not masked, so a text frame is the same bytes on every connection that compresses
nothing: the gateway offers no per-message deflate (its frames are a few hundred bytes; deflate
would compress each one again for every socket, each with a compressor of its own). The
`FRAMED_SEND` ASGI extension of `FramedWebSocketProtocol` writes such bytes as they are.

Such writes never wait for the peer to read, so the session bounds them itself (gateway/ws.py):
the `WRITES` extension tells it the connection's unsent bytes (`unsent`), calls it back when the
write buffer has not drained for a while (`watch`), and drops a connection without waiting for
it to drain (`drop`). A connection the app is done with is reset if it is still open
`LINGER_SECONDS` later: a closed transport keeps its unsent bytes until the peer reads them, for
ever if it never does (10 of 168 sockets that never read were still held after 20 minutes), and
so does the kernel's send queue of a socket closed without a reset.
"""
from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

FRAMED_SEND = "werewolf.framed_send"  # scope["extensions"][FRAMED_SEND]: send_framed(bytes) -> bool
WRITES = "werewolf.writes"  # scope["extensions"][WRITES]: the connection (unsent, watch, drop)
# Seconds a connection may stay open once its app has returned (uvicorn's own close handshake
# waits 10 s for the peer's answer, then closes; a close does not free what the peer never read).
LINGER_SECONDS = 15.0
# Bytes of the peer's parsed at once. uvicorn parses all of one read (up to 256 KiB: 3,000 small
# frames) into the app's queue before it pauses reading, so a socket that the app no longer reads
# (gateway/ws.py, past its limits) cost that parse anyway: 36 flooding sockets, 100,000 frames at
# once. Here the rest of a read waits unparsed, reading paused, until the app has taken the frames
# parsed before it.
FEED_BYTES = 1024


def text_frame(text: str) -> bytes:
    """A final, unmasked text frame carrying `text` (RFC 6455 5.2)."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 1 << 16:
        return struct.pack("!BBH", 0x81, 126, size) + payload
    return struct.pack("!BBQ", 0x81, 127, size) + payload


class FramedWebSocketProtocol(WebSocketsSansIOProtocol):
    # The transport calls pause_writing past its high-water mark (64 KiB) and resume_writing once
    # its buffer is (nearly) empty: paused for `_stall_seconds` is "has not drained".
    _stall_seconds: float | None = None
    _on_stall: Callable[[], None] | None = None
    _stall_timer: asyncio.TimerHandle | None = None
    _paused = False
    _linger: asyncio.TimerHandle | None = None
    _unparsed = b""  # read from the peer, not parsed yet (FEED_BYTES)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # websockets' own answers (a bad upgrade's 400, the 500 of an app that never accepted)
        # went out without uvicorn's default headers, the security headers among them
        # (gateway/headers.py): every rejection the connection builds carries them.
        reject = self.conn.reject

        def reject_with_default_headers(status, text):
            response = reject(status, text)
            for name, value in self.default_headers:
                if name.decode("latin-1") not in response.headers:
                    response.headers[name.decode("latin-1")] = value.decode("latin-1")
            return response

        self.conn.reject = reject_with_default_headers  # type: ignore[method-assign]

    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        if self.response.status_code == 101:
            self.scope["extensions"][WRITES] = self
            if not self.conn.extensions:
                self.scope["extensions"][FRAMED_SEND] = self.send_framed

    def data_received(self, data: bytes) -> None:
        self._unparsed = self._unparsed + data if self._unparsed else data
        self._feed()

    def _feed(self) -> None:
        """Parse FEED_BYTES at a time while the app has nothing waiting, or once the close is sent
        (the app reads no more; the disconnect uvicorn queued for it stays unread, and only the
        peer's close answer, which ends the connection, counts: parsed frames are dropped); keep
        the rest, reading paused meanwhile. Waiting on the queue there left every refused socket
        open until uvicorn's 10 s close timer: its client saw the close complete 10 s late."""
        unparsed, start = self._unparsed, 0
        while start < len(unparsed) and (self.queue.empty() or self.close_sent) \
                and not self.transport.is_closing():
            super().data_received(unparsed[start:start + FEED_BYTES])
            start += FEED_BYTES
        self._unparsed = unparsed[start:]
        if self._unparsed and not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    async def receive(self):
        message = await self.queue.get()
        if self.queue.empty():
            if self._unparsed:
                self._feed()
            if self.read_paused and self.queue.empty() and not self._unparsed:
                self.read_paused = False
                self.transport.resume_reading()
        return message

    def send_framed(self, frame: bytes) -> bool:
        """Write `frame` (from `text_frame`) as `websocket.send` would; False once the connection
        is closing (the caller then sends the ASGI way, which reports how it ended)."""
        if self.close_sent or self.conn.state is not State.OPEN or self.transport.is_closing():
            return False
        self.transport.write(frame)
        return True

    def unsent(self) -> int:
        """Bytes written to the transport that the kernel has not taken yet."""
        return self.transport.get_write_buffer_size()

    def watch(self, seconds: float, on_stall: Callable[[], None]) -> None:
        """Call `on_stall()` once the write buffer has stayed past its high-water mark (without
        draining) for `seconds`."""
        self._stall_seconds, self._on_stall = seconds, on_stall
        if self._paused:
            self._arm_stall()

    def drop(self, code: int, grace: float, reason: str = "", read: bool = True) -> None:
        """Close with `code` at once: the close frame goes after whatever is unsent (a peer that
        reads on gets it), and the connection is aborted, its unsent bytes freed, unless the peer
        answers the close within `grace` seconds. Not `read`: nothing more is read from the peer
        (a flooder's answer comes behind its flood, which would be parsed for nothing)."""
        if self.disconnected or self.transport.is_closing():
            return
        if not self.close_sent and self.conn.state is State.OPEN:
            self.conn.send_close(code, reason)
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})
            if not read:
                if not self.read_paused:
                    self.read_paused = True
                    self.transport.pause_reading()
            elif self.read_paused:  # so that the peer's answer can be read
                self.read_paused = False
                self.transport.resume_reading()
        if self.close_timer is not None:
            self.close_timer.cancel()
        self.close_timer = self.loop.call_later(grace, self.reset)

    def reset(self) -> None:
        """Abort the connection with a reset: what the transport and the kernel hold unsent is
        freed at once (a plain close keeps the kernel's send queue, and the peer's socket, until
        the peer reads it)."""
        if self.disconnected:
            return
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.transport.abort()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._paused = True
        self._arm_stall()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._paused = False
        self._disarm_stall()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_stall()
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        super().connection_lost(exc)

    async def run_asgi(self) -> None:
        await super().run_asgi()
        if not self.disconnected:
            self._linger = self.loop.call_later(LINGER_SECONDS, self._lingered)

    def _lingered(self) -> None:
        self._linger = None
        self.reset()

    def _arm_stall(self) -> None:
        if self._stall_seconds is not None and self._stall_timer is None:
            self._stall_timer = self.loop.call_later(self._stall_seconds, self._stalled)

    def _disarm_stall(self) -> None:
        if self._stall_timer is not None:
            self._stall_timer.cancel()
            self._stall_timer = None

    def _stalled(self) -> None:
        self._stall_timer = None
        if self._on_stall is not None:
            self._on_stall()
