"""Elastic game hosts on Ray's own autoscaler: Ray's fake multi-node provider (what
`ray.cluster_utils.AutoscalingCluster` runs; devstack/ray_head.py) starts and stops game-host nodes
on this machine by the resource demand of hosts that hold room slots (WW_HOST_RESOURCE).

A node offers 4 slots (two hosts of two rooms), one runs from the start (min_workers). Four rooms
fill it; the fifth waits for a host that fits nowhere, the autoscaler adds a node, and the fifth
and sixth rooms play whole games there; once they end their host is stopped, the node is idle and
the autoscaler removes it. Slow by nature (Ray nodes start and stop, two games play, placement
tidies every 30 s, the autoscaler waits out an idle timeout): about 3 minutes here."""
import asyncio
import random
import time

import pytest

from actors.placement import MAINTAIN_EVERY
from actors.store import Keys
from actors.redis_connect import connect as redis_connect
from devstack.checks import assert_exact_stream, lost_acks, stored_log
from devstack.netns import HOST_RESOURCE
from devstack.players import Bot, connect_all, seat_table, start
from devstack.ray_head import cluster_view, ray_head
from devstack.stack import Stack, create_room
from tests.helpers import until

SLOTS = 4  # rooms one game-host node holds: two hosts of GAMES_PER_HOST rooms
GAMES_PER_HOST = 2
# What a room may wait for a node: issue 36's target is 60 s, measured and printed here, not
# asserted (a Ray node's start swings with the box's load: a start timed out at load 45).
PATIENCE = 300
IDLE_MINUTES = 0.1  # the autoscaler's idle timeout

# Two Ray node starts, two whole games and a node's removal: longer than the suite's 300 s default.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


async def host_nodes(address: str) -> set[str]:
    return {n for n, resources in (await cluster_view(address))["nodes"].items()
            if resources.get(HOST_RESOURCE)}


async def node_of_room(address: str, redis_url: str, prefix: str, room: str) -> str:
    redis = redis_connect(redis_url)
    try:
        host = (await redis.hget(Keys(prefix).room(room), "host")).decode()
    finally:
        await redis.aclose()
    return (await cluster_view(address))["actors"][host]


async def seat_and_start(gateway, seats: int) -> tuple[str, list]:
    """Seat a table and start its game; (room, the seats' clients)."""
    room, tokens = await seat_table(gateway.url, seats, timeout=PATIENCE)
    clients = await connect_all(gateway.ws_url, room, tokens)
    await start(clients[0])
    return room, clients


# A slow waiter: a Ray head or node that does not start on a loaded box (its raylet waits ~15 s
# for its agent, then gives up; seen at load 30-50) fails the try, not the rule: one rerun.
@pytest.mark.flaky(reruns=1)
async def test_a_node_is_added_when_rooms_wait_for_slots_and_removed_once_its_rooms_end(
        redis_url, ww_prefix, capsys):
    nodes = {"game_hosts": {"resources": {"CPU": 1, HOST_RESOURCE: SLOTS},
                            "min_workers": 1, "max_workers": 2}}
    with ray_head(num_cpus=1, fake_nodes=nodes, idle_timeout_minutes=IDLE_MINUTES,
                  startup_timeout=PATIENCE) as address:
        first = await until(lambda: host_nodes(address), 180, "the first game-host node", every=2)
        stack = Stack(ray_address=address, redis_url=redis_url, prefix=ww_prefix,
                      drops_actors=False)  # the whole cluster goes with the test
        try:
            # No spare host: a room past the slots waits for a node itself.
            env = {"WW_HOST_RESOURCE": HOST_RESOURCE, "WW_HOST_START_WAIT": str(PATIENCE),
                   "WW_LOBBY_IDLE_CLOSE": "3600"}  # the first node's lobbies outlive the test
            gateway = stack.start_gateway(games_per_actor=GAMES_PER_HOST, warm_actors=0, env=env)
            lobbies = [(await create_room(gateway.url, "Filler"))["room"] for _ in range(SLOTS)]
            for room in lobbies:
                assert await node_of_room(address, redis_url, ww_prefix, room) in first
            waited = time.monotonic()
            tables = [await seat_and_start(gateway, 6)]  # its creation waits for the new node
            waited = time.monotonic() - waited
            added = await host_nodes(address) - first
            assert len(added) == 1, added
            tables.append(await seat_and_start(gateway, 6))
            for room, _ in tables:  # the new node took the rooms that came after the full ones
                assert await node_of_room(address, redis_url, ww_prefix, room) in added
            games = [Bot(client, random.Random(i)).play()
                     for _, clients in tables for i, client in enumerate(clients)]
            await asyncio.wait_for(asyncio.gather(*games), 300)
            for room, clients in tables:  # every game played through the new node lost nothing
                log = await stored_log(redis_url, ww_prefix, room)
                assert lost_acks(clients, log) == []
                for client in clients:
                    assert_exact_stream(client, log)
                    await client.close()
            ended = time.monotonic()
            # Its rooms over, its host is stopped (placement's round) and the idle node removed.
            await until(lambda: _gone(address, added), MAINTAIN_EVERY + IDLE_MINUTES * 60 + 90,
                        "the added node removed once idle", every=3)
            removed = time.monotonic() - ended
            assert await host_nodes(address) == first  # the rooms of the first node stay there
            with capsys.disabled():
                print(f"\nautoscaling: a room waited {waited:.1f} s for a new node; the idle "
                      f"node was removed {removed:.1f} s after its games ended")
        finally:
            stack.close()


async def _gone(address: str, nodes: set[str]) -> bool:
    return not (await host_nodes(address)) & nodes
