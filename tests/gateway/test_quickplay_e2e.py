"""Quick play and the list of public tables on the real stack: two gateway processes, one Ray
cluster, Redis. Concurrent presses on both gateways fill 18-seat tables one after the other:
none overfilled, no press seated twice, one table left part-full; a full table started by itself
and is listed for spectators."""
import asyncio
from collections import Counter
import secrets

import httpx
import pytest

from devstack.stack import HTTP_TIMEOUT, Stack, connect

pytestmark = pytest.mark.e2e

PRESSES = 60  # three full tables of 18, then 6 at a fourth


@pytest.fixture(scope="module")
def gateways(ray_address, redis_url):
    """Two gateways for the module: each test presses for a kind of its own."""
    stack = Stack(ray_address=ray_address, redis_url=redis_url, prefix="t" + secrets.token_hex(5))
    env = {"WW_QUICK_PLAYS_PER_ADDRESS": "0", "WW_PUBLIC_COUNTDOWN": "600"}
    yield [stack.start_gateway(games_per_actor=10, env=env) for _ in range(2)]
    stack.close()


async def press(http: httpx.AsyncClient, name: str, press_id: str | None = None,
                preset: str = "seed_000", language: str = "en") -> dict:
    body = {"name": name, "preset": preset, "language": language}
    if press_id:
        body["press"] = press_id
    response = await http.post("/api/quickplay", json=body)
    response.raise_for_status()
    return response.json()


async def test_concurrent_presses_fill_tables_in_turn_across_gateways(gateways):
    clients = [httpx.AsyncClient(base_url=g.url, timeout=HTTP_TIMEOUT) for g in gateways]
    try:
        seats = await asyncio.gather(*(press(clients[i % 2], f"P{i}") for i in range(PRESSES)))
        by_room: dict[str, list[int]] = {}
        for seat in seats:
            by_room.setdefault(seat["room"], []).append(seat["seat"])
        assert sorted(len(s) for s in by_room.values()) == [6, 18, 18, 18]
        for taken in by_room.values():  # each seat of a table given once
            assert sorted(taken) == list(range(len(taken)))
        assert len({s["token"] for s in seats}) == PRESSES
        part_full = next(room for room, taken in by_room.items() if len(taken) == 6)
        for room, taken in by_room.items():
            facts = (await clients[0].get(f"/api/rooms/{room}")).json()
            assert facts["public"] is True and len(facts["players"]) == len(taken)
            assert facts["status"] == ("lobby" if room == part_full else "running")
        listed = (await clients[1].get("/api/tables", params={"preset": "seed_000"})).json()
        assert [(t["room"], t["seats"], t["size"]) for t in listed["tables"]] == [
            (part_full, 6, 18)]
        assert listed["tables"][0]["starts_at"] is not None  # counting down from its first seat
        running = (await clients[1].get("/api/tables", params={"state": "running"})).json()
        assert sorted(t["room"] for t in running["tables"]) == sorted(
            room for room in by_room if room != part_full)
        # a seat's token opens its socket: the welcome names the table's seat
        seat = next(s for s in seats if s["room"] == part_full)
        client = await connect(gateways[1].ws_url, seat["room"], seat["token"])
        assert client.welcome["view"]["public"] is True
        await client.close()
    finally:
        for http in clients:
            await http.aclose()


async def test_presses_at_once_from_one_address_are_seated_up_to_its_seat_cap(stack):
    """Each press counted what its address held, then was seated: 120 presses at once were seated
    106 times at 6 tables against caps of 40 seats and 5 rooms (issue 34). Then each reserved a
    room, joins too, and 120 at once seated 9. Exactly the cap, at the tables it fills."""
    gateway = stack.start_gateway(games_per_actor=10, env={
        "WW_PUBLIC_COUNTDOWN": "600", "WW_LOBBY_SEATS_PER_ADDRESS": "40",
        "WW_OPEN_LOBBIES_PER_ADDRESS": "5", "WW_QUICK_PLAY_BURST": "0"})  # all of them at once
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        answers = await asyncio.gather(*(http.post("/api/quickplay", json={
            "name": f"P{i}", "preset": "seed_000", "language": "en"}) for i in range(60)))
    seated = [a.json() for a in answers if a.status_code == 200]
    assert len(seated) == 40
    assert sorted(Counter(s["room"] for s in seated).values()) == [4, 18, 18]
    assert {a.json()["detail"]["code"] for a in answers if a.status_code != 200} == {
        "rate_limited"}


async def test_a_retried_press_gets_the_same_seat(gateways):
    async with httpx.AsyncClient(base_url=gateways[0].url, timeout=HTTP_TIMEOUT) as http:
        press_id = secrets.token_hex(8)
        first, again = await asyncio.gather(press(http, "Twice", press_id, "seed_002", "vi"),
                                            press(http, "Twice", press_id, "seed_002", "vi"))
        assert first == again
        facts = (await http.get(f"/api/rooms/{first['room']}")).json()
        assert [p["name"] for p in facts["players"]] == ["Twice"]


async def test_a_press_id_sent_from_elsewhere_is_another_press(gateways):
    """The id is no credential: reused from another address, or with another name, it never
    answers the first press's seat and token (it is a press of its own)."""
    async with httpx.AsyncClient(base_url=gateways[0].url, timeout=HTTP_TIMEOUT) as http:
        press_id = secrets.token_hex(8)
        body = {"name": "Owner", "preset": "seed_004", "language": "vi", "press": press_id}
        here = {"X-Forwarded-For": "198.51.100.7"}
        first = (await http.post("/api/quickplay", json=body, headers=here)).json()
        assert (await http.post("/api/quickplay", json=body, headers=here)).json() == first
        elsewhere = await http.post("/api/quickplay", json=body,
                                    headers={"X-Forwarded-For": "203.0.113.9"})
        renamed = await http.post("/api/quickplay", json={**body, "name": "Thief"}, headers=here)
        for other in (elsewhere, renamed):
            assert other.status_code == 200 and other.json()["token"] != first["token"]
        facts = (await http.get(f"/api/rooms/{first['room']}")).json()
        assert [p["name"] for p in facts["players"]].count("Owner") == 1


async def test_a_host_s_public_table_is_listed_and_counts_a_link_join(gateways):
    async with httpx.AsyncClient(base_url=gateways[0].url, timeout=HTTP_TIMEOUT) as http:
        made = await http.post("/api/rooms", json={"name": "Host", "public": True,
                                                   "preset": "seed_004", "language": "zh"})
        assert made.status_code == 201
        room = made.json()["room"]
        assert (await http.post(f"/api/rooms/{room}/join",
                                json={"name": "Friend"})).status_code == 200
        listed = (await http.get("/api/tables", params={"language": "zh"})).json()
        assert [(t["room"], t["preset"], t["seats"], t["size"]) for t in listed["tables"]] == [
            (room, "seed_004", 2, 20)]
        # a quick-play press for that kind takes a seat there rather than opening another
        body = {"name": "Stranger", "preset": "seed_004", "language": "zh"}
        seat = (await http.post("/api/quickplay", json=body)).json()
        assert (seat["room"], seat["seat"]) == (room, 2)
        private = await http.post("/api/rooms", json={"name": "Quiet"})
        assert private.json()["room"] not in [
            t["room"] for t in (await http.get("/api/tables")).json()["tables"]]
        bad = await http.get("/api/tables", params={"preset": "nope"})
        assert bad.status_code == 422


async def test_presses_on_a_redis_cluster_fill_one_table_then_the_next(ray_address, ww_prefix):
    """The index's scripts each touch one slot: on a Redis Cluster quick play works alike."""
    from devstack.redis_servers import redis_cluster
    from devstack.stack import Stack
    with redis_cluster() as cluster:
        stack = Stack(ray_address=ray_address, redis_url=cluster.url, prefix=ww_prefix)
        try:
            gateway = stack.start_gateway(games_per_actor=10,
                                          env={"WW_QUICK_PLAYS_PER_ADDRESS": "0"})
            async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
                seats = await asyncio.gather(*(press(http, f"C{i}") for i in range(22)))
                rooms = sorted({s["room"] for s in seats},
                               key=lambda r: -sum(s["room"] == r for s in seats))
                assert [sum(s["room"] == r for s in seats) for r in rooms] == [18, 4]
                listed = (await http.get("/api/tables")).json()["tables"]
                assert [(t["room"], t["seats"]) for t in listed] == [(rooms[1], 4)]
        finally:
            stack.close()
