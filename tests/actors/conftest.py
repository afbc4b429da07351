import os
import secrets

import pytest

from actors.clock import FakeClock
from actors.memory_store import MemoryStore
from actors.redis_connect import connect
from devstack.redis_servers import redis_cluster

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store():
    return MemoryStore()


@pytest.fixture
def prefix():
    """A key prefix of its own, so concurrent test runs on the shared Redis never meet."""
    return f"t{secrets.token_hex(5)}"


@pytest.fixture(scope="session")
def cluster():
    """One private Redis Cluster (3 primaries, 3 replicas) for the session's tests."""
    with redis_cluster() as group:
        yield group


@pytest.fixture(params=["redis", "cluster"])
def any_redis_url(request):
    """The store's tests run on one Redis and on a Redis Cluster alike."""
    return REDIS_URL if request.param == "redis" else request.getfixturevalue("cluster").url


@pytest.fixture
async def redis(prefix, any_redis_url):
    client = connect(any_redis_url)
    yield client
    keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
    for key in keys:
        await client.delete(key)
    await client.aclose()

