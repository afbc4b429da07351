"""Losing Redis mid-game: a private redis-server killed (SIGKILL) and started again from its
append-only file, and a Sentinel failover (primary killed, replica promoted). Rooms play on to
their end, and every command a client saw acknowledged is in the stored log. Rooms opened and
joined meanwhile wait for the new primary, or answer 503 if Redis stays away, never 500."""
import asyncio

import httpx
import pytest

from devstack.players import is_phase
from devstack.redis_servers import redis_server, sentinel_group
from devstack.stack import HTTP_TIMEOUT, Stack
from tests.gateway.failover import finish_and_check, start_games

pytestmark = pytest.mark.e2e


async def test_rooms_resume_when_redis_restarts_from_its_append_only_file(ray_address, ww_prefix):
    with redis_server(appendfsync="everysec") as redis:
        stack = Stack(ray_address=ray_address, redis_url=redis.url, prefix=ww_prefix)
        try:
            gateway = stack.start_gateway()
            tables = await start_games(gateway, rooms=1, players=8)
            await tables[0][1][0].wait_for(is_phase)
            redis.kill()  # everything in its memory is gone; only the file is left
            redis.start()  # same port, same directory: it loads the append-only file
            await finish_and_check(tables, redis.url, ww_prefix)
        finally:
            stack.close()


async def test_a_sentinel_failover_loses_no_acknowledged_command_with_wait(ray_address, ww_prefix):
    with sentinel_group() as group:
        stack = Stack(ray_address=ray_address, redis_url=group.url, prefix=ww_prefix)
        try:
            gateway = stack.start_gateway(env={"WW_REDIS_WAIT": "1"})
            tables = await start_games(gateway, rooms=2, players=8)
            await tables[-1][1][0].wait_for(is_phase)
            old = group.primary
            old.kill()
            promoted = await asyncio.to_thread(group.wait_promoted, old.port)
            assert promoted[1] == group.replica.port
            # Its supervisor starts the dead server again; the sentinels make it the new
            # primary's replica, so WAIT 1 can be satisfied again (until then writes fail and
            # are retried: nothing is acknowledged that only one copy holds).
            old.start()
            await finish_and_check(tables, group.url, ww_prefix)
        finally:
            stack.close()


async def test_rooms_open_and_seat_players_through_a_sentinel_failover(ray_address, ww_prefix):
    with sentinel_group() as group:
        stack = Stack(ray_address=ray_address, redis_url=group.url, prefix=ww_prefix)
        try:
            # Patience past any promotion, however loaded the machine (here it takes 2-3 s).
            gateway = stack.start_gateway(games_per_actor=50, env={"WW_REQUEST_PATIENCE": "60"})
            answers: list[httpx.Response] = []
            rooms: list[str] = []
            arrived = asyncio.Condition()
            stopping = asyncio.Event()

            async def post(http: httpx.AsyncClient, path: str, name: str) -> httpx.Response:
                response = await http.post(path, json={"name": name})
                async with arrived:
                    answers.append(response)
                    arrived.notify_all()
                return response

            async def keep_opening(n: int) -> None:
                """Open a room and seat a guest in it, again and again."""
                async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
                    while not stopping.is_set():
                        created = await post(http, "/api/rooms", f"Host{n}")
                        if created.status_code == 201:
                            rooms.append(created.json()["room"])
                            await post(http, f"/api/rooms/{rooms[-1]}/join", "Guest")

            async def answered(count: int) -> None:
                async with arrived:
                    await asyncio.wait_for(arrived.wait_for(lambda: len(answers) >= count), 120)

            openers = [asyncio.create_task(keep_opening(n)) for n in range(3)]
            await answered(6)
            old = group.primary
            old.kill()  # every opener has a request under way
            await asyncio.to_thread(group.wait_promoted, old.port)
            await answered(len(answers) + 6)
            stopping.set()
            await asyncio.gather(*openers)
            assert {r.status_code for r in answers} <= {200, 201}, [r.text for r in answers]
            assert "retrying in" in gateway.log()  # requests did meet the outage
            async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
                for room in rooms:
                    players = (await http.get(f"/api/rooms/{room}")).json()["players"]
                    assert [p["name"] for p in players][1:] == ["Guest"], room
        finally:
            stack.close()


async def test_rooms_answer_503_while_redis_stays_away_and_nothing_is_left_half_made(
        ray_address, ww_prefix):
    with redis_server() as redis:
        stack = Stack(ray_address=ray_address, redis_url=redis.url, prefix=ww_prefix)
        try:
            gateway = stack.start_gateway(games_per_actor=50, env={"WW_REQUEST_PATIENCE": "2"})
            async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
                room = (await http.post("/api/rooms", json={"name": "Layla"})).json()["room"]
                redis.kill()
                refused = await asyncio.gather(
                    http.post("/api/rooms", json={"name": "Omar"}),
                    http.post(f"/api/rooms/{room}/join", json={"name": "Omar"}))
                for response in refused:
                    assert response.status_code == 503, response.text
                    assert response.json()["detail"]["code"] == "storage_unavailable"
                    assert int(response.headers["retry-after"]) > 0
                await asyncio.to_thread(redis.start)  # from its append-only file
                assert (await http.post(f"/api/rooms/{room}/join",
                                        json={"name": "Omar"})).status_code == 200
                assert (await http.post("/api/rooms", json={"name": "Ines"})).status_code == 201
            with redis.client() as r:  # a host slot taken for each room there is, no more
                slots = r.zrange(f"{ww_prefix}:hosts", 0, -1, withscores=True)
                assert sum(score for _, score in slots) == 2
                assert len(list(r.scan_iter(match=f"{ww_prefix}:room:*:state"))) == 2
        finally:
            stack.close()
