"""One WebSocket frame for every recipient of an event, instead of one per socket.

uvicorn's websockets-sansio protocol frames each `websocket.send` itself: through Starlette's
wrappers, uvicorn's checks and websockets' `Frame.serialize`, per socket (with the kernel write,
38 % of a gateway's samples under the `rush` load; 27 % with this: loadtest/README.md). Server
frames are not masked, so a text frame is the same bytes on every connection that compresses
nothing: the gateway offers no per-message deflate (its frames are a few hundred bytes; deflate
would compress each one again for every socket, each with a compressor of its own). The
`FRAMED_SEND` ASGI extension of `FramedWebSocketProtocol` writes such bytes as they are.
"""
from __future__ import annotations

import struct

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

FRAMED_SEND = "werewolf.framed_send"  # scope["extensions"][FRAMED_SEND]: send_framed(bytes) -> bool


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
    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        if self.response.status_code == 101 and not self.conn.extensions:
            self.scope["extensions"][FRAMED_SEND] = self.send_framed

    def send_framed(self, frame: bytes) -> bool:
        """Write `frame` (from `text_frame`) as `websocket.send` would; False once the connection
        is closing (the caller then sends the ASGI way, which reports how it ended)."""
        if self.close_sent or self.conn.state is not State.OPEN or self.transport.is_closing():
            return False
        self.transport.write(frame)
        return True
