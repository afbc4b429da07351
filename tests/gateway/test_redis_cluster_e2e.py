"""The whole stack on a real local Redis Cluster (three primaries, three replicas, made by the
test): games play to their end through a manual CLUSTER FAILOVER of the primary holding a room,
a slot migration of a playing room's slot, and a primary killed (SIGKILL) with WAIT; every
command a client saw acknowledged is in the stored log, and a socket that lived through it saw
exactly the log (nothing lost, repeated or out of order)."""
import asyncio

import pytest

from actors.store import Keys
from devstack.players import is_phase
from devstack.redis_servers import redis_cluster
from devstack.stack import Stack
from tests.gateway.failover import finish_and_check, start_games

pytestmark = pytest.mark.e2e


@pytest.fixture
def cluster_stack(ray_address, ww_prefix):
    """A private Redis Cluster and a gateway on it, every write acknowledged once replicated."""
    with redis_cluster() as cluster:
        stack = Stack(ray_address=ray_address, redis_url=cluster.url, prefix=ww_prefix)
        try:
            yield cluster, stack.start_gateway(games_per_actor=4, env={"WW_REDIS_WAIT": "1"})
        finally:
            stack.close()


async def playing(gateway, rooms: int):
    tables = await start_games(gateway, rooms=rooms, players=8)
    await tables[-1][1][0].wait_for(is_phase)
    return tables


async def test_games_play_through_a_failover_and_a_slot_migration(cluster_stack, ww_prefix):
    cluster, gateway = cluster_stack
    tables = await playing(gateway, rooms=2)
    keys = Keys(ww_prefix)
    failed_over = cluster.primary_of(keys.room(tables[0][0]))
    await asyncio.to_thread(cluster.failover, cluster.replica_of(failed_over))
    assert cluster.primary_of(keys.room(tables[0][0])) != failed_over
    moving = keys.room(tables[1][0])
    source = cluster.primary_of(moving)
    target = next(p for p in cluster.primaries() if p != source)
    await asyncio.to_thread(cluster.migrate_slot, cluster.slot(moving), target)
    assert cluster.primary_of(moving) == target
    await finish_and_check(tables, cluster.url, ww_prefix)


async def test_a_primary_killed_loses_no_acknowledged_command_with_wait(cluster_stack, ww_prefix):
    cluster, gateway = cluster_stack
    tables = await playing(gateway, rooms=1)
    killed = cluster.primary_of(Keys(ww_prefix).room(tables[0][0]))
    replica = cluster.replica_of(killed)
    killed.kill()
    await asyncio.to_thread(cluster.wait_promoted, replica)
    # Started again it rejoins as the new primary's replica, so WAIT 1 is met again
    # (until then writes are refused as not replicated, and retried).
    await asyncio.to_thread(killed.start)
    await finish_and_check(tables, cluster.url, ww_prefix)
