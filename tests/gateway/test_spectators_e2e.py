"""Spectators through the protocol alone: a watch socket (no token, no seat) sees the public table
and nothing else until `game_over`; it is counted in the lobby, refused (and closed, if it was
watching) where the host forbids spectators, and may not act. The review endpoint serves a
finished game's whole log.
"""
import asyncio
import random

import httpx
import pytest

from devstack.checks import (
    assert_frames_match_schemas, assert_spectator_sees_public_only, stored_log)
from devstack.players import Bot, connect_all, seat_table, start, watch
from devstack.stack import HTTP_TIMEOUT, Stack, open_socket

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def gateway(ray_address, redis_url):
    stack = Stack(ray_address=ray_address, redis_url=redis_url,
                  prefix="t" + random.randbytes(5).hex())
    yield stack.start_gateway()
    stack.close()


async def test_a_spectator_watches_a_whole_game_and_sees_nothing_private_before_game_over(
        gateway, redis_url):
    room, seats = await seat_table(gateway.url, 8)
    clients = await connect_all(gateway.ws_url, room, seats)
    # Every dead seat sees every card here: the spectator must still see none.
    assert (await clients[0].request({"type": "settings",
                                      "roles": ["seer", "witch", "hunter", "cupid"],
                                      "rules": {"dead_see_roles": "yes"}}))["type"] == "ack"
    spectator = await watch(gateway.ws_url, room)
    assert spectator.welcome["type"] == "welcome" and spectator.welcome["seat"] is None
    counted = await clients[0].wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 1)
    assert counted["count"] == 1
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        assert (await http.get(f"/api/rooms/{room}")).json()["spectators"] == 1
        review = (await http.get(f"/api/rooms/{room}/review")).json()
        assert review["detail"]["code"] == "not_your_turn"
    refused = await spectator.request({"type": "chat", "text": "hello from the gallery"})
    assert refused["code"] == "not_authenticated"
    assert (await spectator.request({"type": "ping"}))["type"] == "ack"

    rng = random.Random(5)
    bots = [Bot(c, random.Random(rng.random())) for c in clients]
    await start(clients[0])
    endings = await asyncio.gather(*(bot.play() for bot in bots))
    over = await spectator.wait_for(lambda f: f.get("kind") == "game_over")
    assert over["seq"] == endings[0]["seq"]

    log = await stored_log(redis_url, gateway.prefix, room)
    assert_spectator_sees_public_only(spectator, log)  # 0 leaks before game_over
    assert any(e["kind"] == "cards" for e in (f for c in clients for f in c.events))
    assert_frames_match_schemas([spectator.frames, spectator.sent])

    # A late spectator (a reload mid-game, since=0) gets the public replay only, the same way.
    late = await watch(gateway.ws_url, room, since=0)
    await late.wait_for(lambda f: f.get("kind") == "game_over")  # the replay follows the welcome
    assert [f["seq"] for f in late.events] == [e["seq"] for e in log if e["to"] is None]
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        review = (await http.get(f"/api/rooms/{room}/review")).json()
    assert [(e["event"]["seq"], e["to"]) for e in review["events"]] == [
        (e["seq"], e["to"]) for e in log]
    assert [p["name"] for p in review["players"]] == [p["name"] for p in
                                                      spectator.welcome["view"]["players"]]
    for client in [*clients, spectator, late]:
        await client.close()


async def test_spectators_leave_the_count_and_are_refused_where_the_host_forbids_them(gateway):
    room, seats = await seat_table(gateway.url, 6)
    (host,) = await connect_all(gateway.ws_url, room, seats[:1])
    first, second = await watch(gateway.ws_url, room), await watch(gateway.ws_url, room)
    await host.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 2)
    await second.close()
    await host.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 1)
    forbid = {"type": "settings", "rules": {"spectators": "forbidden"}}
    assert (await host.request(forbid))["type"] == "ack"
    assert await first.wait_closed() == 1008 and first.ws.close_reason == "spectators_forbidden"
    refused = await open_socket(gateway.ws_url, room)
    await refused.send({"type": "hello", "watch": True, "since": None})
    assert await refused.wait_closed() == 1008 and refused.ws.close_reason == "spectators_forbidden"
    nowhere = await open_socket(gateway.ws_url, "ZZZZZZ")
    await nowhere.send({"type": "hello", "watch": True})
    assert await nowhere.wait_closed() == 1008 and nowhere.ws.close_reason == "room_not_found"
    await host.wait_for(lambda f: f.get("kind") == "spectators" and f["count"] == 0)
    await host.close()
