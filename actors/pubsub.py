"""Sharded pub/sub (SSUBSCRIBE, Redis 7) on one Redis or across a Redis Cluster's nodes.

On one Redis (plain or Sentinel) it is redis-py's own PubSub, which subscribes again by itself
after a reconnection. On a cluster a shard channel lives on the node of its slot: `ClusterPubSub`
keeps one plain PubSub per node, each read by its own task into one queue, so a message waits on
nothing but its own socket (redis-py's asyncio ClusterPubSub polls its nodes in turn with a
timeout each). A channel follows its slot: when its node says `sunsubscribe` unasked (the slot
moved) or its connection fails (a primary killed), the slot map is read again and the channel
subscribed on the node that serves it now; that node's `ssubscribe` confirmation reaches the
reader like any other, and a subscriber treats a confirmation of a channel it already had as a
resubscription (actors.subscriptions.Subscriptions reads what it missed from the log).
"""
from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster

log = logging.getLogger(__name__)

REROUTE_PAUSE = 0.2  # seconds between tries while a channel's slot has no reachable node


def shard_pubsub(redis: aioredis.Redis | RedisCluster) -> PubSub | ClusterPubSub:
    """A pub/sub connection for shard channels: `ssubscribe`, `sunsubscribe`, `get_message`,
    `aclose`, on either kind of client."""
    return ClusterPubSub(redis) if isinstance(redis, RedisCluster) else redis.pubsub()


class ClusterPubSub:
    def __init__(self, cluster: RedisCluster) -> None:
        self._cluster = cluster
        self._nodes: dict[str, tuple[PubSub, asyncio.Task]] = {}  # node name -> its connection
        self._where: dict[bytes, str] = {}  # channel -> the node it is subscribed on
        self._leaving: set[bytes] = set()  # unsubscribed by us: their sunsubscribe is expected
        self._messages: asyncio.Queue = asyncio.Queue()
        self._lock = asyncio.Lock()  # one reroute or subscription change at a time
        self._moving: set[asyncio.Task] = set()  # reroutes under way (the loop keeps weak refs)

    async def ssubscribe(self, *channels: str) -> None:
        async with self._lock:
            for channel in channels:
                await self._subscribe(channel.encode())

    async def sunsubscribe(self, *channels: str) -> None:
        async with self._lock:
            for channel in map(str.encode, channels):
                node = self._where.pop(channel, None)
                if node in self._nodes:
                    self._leaving.add(channel)
                    try:
                        await self._nodes[node][0].sunsubscribe(channel)
                    except ConnectionError:  # the node is gone, and the subscription with it
                        self._leaving.discard(channel)

    async def get_message(self, timeout: float | None = None) -> dict | None:
        try:
            return await asyncio.wait_for(self._messages.get(), timeout)
        except asyncio.TimeoutError:
            return None

    async def aclose(self) -> None:
        for task in self._moving:
            task.cancel()
        for pubsub, reader in self._nodes.values():
            reader.cancel()
            await _close(pubsub)
        self._nodes.clear()

    async def _subscribe(self, channel: bytes) -> None:
        """On the node that serves the channel's slot now (raises if it cannot be reached); a
        node's reader starts once its first subscription went through."""
        await self._cluster.initialize()  # the slot map, once (a no-op after)
        node = self._cluster.get_node_from_key(channel)
        if node is None:
            raise ConnectionError(f"no node serves {channel!r}")
        if node.name in self._nodes:
            await self._nodes[node.name][0].ssubscribe(channel)
        else:
            client = aioredis.Redis(host=node.host, port=node.port,
                                    password=node.connection_kwargs.get("password"))
            pubsub = client.pubsub()
            try:
                await pubsub.ssubscribe(channel)
            except BaseException:
                await _close(pubsub)
                raise
            self._nodes[node.name] = (pubsub, asyncio.create_task(
                self._read(node.name, pubsub), name=f"pubsub {node.name}"))
        self._where[channel] = node.name

    async def _read(self, name: str, pubsub: PubSub) -> None:
        while True:
            try:
                message = await pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the node is gone (killed, or partitioned away)
                log.warning("pubsub on %s failed (%r): its channels move", name, e)
                await self._node_lost(name)
                return
            if message is None:
                continue
            if message["type"] == "sunsubscribe":
                channel = message["channel"]
                if channel in self._leaving:
                    self._leaving.discard(channel)
                elif self._where.get(channel) == name:  # the slot moved away: follow it
                    task = asyncio.create_task(self._reroute([channel]))
                    self._moving.add(task)
                    task.add_done_callback(self._moving.discard)
                continue
            await self._messages.put(message)

    async def _node_lost(self, name: str) -> None:
        pubsub, _ = self._nodes.pop(name)
        lost = [channel for channel, node in self._where.items() if node == name]
        await _close(pubsub)
        await self._reroute(lost)

    async def _reroute(self, channels: list[bytes]) -> None:
        """Subscribe `channels` where their slots are served now, retrying until that works."""
        while True:
            async with self._lock:
                channels = [c for c in channels if c in self._where]  # still wanted
                if not channels:
                    return
                try:
                    await self._cluster.nodes_manager.initialize()
                    for channel in channels:
                        await self._subscribe(channel)
                    return
                except Exception as e:
                    log.warning("pubsub: resubscribing %d channels failed (%r)", len(channels), e)
            await asyncio.sleep(REROUTE_PAUSE)


async def _close(pubsub: PubSub) -> None:
    """A node's connection and its own client's pool (each node's PubSub has a client of its
    own)."""
    try:
        await pubsub.aclose()
        await pubsub.connection_pool.disconnect()
    except Exception:  # a dead node's connection has nothing left to close
        pass
