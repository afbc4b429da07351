"""The framed-send extension through a real uvicorn and a real WebSocket client: the bytes made
once reach the client as the message, at every length of the frame header, and a connection that
compresses is not offered it."""
import asyncio

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from websockets.asyncio.client import connect

from gateway.framing import FRAMED_SEND, text_frame
from loadtest.stack import free_port

MESSAGES = ["short", "é" * 100, "x" * 70_000]  # 7-bit, 16-bit and 64-bit payload lengths


async def speak(websocket) -> None:
    await websocket.accept()
    send_framed = (websocket.scope.get("extensions") or {}).get(FRAMED_SEND)
    await websocket.send_text("framed" if send_framed else "asgi")
    for message in MESSAGES:
        if send_framed is None or not send_framed(text_frame(message)):
            await websocket.send_text(message)
    await websocket.receive_text()  # the client's goodbye, then the close


@pytest.fixture
async def server(request):
    port = free_port()
    config = uvicorn.Config(Starlette(routes=[WebSocketRoute("/ws", speak)]), port=port,
                            ws="gateway.framing:FramedWebSocketProtocol",
                            ws_per_message_deflate=request.param, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)  # polling for the server's start, not waiting blindly
    yield f"ws://127.0.0.1:{port}/ws"
    server.should_exit = True
    await asyncio.wait_for(serving, 10)


@pytest.mark.parametrize("server", [False], indirect=True)
async def test_bytes_framed_once_arrive_as_the_message_at_every_length(server):
    async with connect(server, max_size=None) as client:  # it offers deflate; the server does not
        assert await client.recv() == "framed"
        assert [await client.recv() for _ in MESSAGES] == MESSAGES
        await client.send("bye")


@pytest.mark.parametrize("server", [True], indirect=True)
async def test_a_connection_that_compresses_is_not_offered_framed_send(server):
    async with connect(server, max_size=None) as client:
        assert await client.recv() == "asgi"
        assert [await client.recv() for _ in MESSAGES] == MESSAGES
        await client.send("bye")
