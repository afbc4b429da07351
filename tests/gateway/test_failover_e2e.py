"""Losing a process mid-game: a gateway (its players resume on another replica with `since`), or
the Ray actor hosting the game (Ray restarts it; it reloads the room from Redis)."""
import asyncio
import os
import random
import signal

import httpx
import orjson
import pytest

from actors.redis_connect import connect as connect_redis
from actors.store import RedisStore
from devstack.checks import assert_exact_stream, stored_log
from devstack.failover import host_pid, play_through_failover
from devstack.players import Bot, acked_acts, connect_all, in_day, is_phase, seat_table, start
from devstack.stack import connect

pytestmark = pytest.mark.e2e


async def test_players_of_a_killed_gateway_resume_on_the_other_one(stack, redis_url):
    first, second = stack.start_gateway(), stack.start_gateway()
    room, seats = await seat_table(first.url, 8)
    on_first = await connect_all(first.ws_url, room, seats[:4])
    on_second = await connect_all(second.ws_url, room, seats[4:])
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(on_first + on_second)]
    await start(on_first[0])
    games = [asyncio.create_task(play_through_failover(bot, room, seat["token"], second.ws_url))
             for bot, seat in zip(bots, seats)]

    await on_second[0].wait_for(is_phase)  # the game runs
    first.kill()
    journeys = await asyncio.wait_for(asyncio.gather(*games), 240)

    log = await stored_log(redis_url, stack.prefix, room)
    assert orjson_kind(log[-1]) == "game_over"
    for seat, clients in enumerate(journeys):
        if seat < 4:
            before, after = clients  # every player of the killed gateway moved over
            assert_exact_stream(before, log, last=before.last_seq)
            assert_exact_stream(after, log, first=before.last_seq + 1)
        else:
            (client,) = clients
            assert_exact_stream(client, log)
    for clients in journeys:
        await clients[-1].close()


def presence(seat: int, connected: bool):
    return lambda f: (f.get("kind") == "presence" and f["seat"] == seat
                      and f["connected"] is connected)


async def test_the_seats_of_a_gateway_that_dies_unannounced_show_disconnected(stack):
    doomed, survivor = stack.start_gateway(presence_lease=3), stack.start_gateway(presence_lease=3)
    room, seats = await seat_table(survivor.url, 3)
    watcher = await connect(survivor.ws_url, room, seats[0]["token"])
    # Seat 1 plays on two devices, one through each gateway; seat 2 only through the doomed one.
    devices = [await connect(url, room, seats[1]["token"])
               for url in (doomed.ws_url, survivor.ws_url)]
    stranded = await connect(doomed.ws_url, room, seats[2]["token"])
    for seat in (1, 2):
        await watcher.wait_for(presence(seat, True))

    doomed.kill()  # no socket of it says goodbye: only its lapsed lease tells
    await watcher.wait_for(presence(2, False))
    async with httpx.AsyncClient(base_url=survivor.url) as http:
        lobby = (await http.get(f"/api/rooms/{room}")).json()
    assert [p["connected"] for p in lobby["players"]] == [True, True, False]
    assert not any(presence(1, False)(f) for f in watcher.frames)
    for client in (watcher, *devices, stranded):
        await client.close()


async def test_the_game_survives_the_death_of_its_host_process(stack, redis_url):
    gateway = stack.start_gateway()
    # Twelve seats deal three wolves: the game practically never ends in its first night.
    room, seats = await seat_table(gateway.url, 12)
    clients = await connect_all(gateway.ws_url, room, seats)
    # The sleepy seat never answers: the phases waiting on it end only when their timer fires.
    bots = [Bot(c, random.Random(i), sleepy=i == 11) for i, c in enumerate(clients)]
    await start(clients[0])
    games = [asyncio.create_task(bot.play()) for bot in bots]

    day = await clients[0].wait_for(lambda f: in_day(1)(f) or f.get("kind") == "game_over")
    assert day["kind"] == "phase", "the game ended before its first day: nothing left to crash"
    acked_before = {c.seat: acked_acts(c) for c in clients}
    assert any(acked_before.values())
    seq_at_kill = clients[0].last_seq
    owner_at_kill = await room_owner(redis_url, stack.prefix, room)
    os.kill(await host_pid(stack, room), signal.SIGKILL)

    # Acknowledged means durable: the restarted room still knows the recent acked frames of
    # each seat, so sending one again (the retry of a client unsure it landed) is acknowledged
    # and not applied twice.
    resent = [(c, frame) for c in clients for frame in acked_before[c.seat][-3:]]
    replies = await asyncio.gather(*(client.request(frame) for client, frame in resent))
    # Each load of the room takes an epoch: more than one after the kill means two owners.
    assert [r["type"] for r in replies] == ["ack"] * len(resent), \
        (replies, owner_at_kill, await room_owner(redis_url, stack.prefix, room))
    endings = await asyncio.wait_for(asyncio.gather(*games), 240)
    assert all(e["kind"] == "game_over" for e in endings)
    assert any(f.get("kind") == "phase" and f["seq"] > seq_at_kill for f in clients[0].frames)
    log = await stored_log(redis_url, stack.prefix, room)
    for client in clients:
        assert_exact_stream(client, log)
        await client.close()


def orjson_kind(stored: dict) -> str:
    return orjson.loads(stored["frame"])["kind"]


async def room_owner(redis_url: str, prefix: str, room: str) -> dict:
    """The room's directory entry: its host, its owner's epoch, its status."""
    redis = connect_redis(redis_url)
    try:
        return await RedisStore(redis, prefix, finished_ttl=0).status(room)
    finally:
        await redis.aclose()
