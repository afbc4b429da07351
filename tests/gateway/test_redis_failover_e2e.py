"""Losing Redis mid-game: a private redis-server killed (SIGKILL) and started again from its
append-only file, and a Sentinel failover (primary killed, replica promoted). Rooms play on to
their end, and every command a client saw acknowledged is in the stored log."""
import asyncio
import random

import orjson
import pytest

from tests.gateway.checks import assert_exact_stream, lost_acks, stored_log
from tests.gateway.players import Bot, connect_all, is_phase, seat_table, start
from tests.gateway.test_failover_e2e import play_through_failover
from tests.redis_servers import redis_server, sentinel_group
from tests.stack import Stack

pytestmark = pytest.mark.e2e


async def start_games(gateway, rooms: int, players: int):
    tables = []
    for r in range(rooms):
        room, seats = await seat_table(gateway.url, players)
        clients = await connect_all(gateway.ws_url, room, seats)
        bots = [Bot(c, random.Random(100 * r + i)) for i, c in enumerate(clients)]
        await start(clients[0])
        games = [asyncio.create_task(play_through_failover(bot, room, seat["token"], gateway.ws_url))
                 for bot, seat in zip(bots, seats)]
        tables.append((room, clients, games))
    return tables


async def finish_and_check(tables, redis_url: str, prefix: str) -> None:
    for room, clients, games in tables:
        journeys = await asyncio.wait_for(asyncio.gather(*games), 240)
        log = await stored_log(redis_url, prefix, room)
        assert orjson.loads(log[-1]["frame"])["kind"] == "game_over"
        used = [c for journey in journeys for c in journey]
        assert lost_acks(used, log) == []
        assert sum(f.get("type") == "ack" for c in used for f in c.frames) > 0
        for journey in journeys:
            if len(journey) == 1:  # a socket that lived through it saw exactly the log
                assert_exact_stream(journey[0], log)
            await journey[-1].close()


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
