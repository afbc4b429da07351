"""The per-process pub/sub hub against the real Redis (random prefix: the server is shared)."""
import asyncio
import os
import secrets

import orjson
import pytest
from redis.asyncio import Redis

from gateway.hub import Hub


class Inbox:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self.changed = asyncio.Event()

    def deliver(self, event: dict) -> None:
        self.events.append(event)
        self.changed.set()

    async def until(self, count: int) -> list[dict]:
        async def wait() -> list[dict]:
            while len(self.events) < count:
                self.changed.clear()
                await self.changed.wait()
            return self.events
        return await asyncio.wait_for(wait(), 5)


@pytest.fixture
async def redis():
    client = Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    yield client
    await client.aclose()


async def test_attached_listeners_get_every_event_published_after_attach(redis):
    prefix = "t" + secrets.token_hex(5)
    hub = Hub(redis, prefix)
    a, b, other = Inbox(), Inbox(), Inbox()
    try:
        await hub.attach("ROOM22", a)  # returns once subscribed: nothing published later is lost
        await hub.attach("ROOM22", b)
        await hub.attach("OTHER3", other)
        for seq in (1, 2, 3):
            await redis.publish(f"{prefix}:room:ROOM22",
                                orjson.dumps({"seq": seq, "to": None, "frame": f"f{seq}"}))
        assert [e["seq"] for e in await a.until(3)] == [1, 2, 3]
        assert [e["frame"] for e in await b.until(3)] == ["f1", "f2", "f3"]
        assert hub.room_count == 2

        await hub.detach("ROOM22", a)
        await hub.detach("ROOM22", b)
        await hub.detach("OTHER3", other)
        assert hub.room_count == 0
        assert other.events == []
    finally:
        await hub.close()


async def test_chat_buckets_are_per_seat_and_go_with_the_room(redis):
    hub = Hub(redis, "t" + secrets.token_hex(5))
    listener = Inbox()
    try:
        await hub.attach("ROOM22", listener)
        bucket = hub.chat_bucket("ROOM22", 3, rate=1.0, burst=2)
        assert hub.chat_bucket("ROOM22", 3, rate=1.0, burst=2) is bucket
        assert hub.chat_bucket("ROOM22", 4, rate=1.0, burst=2) is not bucket
        await hub.detach("ROOM22", listener)
        await hub.attach("ROOM22", listener)
        assert hub.chat_bucket("ROOM22", 3, rate=1.0, burst=2) is not bucket
    finally:
        await hub.close()
