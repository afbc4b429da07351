"""Sharded pub/sub across a Redis Cluster's nodes (actors.pubsub), under the subscriber of every
gateway process (actors.subscriptions), on a private cluster each: a room's channel
follows its slot when the slot migrates and when its primary is killed, and what went out while
it moved is read from the log, so a listener still gets every event once, in order."""
import asyncio

import pytest

from actors.redis_connect import connect
from actors.store import REDIS_DOWN, Keys, RedisStore, patiently
from actors.subscriptions import Subscriptions
from devstack.redis_servers import redis_cluster
from tests.actors.rooms import CODE, take, write


@pytest.fixture
async def private_cluster(prefix):
    with redis_cluster() as cluster:
        client = connect(cluster.url)
        store = RedisStore(client, prefix, finished_ttl=3600)
        await store.claim(CODE, "h1")
        subscriptions = Subscriptions(client, Keys(prefix), store.events_after)
        await subscriptions.start(Keys(prefix).replies("test"), lambda message: None)
        yield cluster, store, subscriptions
        await subscriptions.close()
        await client.aclose()


async def test_a_channel_follows_its_slot_to_another_primary(private_cluster, prefix):
    cluster, store, subscriptions = private_cluster
    channel = Keys(prefix).room(CODE)
    async with subscriptions.listen(CODE) as queue:
        await write(store, 1, 2)
        assert await take(queue, 2) == [1, 2]
        source = cluster.primary_of(channel)
        target = next(p for p in cluster.primaries() if p != source)
        await asyncio.to_thread(cluster.migrate_slot, cluster.slot(channel), target)
        await write(store, 3, 2)
        assert await take(queue, 2) == [3, 4]
        assert subscriptions._pubsub._where[channel.encode()] == f"127.0.0.1:{target.port}"


async def test_a_channel_whose_primary_is_killed_resubscribes_and_refills(private_cluster, prefix):
    cluster, store, subscriptions = private_cluster
    channel = Keys(prefix).room(CODE)
    async with subscriptions.listen(CODE) as queue:
        await write(store, 1, 1)
        assert await take(queue, 1) == [1]
        killed = cluster.primary_of(channel)
        replica = cluster.replica_of(killed)
        killed.kill()
        await asyncio.to_thread(cluster.wait_promoted, replica)
        # written at once on the promoted primary, perhaps before the subscriber moved there:
        # those it reads from the log when its subscription is confirmed
        await patiently(lambda: write(store, 2, 3), "a write", retry_on=REDIS_DOWN)
        assert await take(queue, 3) == [2, 3, 4]
        assert subscriptions._pubsub._where[channel.encode()] == f"127.0.0.1:{replica.port}"
