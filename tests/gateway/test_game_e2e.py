"""Whole games through the protocol alone: real Redis, real Ray, real sockets, no rules knowledge.

The stored log (read from Redis) is the ground truth of who may see what: every socket must get
exactly the events whose audience holds its seat, each once, in order.
"""
import asyncio
import random

import httpx
import pytest

from devstack.checks import (
    assert_exact_stream, assert_frames_match_schemas, assert_no_leak,
    assert_spectator_sees_public_only, stored_log, validators)
from devstack.players import Bot, connect_all, is_phase, seat_table, start, watch
from devstack.stack import HTTP_TIMEOUT, Stack, connect
from tests.helpers import until

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def gateway(ray_address, redis_url):
    stack = Stack(ray_address=ray_address, redis_url=redis_url,
                  prefix="t" + random.randbytes(5).hex())
    yield stack.start_gateway()
    stack.close()


async def play_table(
        gateway, players: int, seed: int, sleepy: int = 0, spectators: list | None = None):
    """`spectators`: a watch socket of the room is appended to it, open from the lobby on."""
    room, seats = await seat_table(gateway.url, players)
    clients = await connect_all(gateway.ws_url, room, seats)
    if spectators is not None:
        spectators.append(await watch(gateway.ws_url, room))
    rng = random.Random(seed)
    bots = [Bot(c, random.Random(rng.random()), sleepy=i >= players - sleepy)
            for i, c in enumerate(clients)]
    roles = ["seer", "witch", "hunter", "cupid"]
    settings = await clients[0].request({"type": "settings", "roles": rng.sample(roles, 3)})
    assert settings["type"] == "ack"
    await start(clients[0])
    endings = await asyncio.gather(*(bot.play() for bot in bots))
    return room, clients, endings


async def test_six_players_play_a_whole_game_to_game_over(gateway, redis_url):
    room, clients, endings = await play_table(gateway, players=6, seed=1)

    assert all(e["kind"] == "game_over" for e in endings)
    assert len({e["seq"] for e in endings}) == 1  # one end, seen by all
    log = await stored_log(redis_url, gateway.prefix, room)
    for client in clients:
        assert_exact_stream(client, log)
    assert_frames_match_schemas(c.frames + c.sent for c in clients)
    for client in clients:
        await client.close()


async def test_no_socket_ever_receives_what_its_seat_may_not_know(gateway, redis_url):
    spectators: list = []
    tables = await asyncio.gather(
        play_table(gateway, players=8, seed=2, spectators=spectators),
        play_table(gateway, players=12, seed=3, sleepy=2),
    )
    for spectator in spectators:  # a watch socket of the first table: public events only
        await spectator.wait_for(lambda f: f.get("kind") == "game_over")
        assert_spectator_sees_public_only(spectator,
                                          await stored_log(redis_url, gateway.prefix, tables[0][0]))
        await spectator.close()
    for room, clients, endings in tables:
        log = await stored_log(redis_url, gateway.prefix, room)
        roles = {int(seat): role for seat, role in endings[0]["roles"].items()}
        for client in clients:
            assert_exact_stream(client, log)
            assert_no_leak(client, roles)
            await client.close()


async def test_a_client_that_drops_mid_game_resumes_with_since_missing_nothing(gateway, redis_url):
    room, seats = await seat_table(gateway.url, 7)
    clients = await connect_all(gateway.ws_url, room, seats)
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(clients)]
    await start(clients[0])
    dropper = bots[3]
    others = [asyncio.create_task(bot.play()) for bot in bots if bot is not dropper]

    await dropper.play(until=is_phase)  # the first night has begun
    before = dropper.client
    await before.close()
    since = before.last_seq
    # Let the room move on without it: another seat sees further events (or the end) first.
    watcher = bots[0].client
    await watcher.wait_for(lambda f: f.get("type") == "event" and (
        f["seq"] > since + 3 or f["kind"] == "game_over"))
    # Events are published as they are written and the room's state moves on when the write
    # returns; a welcome read in between is at the seq before them (right, but nothing to
    # replay). A command's answer, ack or refusal, comes after every earlier write has returned.
    await watcher.request({"type": "chat", "text": "the room has moved on"})

    after = await connect(gateway.ws_url, room, seats[3]["token"], since=since)
    dropper.client = after
    ending = await dropper.play()
    await asyncio.gather(*others)

    assert ending["kind"] == "game_over"
    log = await stored_log(redis_url, gateway.prefix, room)
    assert_exact_stream(before, log, last=since)
    assert_exact_stream(after, log, first=since + 1)
    assert any(f["seq"] <= after.welcome["seq"] for f in after.events), "nothing was replayed"
    received = [f["seq"] for f in before.events + after.events]
    assert received == sorted(set(received)), "a repeat or a reorder across the reconnect"
    for client in clients[:3] + clients[4:] + [after]:
        await client.close()


async def test_http_contract_and_operations_endpoints(gateway):
    schemas = validators()
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        created = await http.post("/api/rooms", json={"name": "  Layla  "})
        assert created.status_code == 201
        schemas["http_seat"].validate(created.json())
        room = created.json()["room"]
        assert created.json()["seat"] == 0

        taken = await http.post(f"/api/rooms/{room}/join", json={"name": "layla"})
        joins = [await http.post(f"/api/rooms/{room}/join", json={"name": f"P{i}"})
                 for i in range(1, 18)]
        assert [j.json()["seat"] for j in joins] == list(range(1, 18))
        for reply, status, code in [
            (taken, 409, "name_taken"),
            (await http.post(f"/api/rooms/{room}/join", json={"name": "Late"}), 409, "room_full"),
            (await http.post("/api/rooms/ZZZZZZ/join", json={"name": "Omar"}), 404,
             "room_not_found"),
            (await http.get("/api/rooms/nope"), 404, "room_not_found"),
        ]:
            assert (reply.status_code, reply.json()["detail"]["code"]) == (status, code)
            schemas["http_error"].validate(reply.json())
        for body in ({"name": ""}, {"name": "   "}, {"name": "x" * 25}, {"name": 5}, {}):
            assert (await http.post("/api/rooms", json=body)).status_code == 422, body

        facts = (await http.get(f"/api/rooms/{room.lower()}")).json()
        schemas["http_room"].validate(facts)
        assert facts["status"] == "lobby" and facts["players"][0]["name"] == "Layla"
        assert "token" not in str(facts)

        started_room, seats = await seat_table(gateway.url, 6)
        host = await connect(gateway.ws_url, started_room, seats[0]["token"])
        assert (await host.request({"type": "start"}))["type"] == "ack"
        late = await http.post(f"/api/rooms/{started_room}/join", json={"name": "Late"})
        assert (late.status_code, late.json()["detail"]["code"]) == (409, "room_started")

        assert (await http.get("/healthz")).json() == {"ok": True}
        assert (await http.get("/readyz")).json() == {"ok": True, "redis": True, "ray": True}
        metrics = (await http.get("/metrics")).text
        for name in ("ww_ws_open_sockets ", "ww_rooms_with_listeners ",
                     'ww_ws_messages_in_total{type="start"}', "ww_command_seconds_bucket",
                     'ww_http_request_seconds_count{method="POST",route="/api/rooms",'
                     'status="201"}'):
            assert name in metrics, name
        assert seats[0]["token"] not in metrics
        page = await http.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        await host.close()


async def test_the_host_of_a_finished_game_plays_again_with_the_same_table(gateway):
    schemas = validators()
    room, seats = await seat_table(gateway.url, 6)
    clients = await connect_all(gateway.ws_url, room, seats)
    again = f"/api/rooms/{room}/again"
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        early = await http.post(again, json={"token": seats[0]["token"]})
        assert (early.status_code, early.json()["detail"]["code"]) == (409, "not_your_turn")
        assert (await clients[0].request({"type": "settings", "roles": ["seer"]}))["type"] == "ack"
        await start(clients[0])
        await asyncio.gather(*(Bot(c, random.Random(i)).play() for i, c in enumerate(clients)))
        for c in clients:
            await c.close()
        # The room's facts are written after the game_over its sockets got: read until they say so.
        async def facts() -> dict | None:
            read = (await http.get(f"/api/rooms/{room}")).json()
            return read if read["status"] == "finished" else None
        old = await until(facts, 60, "the room's facts say finished")
        assert old["next"] is None

        for token, status, code in [(seats[1]["token"], 403, "not_host"),
                                    ("nope", 401, "not_authenticated")]:
            refused = await http.post(again, json={"token": token})
            assert (refused.status_code, refused.json()["detail"]["code"]) == (status, code)
            schemas["http_error"].validate(refused.json())
        lone_surrogate = await http.post(again, content=b'{"token": "\\ud800"}',
                                         headers={"content-type": "application/json"})
        assert lone_surrogate.status_code == 401  # a wrong token, not a 500
        # clicks arriving together open one next game, not one each
        clicks = await asyncio.gather(*(http.post(again, json={"token": seats[0]["token"]})
                                        for _ in range(3)))
        assert len({c.json()["room"] for c in clicks}) == 1, [c.text for c in clicks]
        opened = clicks[0]
        assert opened.status_code == 200, opened.text
        schemas["http_seat"].validate(opened.json())
        following = opened.json()["room"]
        assert following != room and opened.json()["token"] == seats[0]["token"]
        assert (await http.post(again,
                                json={"token": seats[0]["token"]})).json()["room"] == following

        old = (await http.get(f"/api/rooms/{room}")).json()
        schemas["http_room"].validate(old)
        assert old["next"] == following
        new = (await http.get(f"/api/rooms/{following}")).json()
        assert new["status"] == "lobby" and new["next"] is None  # the host starts it
        assert [p["name"] for p in new["players"]] == [p["name"] for p in old["players"]]
        assert new["settings"] == old["settings"]
        # retried once the lobby is there: still that room, not a second one, not started
        assert (await http.post(again,
                                json={"token": seats[0]["token"]})).json()["room"] == following
        assert (await http.get(f"/api/rooms/{following}")).json()["status"] == "lobby"
    # Every seat enters the next game's lobby with the token it has, in the seat it had.
    nexts = []
    for seat, s in enumerate(seats):
        client = await connect(gateway.ws_url, following, s["token"])
        assert client.welcome["seat"] == seat and client.welcome["view"]["status"] == "lobby"
        nexts.append(client)
    assert (await nexts[1].request({"type": "start"}))["code"] == "not_host"
    await start(nexts[0])
    assert (await nexts[0].request({"type": "start"}))["type"] == "error"  # started once
    for client in nexts:
        await client.close()
