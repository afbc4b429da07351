"""Moderation on the real stack (gateway process, Ray host, Redis): a removed seat's socket
closes with 4003 and its token opens nothing any more, the seat that moved into its place
reconnects with 4004 and is welcomed at its new seat; a public table's vote removes a seat, which
is not seated there again from its address; a
report is read by an operator with the admin secret, a page at a time, and by nobody else."""
import asyncio

import httpx
import orjson
import pytest

from actors.store import Keys
from devstack.stack import HTTP_TIMEOUT, connect, create_room, join_room, open_socket

pytestmark = pytest.mark.e2e

SECRET = "operators-only-secret"


@pytest.fixture
def gateway(stack):
    return stack.start_gateway(games_per_actor=10, env={
        "WW_ADMIN_SECRET": SECRET, "WW_QUICK_PLAYS_PER_ADDRESS": "0",
        "WW_PUBLIC_COUNTDOWN": "600", "WW_VOTE_SETTLED": "0",  # settled: tests/actors
        "WW_REPORTS_PER_SEAT": "1", "WW_REPORT_BURST": "10"})  # 6 reports in a row from here


async def seated(gateway, count: int) -> tuple[str, list[dict], list]:
    host = await create_room(gateway.url, "Host")
    seats = [host] + [await join_room(gateway.url, host["room"], f"P{i}") for i in range(1, count)]
    sockets = [await connect(gateway.ws_url, s["room"], s["token"]) for s in seats]
    return host["room"], seats, sockets


async def test_a_removed_seat_is_shut_out_and_the_moved_one_reconnects_at_its_place(gateway):
    room, seats, sockets = await seated(gateway, 4)
    assert (await sockets[0].request({"type": "remove", "seat": 1}))["type"] == "ack"
    removed = await sockets[2].wait_for(lambda f: f.get("kind") == "removed")
    assert (removed["seat"], removed["name"], removed["reason"], removed["moved"]) == (
        1, "P1", "host", 3)
    assert await sockets[1].wait_closed() == 4003
    assert await sockets[3].wait_closed() == 4004
    assert not sockets[0].ws.close_code and not sockets[2].ws.close_code
    moved = await connect(gateway.ws_url, room, seats[3]["token"])
    assert moved.seat == 1
    assert [p["name"] for p in moved.welcome["view"]["players"]] == ["Host", "P3", "P2"]
    gone = await open_socket(gateway.ws_url, room)
    await gone.send({"type": "hello", "token": seats[1]["token"]})
    assert await gone.wait_closed() == 1008
    # the moved seat acts as its new seat: it leaves (the close answers, maybe before the ack)
    await moved.send({"type": "leave", "id": "bye"})
    assert await moved.wait_closed() == 4003
    left = await sockets[0].wait_for(lambda f: f.get("kind") == "removed" and f["reason"] == "left")
    assert (left["seat"], left["name"], left["moved"]) == (1, "P3", 2)
    for client in (sockets[0], sockets[2]):
        await client.close()


async def test_a_public_table_votes_a_seat_out(gateway):
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        seats = []
        for i, name in enumerate(("A", "B", "C", "D")):  # each from an address of its own
            response = await http.post("/api/quickplay", json={
                "name": name, "preset": "seed_000", "language": "ar"},
                headers={"X-Forwarded-For": f"198.51.100.{i + 1}"})
            seats.append(response.json())
    room = seats[0]["room"]
    assert {s["room"] for s in seats} == {room}
    sockets = [await connect(gateway.ws_url, room, s["token"]) for s in seats]
    assert (await sockets[0].request({"type": "remove", "seat": 3}))["type"] == "ack"
    vote = await sockets[3].wait_for(lambda f: f.get("kind") == "remove_vote")
    assert (vote["seat"], vote["votes"], vote["needed"]) == (3, 1, 2)
    assert (await sockets[3].request({"type": "remove", "seat": 0}))["type"] == "ack"
    await sockets[1].request({"type": "remove", "seat": 3})
    assert await sockets[3].wait_closed() == 4003
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        listed = (await http.get("/api/tables", params={"language": "ar"})).json()["tables"]
        assert [(t["room"], t["seats"]) for t in listed] == [(room, 3)]
        facts = (await http.get(f"/api/rooms/{room}")).json()
    assert [p["name"] for p in facts["players"]] == ["A", "B", "C"]
    # D presses again, a new name from the same address: a seat elsewhere; a stranger sits here
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        body = {"preset": "seed_000", "language": "ar"}
        back = await http.post("/api/quickplay", json={**body, "name": "Disguised"},
                               headers={"X-Forwarded-For": "198.51.100.4"})
        stranger = await http.post("/api/quickplay", json={**body, "name": "E"},
                                   headers={"X-Forwarded-For": "198.51.100.5"})
    assert back.json()["room"] != room and stranger.json()["room"] == room
    for client in sockets[:3]:
        await client.close()


async def test_a_report_reaches_the_operators_and_no_one_else(gateway, stack):
    room, seats, sockets = await seated(gateway, 3)
    # a line of the reported seat as the room stores its chat (actors.store: the chat list)
    line = {"channel": "day", "seat": 2, "name": "P2", "text": "rude words", "ts": 1, "to": None}
    import redis.asyncio as aioredis
    redis = aioredis.Redis.from_url(stack.redis_url)
    await redis.rpush(Keys(gateway.prefix).chat(room), orjson.dumps(line))
    await redis.aclose()
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        body = {"token": seats[1]["token"], "seat": 2, "reason": "abuse", "text": "insults"}
        filed = await http.post(f"/api/rooms/{room}/reports", json=body)
        assert filed.status_code == 201 and filed.json() == {"ok": True, "duplicate": False}
        again = await http.post(f"/api/rooms/{room}/reports", json=body)
        assert again.json()["duplicate"] is True
        self_report = await http.post(f"/api/rooms/{room}/reports", json={**body, "seat": 1})
        assert self_report.status_code == 409
        stranger = await http.post(f"/api/rooms/{room}/reports", json={**body, "token": "x" * 43})
        assert stranger.status_code == 401
        assert (await http.get("/api/admin/reports")).status_code == 401
        wrong = await http.get("/api/admin/reports", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        read = await http.get("/api/admin/reports", headers={"Authorization": f"Bearer {SECRET}"})
        assert read.status_code == 200
        lower = await http.get("/api/admin/reports", headers={"Authorization": f"bEARER {SECRET}"})
        assert lower.status_code == 200 and lower.json() == read.json()  # RFC 7235: any case
        [report] = read.json()["reports"]
        assert report["room"] == room and report["reason"] == "abuse"
        assert report["reporter"] == {"seat": 1, "name": "P1"}
        assert report["reported"] == {"seat": 2, "name": "P2"}
        assert [line["text"] for line in report["lines"]] == ["rude words"]
        # a seat files one report here (WW_REPORTS_PER_SEAT), another seat may still
        bound = await http.post(f"/api/rooms/{room}/reports", json={**body, "seat": 0})
        assert bound.status_code == 409 and bound.json()["detail"]["code"] == "too_many_reports"
        other = {**body, "token": seats[2]["token"], "seat": 1}
        assert (await http.post(f"/api/rooms/{room}/reports", json=other)).status_code == 201
        admin = {"Authorization": f"Bearer {SECRET}"}
        first = (await http.get("/api/admin/reports?limit=1", headers=admin)).json()
        assert [r["reporter"]["seat"] for r in first["reports"]] == [2]  # the newest first
        second = (await http.get("/api/admin/reports", headers=admin,
                                 params={"limit": 1, "cursor": first["next"]})).json()
        assert second["reports"] == [report]
        bad = await http.get("/api/admin/reports?cursor=x", headers=admin)
        assert bad.status_code == 422
        # nothing of it reaches a player's socket
    await asyncio.sleep(0)
    assert not any(f.get("kind") == "report" or "insults" in orjson.dumps(f).decode()
                   for client in sockets for f in client.frames)
    for client in sockets:
        await client.close()
