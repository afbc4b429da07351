import os
import secrets

import pytest
import redis.asyncio as aioredis

from actors.clock import FakeClock
from actors.store import MemoryStore

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


@pytest.fixture
async def redis(prefix):
    client = aioredis.from_url(REDIS_URL)
    yield client
    keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()

