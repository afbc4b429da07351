"""Connecting to Redis: every user of Redis in the project (stores, pub/sub, placement, presence,
reply channels, inboxes) connects through `connect`, so all follow a failover.

`connect` takes a plain `redis://` URL, a Sentinel one, `redis+sentinel://h1:p1,h2:p2/SERVICE[/DB]`,
or a Redis Cluster one, `redis+cluster://h1:p1,h2:p2`. `persistence` tells what a Redis keeps on
disk (the launcher warns when a restart would lose rooms).
"""
from __future__ import annotations

import asyncio
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.maint_notifications import MaintNotificationsConfig
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

REDIS_CONNECTIONS = 64  # per process; more concurrent commands wait for a free connection
SENTINEL_SCHEME = "redis+sentinel"
CLUSTER_SCHEME = "redis+cluster"


class _BoundedCluster(RedisCluster):
    """redis-py's cluster client, made safe for bursts. It routes a command issued before the slot
    map is read (at start, or after it dropped the map in a failover) to its default node: 300
    concurrent first commands drew MOVED replies, and past five of those the client closes every
    connection, under commands already sent, and sends those again (a claim took two epochs). So
    each command waits for the map first. It has no blocking pool either: callers wait for one of
    REDIS_CONNECTIONS commands in flight, as `connect`'s pool makes them wait on one Redis."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_flight = asyncio.Semaphore(REDIS_CONNECTIONS)

    async def execute_command(self, *args, **kwargs):
        async with self._in_flight:
            await self.initialize()  # a no-op once the map is read
            return await super().execute_command(*args, **kwargs)


class _BlockingSentinelPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """Sentinel's pool (asks the sentinels where the primary is at each new connection) that
    waits for a free connection like `connect`'s plain pool."""


def connect(url: str) -> aioredis.Redis | RedisCluster:
    """A client whose pool makes callers wait for a connection instead of failing: redis-py's
    default pool raises MaxConnectionsError past 100 concurrent commands, which a busy host or
    gateway reaches. A `redis+sentinel://` URL gives a client of the service's current primary;
    a `redis+cluster://` one a Redis Cluster client (it follows slot moves and failovers)."""
    if urlsplit(url).scheme == CLUSTER_SCHEME:
        nodes, options = parse_cluster_url(url)
        return _BoundedCluster(startup_nodes=[ClusterNode(host, port) for host, port in nodes],
                               socket_timeout=None,
                               # Redis 8's CLIENT MAINT_NOTIFICATIONS, refused by 7: a round trip
                               # per new connection for nothing
                               maint_notifications_config=MaintNotificationsConfig(enabled=False),
                               **options)
    if urlsplit(url).scheme == SENTINEL_SCHEME:
        sentinels, service, options = parse_sentinel_url(url)
        sentinel = Sentinel(sentinels, socket_timeout=1.0, password=options.get("password"))
        return sentinel.master_for(service, connection_pool_class=_BlockingSentinelPool,
                                   max_connections=REDIS_CONNECTIONS, timeout=30,
                                   socket_timeout=None, **options)
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=REDIS_CONNECTIONS,
                                                    timeout=30)
    return aioredis.Redis.from_pool(pool)


def _hosts_and_password(url: str, default_port: int) -> tuple[list[tuple[str, int]], str | None]:
    """The `HOST:PORT[,HOST:PORT...]` list of a multi-host URL, and its `:PASSWORD@`, if any."""
    credentials, _, hosts = urlsplit(url).netloc.rpartition("@")
    found = []
    for item in hosts.split(","):
        host, _, port = item.rpartition(":")
        found.append((host or item, int(port) if host else default_port))
    return found, unquote(credentials.partition(":")[2]) if credentials else None


def parse_cluster_url(url: str) -> tuple[list[tuple[str, int]], dict]:
    """`redis+cluster://[:PASSWORD@]HOST:PORT[,HOST:PORT...]` (any nodes of the cluster: the
    client learns the rest) -> (nodes, keyword options of every node's connections)."""
    nodes, password = _hosts_and_password(url, 6379)
    if urlsplit(url).path.strip("/") not in ("", "0"):
        raise ValueError(f"{url}: a Redis Cluster has one database, 0")
    return nodes, {} if password is None else {"password": password}


def parse_sentinel_url(url: str) -> tuple[list[tuple[str, int]], str, dict]:
    """`redis+sentinel://[:PASSWORD@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]` -> (sentinels, service,
    keyword options of the primary's connections)."""
    parts = urlsplit(url)
    sentinels, password = _hosts_and_password(url, 26379)
    service, _, db = parts.path.strip("/").partition("/")
    if not service:
        raise ValueError(f"{url}: no Sentinel service name (redis+sentinel://HOST:PORT/SERVICE)")
    options: dict = {"db": int(db or 0)}
    if password is not None:
        options["password"] = password
    return sentinels, service, options


async def persistence(redis: aioredis.Redis) -> str | None:
    """None if this Redis keeps its writes on disk (an append-only file), else what it keeps."""
    info = await redis.info("persistence")
    if info.get("aof_enabled"):
        return None
    try:
        save = (await redis.config_get("save")).get("save", "")
    except Exception:  # CONFIG refused (a managed Redis): only INFO can tell
        save = ""
    if save:
        return f"RDB snapshots only (save {save!r}): a restart loses every write since the last one"
    return "nothing on disk (no append-only file, no snapshots): a restart loses every room"
