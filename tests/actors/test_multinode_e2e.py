"""A real three-node Ray cluster (devstack/netns.py: one network namespace per node): game hosts
only on the two worker nodes (WW_HOST_RESOURCE); kill -9 the worker node holding a room's host
mid-game.
Ray restarts the host on the other worker node, it reloads the room from Redis, every seat can act
again, and no acknowledged command is lost."""
import asyncio
import random
import secrets
import shutil
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from devstack.checks import assert_exact_stream, lost_acks, stored_log
from devstack.failover import host_pid, play_through_failover
from devstack.netns import (FAST_HEALTH_CHECKS, HOST_RESOURCE, RAY_GCS_PORT, available, netns_lan,
                            ray_node, run_in_namespace, stop_node)
from devstack.players import Bot, connect_all, in_day, seat_table, start
from devstack.ray_head import free_port
from devstack.redis_servers import RedisServer, aof_args
from devstack.stack import Stack

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not available(),
                                 reason="needs root and iproute2 (network namespaces)")]

async def probe_all(clients) -> list[float]:
    """Each seat sends a chat line; seconds until the room answered it (ack, or a refusal such as
    a sleeping villager's not_your_turn: either way the room is up and processed it)."""
    started = time.monotonic()

    async def probe(client) -> float:
        reply = await client.request({"type": "chat", "text": f"still here {secrets.token_hex(3)}"},
                                     timeout=90)
        assert reply["type"] == "ack" or reply["code"] not in ("internal",), reply
        return time.monotonic() - started

    return list(await asyncio.gather(*(probe(c) for c in clients)))


def test_rooms_of_a_killed_worker_node_resume_on_the_other(ww_prefix, capsys):
    with netns_lan(3) as lan:
        nodes = []
        data = Path(tempfile.mkdtemp(prefix="ww-mn-"))
        redis = RedisServer(0, data, aof_args(), bind=lan.ips[0])
        try:
            async def body():
                redis.port = free_port()
                redis.start()
                nodes.append(ray_node(lan, 0, env=FAST_HEALTH_CHECKS))
                for i in (1, 2):
                    nodes.append(ray_node(lan, i, head_ip=lan.ips[0],
                                          resources={HOST_RESOURCE: 1000}))
                stack = Stack(ray_address=f"{lan.ips[0]}:{RAY_GCS_PORT}", redis_url=redis.url,
                              prefix=ww_prefix, drops_actors=False)
                try:
                    return await play_and_kill_a_node(lan, stack, nodes)
                finally:
                    stack.close()

            recovery = run_in_namespace(lan, 0, body)
            with capsys.disabled():
                print(f"\nworker node killed: every seat of its rooms answered again after "
                      f"{max(recovery):.1f} s "
                      f"(median {sorted(recovery)[len(recovery) // 2]:.1f} s)")
        finally:
            for node in nodes:
                stop_node(node)
            redis.kill()
            shutil.rmtree(data, ignore_errors=True)


async def play_and_kill_a_node(lan, stack, nodes) -> list[float]:
    gateway = stack.start_gateway(env={"WW_HOST_RESOURCE": HOST_RESOURCE,
                                       "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"})
    tables = []
    for _r in range(2):
        room, seats = await seat_table(gateway.url, 8)
        clients = await connect_all(gateway.ws_url, room, seats)
        await start(clients[0])
        tables.append((room, seats, clients))
    where = {}
    for room, _, _ in tables:
        where[room] = lan.namespace_of(await host_pid(stack, room))
        assert where[room] in (1, 2), "a game host ran outside the worker nodes"
    # Three hosts by now (each room's, and the spare): Ray's default would pack them on one node.
    # (None: a host of another cluster on this machine, outside this test's namespaces.)
    hosts = {lan.namespace_of(p.pid) for p in psutil.process_iter(["cmdline"])
             if "GameHost" in " ".join(p.info["cmdline"] or [])}
    assert hosts - {None} == {1, 2}, \
        "the game hosts were not spread over the worker nodes"
    doomed_room, seats, clients = tables[0]
    doomed = where[doomed_room]
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(clients)]
    games = [asyncio.create_task(play_through_failover(bot, doomed_room, seat["token"],
                                                       gateway.ws_url))
             for bot, seat in zip(bots, seats)]
    others = [(room, clients) for room, _, clients in tables[1:]]
    # Twelve seats would make a long game; eight with 2 s phases still reach day 1 first.
    await clients[0].wait_for(lambda f: in_day(1)(f) or f.get("kind") == "game_over")
    nodes[doomed].kill()
    recovery = await probe_all(clients)
    survivor = lan.namespace_of(await host_pid(stack, doomed_room))
    assert survivor == 3 - doomed, "the room's host did not move to the surviving worker node"
    for _room, room_clients in others:  # rooms elsewhere noticed nothing but answer too
        await probe_all(room_clients)
    journeys = await asyncio.wait_for(asyncio.gather(*games), 240)
    log = await stored_log(stack.redis_url, stack.prefix, doomed_room)
    used = [c for journey in journeys for c in journey]
    assert lost_acks(used, log) == []
    for journey in journeys:
        if len(journey) == 1:
            assert_exact_stream(journey[0], log)
        await journey[-1].close()
    for _, room_clients in others:
        for client in room_clients:
            await client.close()
    return recovery
