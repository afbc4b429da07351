"""Issue 24's probes through a real stack, each refused or dropped while another room is served:
a huge or endless request head (431), sockets that never read what they are sent (a seat, a
spectator, a spectator's replay: dropped by their unsent bytes or their connection not draining,
then let go), spectator hellos guessing room codes (the address's lookups), a page of another
site opening a socket (its Origin), and spectators still watching when the host forbids them.

One gateway serves the module, its write limits small (WW_WS_UNSENT_BYTES, WW_WS_DRAIN_SECONDS) so
that a few thousand events show them; the rules are the ones of the defaults.
"""
import asyncio
import secrets
import socket as socketlib

import httpx
import orjson
import pytest
from websockets.asyncio.client import connect as ws_connect

from actors.client import RoomClient
from actors.config import Config
from devstack.stack import HTTP_TIMEOUT, TEST_DURATIONS, Client, Stack, connect, ws_frame
from gateway.headers import SECURITY_HEADERS
from tests.gateway.visitors import addresses, client, table
from tests.helpers import until

pytestmark = pytest.mark.e2e

GAMES_PER_ACTOR = 50
UNSENT_BYTES = 32 << 10
DRAIN_SECONDS = 3
LOOKUP_FAILURES = 3
ALLOWED = "https://play.example"
# Presence events (~70 bytes each): far more than a connection's kernel buffers (~100 KiB with the
# reader's small window) and UNSENT_BYTES together.
EVENTS = 3000
_addresses = addresses("203.0.113")


@pytest.fixture(scope="module")
def gateway(ray_address, redis_url):
    stack = Stack(ray_address=ray_address, redis_url=redis_url, prefix="t" + secrets.token_hex(5))
    yield stack.start_gateway(games_per_actor=GAMES_PER_ACTOR, env={
        "WW_WS_UNSENT_BYTES": str(UNSENT_BYTES), "WW_WS_DRAIN_SECONDS": str(DRAIN_SECONDS),
        "WW_LOOKUP_FAILURES_PER_ADDRESS": str(LOOKUP_FAILURES), "WW_LIMIT_WINDOW": "86400",
        "WW_ALLOWED_ORIGINS": ALLOWED})
    stack.close()


async def elsewhere(gateway) -> Client:
    """A seat of another room, to ping while the attack goes on."""
    (seat,) = await table(gateway, _addresses)
    return await connect(gateway.ws_url, seat["room"], seat["token"])


async def answers(socket: Client) -> bool:
    return (await socket.request({"type": "ping"}, timeout=60))["type"] == "ack"


async def metric(gateway, name: str) -> float:
    async with client(gateway, _addresses) as http:
        text = (await http.get("/metrics")).text
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))


async def until_metric(gateway, name: str, value: float, timeout: float = 60) -> None:
    async def reached() -> bool:
        return await metric(gateway, name) >= value
    await until(reached, timeout, f"{name} at {value:g}", every=0.2)


# ---------------------------------------------------------------------------- request heads

async def read_response(reader: asyncio.StreamReader) -> bytes:
    try:
        return await asyncio.wait_for(reader.read(), 30)
    except ConnectionResetError:
        return b"<reset>"


async def test_a_huge_or_endless_request_head_is_refused_431_and_nobody_waits(gateway):
    other = await elsewhere(gateway)
    # 128 headers, or one header of 20 KiB: answered 431, the connection closed.
    for head in (b"".join(b"X-%d: 1\r\n" % i for i in range(128)),
                 b"X-A: " + b"a" * 20_000 + b"\r\n"):
        reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n")
        response = await read_response(reader)
        assert response.startswith(b"HTTP/1.1 431 ")
        head = response.split(b"\r\n\r\n", 1)[0].lower()
        assert all((name + b": " + value).lower() in head for name, value in SECURITY_HEADERS)
        writer.close()

    # The probe: one 128 MiB header, sent a MiB at a time. It is cut at the limit, long before
    # its end, and the gateway's other sockets are served meanwhile.
    reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
    sent = 0

    async def endless_header() -> None:
        nonlocal sent
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ")
        chunk = b"a" * (1 << 20)
        try:
            for _ in range(128):
                writer.write(chunk)
                await writer.drain()
                sent += len(chunk)
        except (ConnectionResetError, BrokenPipeError):
            pass  # cut
    sending = asyncio.create_task(endless_header())
    assert await answers(other)
    await asyncio.wait_for(sending, 60)
    assert sent < 64 << 20
    writer.close()
    async with client(gateway, _addresses) as http:
        assert (await http.get("/healthz")).status_code == 200
    assert await answers(other)
    await other.close()


# ---------------------------------------------------------------------------- slow readers

async def never_reading(gateway, room: str, hello: dict) -> socketlib.socket:
    """A socket that reads the 101 and nothing more, after its hello."""
    sock = socketlib.socket()
    # before connect: a small window
    sock.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", gateway.port))
    await loop.sock_sendall(sock, (
        f"GET /ws/{room} HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    handshake = b""
    while b"\r\n\r\n" not in handshake:  # the only bytes this socket reads before it is dropped
        handshake += await loop.sock_recv(sock, 1)
    assert handshake.startswith(b"HTTP/1.1 101")
    await loop.sock_sendall(sock, ws_frame(orjson.dumps(hello)))
    return sock


async def let_go(sock: socketlib.socket) -> None:
    """What the gateway had written is readable, then the connection ends (EOF or reset)."""
    loop = asyncio.get_running_loop()

    async def drain() -> None:
        try:
            while await loop.sock_recv(sock, 1 << 16):
                pass
        except ConnectionResetError:
            pass  # aborted: the bytes it never took were freed
    try:
        await asyncio.wait_for(drain(), 30)
    finally:
        sock.close()


async def presence_events(gateway, ray_address, redis_url, room: str, count: int) -> None:
    """`count` stored events in `room`, through the room itself: presence changes as a gateway
    process reports them (without the limit a gateway puts on its sockets' comings and goings)."""
    config = Config(redis_url=redis_url, ray_address=ray_address, prefix=gateway.prefix,
                    games_per_actor=GAMES_PER_ACTOR, durations=TEST_DURATIONS)  # the cluster's
    async with RoomClient(config) as rc:
        for _ in range(0, count, 200):
            await asyncio.gather(*(rc.presence(room, 1, i % 2 == 0) for i in range(200)))


async def test_sockets_that_never_read_are_dropped_and_let_go_whoever_they_are(
        gateway, ray_address, redis_url):
    """A seat and a spectator that say hello without since and never read, in a busy room, and
    a spectator that never reads the replay it asked for: each is dropped (its unsent bytes past
    the bound, or its connection not drained), its connection let go; another room's seat is
    served all along."""
    seats = await table(gateway, _addresses, guests=1)
    room = seats[0]["room"]
    other = await elsewhere(gateway)
    reader = await connect(gateway.ws_url, room, seats[0]["token"])  # the room's own, reading
    dropped = await metric(gateway, "ww_ws_dropped_total")
    attackers = [await never_reading(gateway, room, {"type": "hello", "token": seats[0]["token"]}),
                 await never_reading(gateway, room, {"type": "hello", "watch": True})]
    await reader.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 1)
    busy = asyncio.create_task(presence_events(gateway, ray_address, redis_url, room, EVENTS))
    assert await answers(other)
    await until_metric(gateway, "ww_ws_dropped_total", dropped + 2)
    await busy
    for sock in attackers:
        await let_go(sock)

    # The log is long now: a spectator asking for all of it, and reading none of it.
    replayer = await never_reading(gateway, room, {"type": "hello", "watch": True, "since": 0})
    await until_metric(gateway, "ww_ws_dropped_total", dropped + 3)
    await let_go(replayer)
    assert await answers(other) and await answers(reader)  # the reading seat kept up
    assert reader.last_seq > EVENTS
    await reader.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 0)
    for socket in (reader, other):
        await socket.close()


# ---------------------------------------------------------------------------- handshakes

async def spectator(gateway, room: str, address: str, origin: str | None = None,
                    hello: bool = True) -> Client:
    headers = {"X-Forwarded-For": address} | ({"Origin": origin} if origin else {})
    socket = Client(await ws_connect(f"{gateway.ws_url}/ws/{room}", max_size=None,
                                     additional_headers=headers))
    if hello:
        await socket.send({"type": "hello", "watch": True})
    return socket


async def refused_with(socket: Client) -> str:
    assert await socket.wait_closed() == 1008 and not socket.frames
    return socket.ws.close_reason


async def test_spectator_hellos_guessing_codes_count_against_the_address(gateway):
    (host,) = await table(gateway, _addresses)
    guesser = next(_addresses)
    for guess in ("ABCDEF", "GHJKMN", "PQRSTU"):
        assert await refused_with(await spectator(gateway, guess, guesser)) == "room_not_found"
    # Past the limit, even the right code is refused, and so are the address's HTTP lookups.
    assert await refused_with(await spectator(gateway, host["room"], guesser)) == "rate_limited"
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT,
                                 headers={"X-Forwarded-For": guesser}) as http:
        assert (await http.get(f"/api/rooms/{host['room']}")).status_code == 429
    watcher = await spectator(gateway, host["room"], next(_addresses))  # anyone else watches
    assert (await watcher.wait_for(lambda f: f.get("type") == "welcome"))["seat"] is None
    await watcher.close()


async def test_a_socket_from_another_sites_page_is_refused_before_its_hello(gateway):
    (host,) = await table(gateway, _addresses)
    room, address = host["room"], next(_addresses)
    # Closed at once, before any hello is read (none is sent here).
    foreign = await spectator(gateway, room, address, origin="https://evil.example", hello=False)
    assert await refused_with(foreign) == "bad_origin"
    lookalike = f"http://127.0.0.1:{gateway.port + 1}"  # another port is another origin
    assert await refused_with(await spectator(gateway, room, address, lookalike, False)) == \
        "bad_origin"
    # The page the gateway served (its Origin is the socket's Host), an allowed origin, and a
    # client that is no browser (no Origin: devstack/stack.py, the load generators) are let in.
    for origin in (gateway.url, ALLOWED, None):
        socket = await spectator(gateway, room, address, origin=origin)
        assert (await socket.wait_for(lambda f: f.get("type") == "welcome"))["seat"] is None
        await socket.close()


async def test_spectators_watching_when_the_host_forbids_them_are_closed(gateway):
    (host,) = await table(gateway, _addresses)
    room = host["room"]
    seat = await connect(gateway.ws_url, room, host["token"])
    watchers = [await spectator(gateway, room, next(_addresses)) for _ in range(2)]
    await seat.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 2)
    assert (await seat.request({"type": "settings", "rules": {"spectators": "forbidden"}}))[
        "type"] == "ack"
    for watcher in watchers:
        assert await watcher.wait_closed() == 1008
        assert watcher.ws.close_reason == "spectators_forbidden"
        assert watcher.events[-1]["kind"] == "settings"  # the event, then the close
    await seat.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 0)
    assert await answers(seat)
    await seat.close()
