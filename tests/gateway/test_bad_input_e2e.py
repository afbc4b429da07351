"""Bad client input gets its error code (or, before the handshake, a 1008 close) and changes
nothing: the lobby facts stay as they were and the room then starts and plays normally."""
import asyncio
import random

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed

from devstack.players import Bot, connect_all, in_day, seat_table
from devstack.stack import HTTP_TIMEOUT, TEST_DURATIONS, connect, create_room, open_socket

pytestmark = pytest.mark.e2e


def lobby_facts(facts: dict) -> dict:
    """What bad input must not change (connected flags move as sockets come and go)."""
    return {**facts, "players": [{"seat": p["seat"], "name": p["name"]} for p in facts["players"]]}


async def get_facts(url: str, room: str) -> dict:
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT) as http:
        return lobby_facts((await http.get(f"/api/rooms/{room}")).json())


async def test_each_bad_input_gets_its_error_and_the_room_is_unharmed(stack):
    # Phases long enough that an open prompt is still open when the test answers it wrongly.
    gateway = stack.start_gateway(durations={**TEST_DURATIONS, "cupid": 15, "seer": 15,
                                             "wolves": 15,
                                             "witch": 15})
    room, seats = await seat_table(gateway.url, 6)
    host, player = await connect_all(gateway.ws_url, room, seats[:2])
    # Without the witch and the hunter the lone wolf cannot die at night, so the game always
    # reaches day 1 and the player is always prompted (at night for its role, or to elect a mayor).
    assert (await host.request({"type": "settings", "roles": ["seer", "cupid"]}))["type"] == "ack"
    before = await get_facts(gateway.url, room)

    async def answer(raw: str) -> dict:
        """Send a raw frame; return the error frame it caused."""
        await player.send_raw(raw)
        return await player.recv_until(lambda f: f["type"] in ("ack", "error"))

    cases = [
        ("{not json", None, "bad_frame"),
        ("[1, 2, 3]", None, "bad_frame"),
        ('{"type": "dance", "id": "u1"}', "u1", "bad_frame"),
        ('{"type": "act", "id": "t1", "action": 5, "targets": [1]}', "t1", "bad_frame"),
        ('{"type": "act", "id": "t2", "action": "vote", "targets": "everyone"}', "t2", "bad_frame"),
        (orjson.dumps({"type": "chat", "id": "big", "text": "x" * 5000}).decode(), None,
         "bad_frame"),
        ('{"type": "act", "id": "o1", "action": "vote", "targets": [0]}', "o1", "not_your_turn"),
        ('{"type": "settings", "id": "h1", "roles": ["seer"]}', "h1", "not_host"),
        ('{"type": "start", "id": "h2"}', "h2", "not_host"),
    ]
    for raw, frame_id, code in cases:
        reply = await answer(raw)
        assert (reply["type"], reply["id"], reply["code"]) == ("error", frame_id, code), raw
        assert reply["message"]
    assert (await player.request({"type": "ping"}))["type"] == "ack"  # still served
    bad_settings = await host.request({"type": "settings", "durations": {"vote": 0}})
    assert bad_settings["code"] == "bad_frame"
    # Chat is rate limited per seat before the rules look at it (in the lobby they refuse it).
    codes = [(await player.request({"type": "chat", "text": f"line {i}"}))["code"]
             for i in range(12)]
    assert codes[0] == "not_your_turn" and "rate_limited" in codes

    # Handshakes that are refused with 1008 before anything is sent.
    other = await create_room(gateway.url, "Elsewhere")
    for hello in ({"type": "hello", "token": "not-a-token", "since": None},
                  {"type": "hello", "token": other["token"], "since": None},  # another room's
                  {"type": "ping", "id": 1},
                  {"type": "hello", "token": seats[2]["token"], "since": "yesterday"}):
        intruder = await open_socket(gateway.ws_url, room)
        await intruder.send(hello)
        assert await intruder.wait_closed() == 1008, hello
        assert intruder.frames == []
    silent = await open_socket(gateway.ws_url, room)  # says nothing: closed after the hello delay
    assert await silent.wait_closed() == 1008
    leaver = await open_socket(gateway.ws_url, room)  # leaves before saying hello
    await leaver.close()

    # A seat that only sends garbage is cut off; a frame past the server's limit closes at once.
    spammer = await connect(gateway.ws_url, room, seats[2]["token"])
    for _ in range(20):
        await spammer.send_raw("garbage")
    assert await spammer.wait_closed() == 1008
    giant = await connect(gateway.ws_url, room, seats[3]["token"])
    try:
        await giant.send_raw("x" * (2 << 20))
    except ConnectionClosed:  # the server may close (1009) before the last bytes are written
        pass
    assert await giant.wait_closed() == 1009

    assert await get_facts(gateway.url, room) == before

    # The room is unharmed: it starts, and in-game mistakes are refused the same way.
    others = await connect_all(gateway.ws_url, room, seats[2:])
    clients = [host, player] + others
    assert (await host.request({"type": "start"}))["type"] == "ack"
    day_or_end = lambda f: in_day(1)(f) or f.get("kind") == "game_over"  # noqa: E731
    games = [asyncio.create_task(Bot(c, random.Random(i)).play(until=day_or_end))
             for i, c in enumerate(clients) if c is not player]
    # The player's prompt stays open (its phase waits for it) until it answers or times out.
    prompt = await player.wait_for(lambda f: f.get("kind") == "prompt", timeout=120)
    wrong_target = max(prompt["choices"] + [len(seats)]) + 1
    refused = await player.request({"type": "act", "action": prompt["action"],
                                    "targets": [wrong_target] * max(1, prompt["min"])})
    assert refused["code"] == "illegal_target"
    refused = await player.request({"type": "act", "action": "mayor.tiebreak", "targets": [0]})
    assert refused["code"] == "not_your_turn"
    assert (await host.request({"type": "start"}))["code"] == "not_your_turn"
    games.append(asyncio.create_task(Bot(player, random.Random(9)).play(until=day_or_end)))
    await asyncio.gather(*games)
    for client in clients:
        await client.close()
    assert "Traceback" not in gateway.log()  # every bad input was handled, none crashed a handler
