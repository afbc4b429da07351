"""A socket that floods commands costs the flooder, not the gateway (issue 34), through a real
stack: past its limit a socket is not read until the limit has a token back, so its frames are
read at the limit's rate (the rest waits in the network); 20 refusals in a row (the gateway's, or
the room's not_host) close it (1008 `refused`); a seat of another room is answered meanwhile.

The bounds are the rate limits applied to the seconds each test measured: no wall-clock threshold.
"""
import asyncio
import secrets
import time

import orjson
import pytest

from actors.room import RATE_LIMITS
from devstack.stack import Client, Stack, connect
from gateway.ws import LOCAL_BURST_FACTOR, MAX_REFUSED_IN_A_ROW
from tests.gateway.visitors import addresses, client, table

pytestmark = pytest.mark.e2e

FLOOD = 3000  # frames a flooding socket sends as fast as the gateway takes them
BURST, RATE = RATE_LIMITS["settings"]
_addresses = addresses("192.0.2")


@pytest.fixture(scope="module")
def gateway(ray_address, redis_url):
    stack = Stack(ray_address=ray_address, redis_url=redis_url, prefix="t" + secrets.token_hex(5))
    yield stack.start_gateway(games_per_actor=50)
    stack.close()


async def seats(gateway, guests: int = 0) -> list[Client]:
    """A new room's sockets: its host's, then `guests` more."""
    return [await connect(gateway.ws_url, s["room"], s["token"])
            for s in await table(gateway, _addresses, guests)]


async def settings_read(gateway) -> tuple[float, float]:
    """The gateway's `settings` frames read, and refused by the sockets' own limits."""
    async with client(gateway, _addresses) as http:
        text = (await http.get("/metrics")).text

    def counter(name: str) -> float:
        series = name + '{type="settings"} '
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(series))
    return counter("ww_ws_messages_in_total"), counter("ww_ws_refused_here_total")


def flood(socket: Client) -> asyncio.Task:
    """FLOOD `settings` frames, each sent as soon as the connection takes it."""
    async def send() -> None:
        for i in range(FLOOD):
            await socket.send_raw(orjson.dumps({"type": "settings", "id": f"f{i}",
                                                "durations": {"vote": 30 + i % 2}}).decode())
    return asyncio.create_task(send())


def most_read(seconds: float) -> float:
    """What a socket's limit lets the gateway read in `seconds`: its burst, then a frame taken
    and one refused per token (a refused frame leaves the socket unread until the next token)."""
    return BURST * LOCAL_BURST_FACTOR + 2 * (RATE * seconds + 1)


async def test_a_socket_refused_in_a_row_is_closed_and_read_at_its_limits_rate(gateway):
    _, guest = await seats(gateway, guests=1)  # not the host: the room refuses its settings
    read0, refused0 = await settings_read(gateway)
    started = time.monotonic()
    sending = flood(guest)
    assert await guest.wait_closed(timeout=120) == 1008
    seconds = time.monotonic() - started
    read, refused = (a - b for a, b in zip(await settings_read(gateway), (read0, refused0)))
    sending.cancel()
    await asyncio.gather(sending, return_exceptions=True)

    assert guest.ws.close_reason == "refused"
    codes = [f["code"] for f in guest.frames if f.get("type") == "error"]
    # The room's not_host (host powers a guest's client never asks for) counts as the gateway's
    # own refusals do, and spends the socket's copy of the limit: the rest are refused here,
    # unread, and never reach the room. A socket the room has not acked sends one command at a
    # time, so each not_host spent the copy before the next frame was read: never two in a row
    # (with COMMANDS_IN_FLIGHT at once, the first eight frames all reached the room).
    assert len(codes) == MAX_REFUSED_IN_A_ROW and set(codes) == {"not_host", "rate_limited"}
    assert ["not_host", "not_host"] not in [codes[i:i + 2] for i in range(len(codes) - 1)]
    assert 0 < codes.count("not_host") < MAX_REFUSED_IN_A_ROW
    assert refused == codes.count("rate_limited")
    assert read <= most_read(seconds)


async def test_a_flood_is_read_at_its_limits_rate_while_another_room_is_answered(gateway):
    (flooder,) = await seats(gateway)  # the host: the room takes its settings, as fast as allowed
    (honest,) = await seats(gateway)
    read0, refused0 = await settings_read(gateway)
    started = time.monotonic()
    sending = flood(flooder)
    # The other room's seat, meanwhile: every ping and command of it answered, none refused.
    honest_settings = 10
    for i in range(honest_settings):
        assert (await honest.request({"type": "ping"}, timeout=60))["type"] == "ack"
        reply = await honest.request({"type": "settings", "durations": {"vote": 40 + i}},
                                     timeout=60)
        assert reply["type"] == "ack", reply
    # The flooder's frames answered so far: they keep coming, the socket stays open.
    await flooder.wait_for(lambda f: f.get("id") == f"f{BURST * LOCAL_BURST_FACTOR + 1}",
                           timeout=60)
    read, refused = (a - b for a, b in zip(await settings_read(gateway), (read0, refused0)))
    seconds = time.monotonic() - started
    sending.cancel()
    await asyncio.gather(sending, return_exceptions=True)
    assert flooder.ws.close_code is None

    assert read - honest_settings <= most_read(seconds)
    assert refused <= RATE * seconds + 1
    flooder.ws.transport.abort()  # its close frame would wait behind the frames it sent
    await honest.close()
