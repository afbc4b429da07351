"""The framed-send extension through a real uvicorn and a real WebSocket client: the bytes made
once reach the client as the message, at every length of the frame header, and a connection that
compresses is not offered it."""
import asyncio
from contextlib import asynccontextmanager
import socket

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.framing import FRAMED_SEND, WRITES, text_frame
from gateway.headers import SECURITY_HEADERS
from loadtest.stack import free_port
from tests.helpers import until

MESSAGES = ["short", "é" * 100, "x" * 70_000]  # 7-bit, 16-bit and 64-bit payload lengths


async def speak(websocket) -> None:
    await websocket.accept()
    send_framed = (websocket.scope.get("extensions") or {}).get(FRAMED_SEND)
    await websocket.send_text("framed" if send_framed else "asgi")
    for message in MESSAGES:
        if send_framed is None or not send_framed(text_frame(message)):
            await websocket.send_text(message)
    await websocket.receive_text()  # the client's goodbye, then the close


@asynccontextmanager
async def framed_server(endpoint, deflate: bool):
    """A uvicorn serving `endpoint` at /ws through the gateway's framed protocol; its URL."""
    port = free_port()
    config = uvicorn.Config(Starlette(routes=[WebSocketRoute("/ws", endpoint)]), port=port,
                            ws="gateway.framing:FramedWebSocketProtocol",
                            ws_per_message_deflate=deflate, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    await until(lambda: server.started, 10, "the server started", every=0.01)
    yield f"ws://127.0.0.1:{port}/ws"
    server.should_exit = True
    await asyncio.wait_for(serving, 10)


@pytest.fixture
async def server(request):
    async with framed_server(speak, request.param) as url:
        yield url


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


STALL_SECONDS = 0.2  # the connection's drain timer, short here: the rule is the same
TCP_CLOSE = 7  # linux/tcp_states.h


async def never_drained(websocket) -> None:
    """Writes framed bytes until the connection pauses, waits for its stall callback, drops it."""
    await websocket.accept()
    extensions = websocket.scope["extensions"]
    writes, send_framed = extensions[WRITES], extensions[FRAMED_SEND]
    stalled = asyncio.Event()
    writes.watch(STALL_SECONDS, stalled.set)
    frame = text_frame("x" * 10_000)
    written = 0
    while writes.unsent() <= 64 << 10:  # until the transport's high-water mark (it pauses)
        send_framed(frame)
        written += len(frame)
        await asyncio.sleep(0)  # the kernel takes what it can; the rest stays unsent
    await asyncio.wait_for(stalled.wait(), 10)
    held = writes.unsent()
    writes.drop(1013, STALL_SECONDS)
    # the peer never answers the close: aborted after the grace
    await until(lambda: writes.disconnected, 10, "the connection aborted", every=0.05)
    HELD.append((held, written))


HELD: list[tuple[int, int]] = []


@pytest.fixture
async def stalling_server():
    port = free_port()
    config = uvicorn.Config(Starlette(routes=[WebSocketRoute("/ws", never_drained)]), port=port,
                            ws="gateway.framing:FramedWebSocketProtocol",
                            http="gateway.http:TimedHttpProtocol", ws_per_message_deflate=False,
                            log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    await until(lambda: server.started, 10, "the server started", every=0.01)
    yield port
    server.should_exit = True
    await asyncio.wait_for(serving, 10)


async def test_a_connection_that_never_drains_is_reported_then_aborted_with_its_bytes(
        stalling_server):
    loop = asyncio.get_running_loop()
    peer = socket.socket()
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    peer.setblocking(False)
    await loop.sock_connect(peer, ("127.0.0.1", stalling_server))
    await loop.sock_sendall(peer, b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            b"Sec-WebSocket-Version: 13\r\n\r\n")
    try:
        # the peer reads nothing until the server let it go
        await until(lambda: HELD, 10, "the app's record of the abort", every=0.05)
        held, written = HELD[0]
        assert held > 64 << 10  # past the transport's high-water mark, and no drain came
        # Reset: the peer's socket is closed before it reads a byte (a plain close would leave it
        # open behind the kernel's send queue, as long as it does not read).
        tcp_state = peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
        assert tcp_state == TCP_CLOSE
        received = 0

        async def read_to_the_end() -> None:
            nonlocal received
            try:
                while data := await loop.sock_recv(peer, 1 << 16):
                    received += len(data)
            except ConnectionResetError:
                pass  # aborted: what was never taken is gone
        await asyncio.wait_for(read_to_the_end(), 10)
        # What the transport held was freed, never sent (the peer also read the 101 response).
        assert received < written - held + 1024
    finally:
        peer.close()


async def test_a_bad_upgrade_is_answered_400_with_the_security_headers():
    port = free_port()
    config = uvicorn.Config(Starlette(routes=[WebSocketRoute("/ws", speak)]), port=port,
                            ws="gateway.framing:FramedWebSocketProtocol", log_level="warning",
                            lifespan="off",
                            headers=[(k.decode(), v.decode()) for k, v in SECURITY_HEADERS])
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    await until(lambda: server.started, 10, "the server started", every=0.01)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n")  # no key
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 10)
    head = answer.split(b"\r\n\r\n")[0].lower().split(b"\r\n")
    assert head[0].startswith(b"http/1.1 400")
    for name, value in SECURITY_HEADERS:
        assert head.count(name + b": " + value.lower()) == 1, name
    assert sum(line.startswith(b"date:") for line in head) == 1


REFUSED: list = []  # the refused connection's protocol (WRITES), for its state after the close


async def refuse(websocket) -> None:
    """Accepts, reads the hello and closes 1008, as the gateway refuses a socket."""
    await websocket.accept()
    REFUSED.append(websocket.scope["extensions"][WRITES])
    await websocket.receive_text()
    await websocket.close(1008, "refused")


@pytest.fixture
async def refusing_server():
    async with framed_server(refuse, False) as url:
        yield url


async def test_the_peers_answer_to_a_refusal_is_read_and_ends_the_connection(refusing_server):
    """The disconnect uvicorn queues for the app when it closes stays unread (the app has
    returned): the peer's close answer is parsed all the same, which ends the connection, instead
    of lying unparsed until a close timer (the client gives up first here: 1 s)."""
    async with connect(refusing_server, close_timeout=1) as client:
        await client.send("hello")
        with pytest.raises(ConnectionClosed):
            await client.recv()
    protocol = REFUSED[0]
    await until(lambda: protocol.disconnected, 10, "the server's side closed", every=0.05)
    assert protocol.conn.close_rcvd is not None and protocol.conn.close_rcvd.code == 1008
