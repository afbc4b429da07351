"""The parts of the client that need only Redis (codes, the pub/sub multiplexer), and the per-host
lanes, with the Ray call replaced by a host that answers when the test tells it to."""
import asyncio

import orjson
import pytest
import redis.asyncio as aioredis

from actors import client as client_module
from actors.client import CODE_ALPHABET, RoomClient, RoomNotFound, Subscriptions, normal_code
from actors.config import Config
from actors.room import encode_event
from actors.store import Keys, RedisStore
from tests.actors.conftest import REDIS_URL

CODE = "ABCDEF"


@pytest.fixture
async def rstore(redis, prefix):
    store = RedisStore(redis, prefix, finished_ttl=3600)
    await store.claim(CODE, "h1")
    return store


@pytest.fixture
async def subscriptions(redis, prefix, rstore):
    subs = Subscriptions(redis, Keys(prefix), rstore.events_after)
    await subs.start()
    yield subs
    await subs.close()


async def write(rstore, first_seq: int, count: int) -> None:
    await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="lobby", first_seq=first_seq,
                         events=[encode_event(first_seq + i, {"kind": "chat", "to": None, "n": i})
                                 for i in range(count)], tokens={})


async def take(queue: asyncio.Queue, count: int) -> list[int]:
    return [(await asyncio.wait_for(queue.get(), 5))["seq"] for _ in range(count)]


def test_room_codes_are_case_insensitive_and_checked():
    assert normal_code("abcdef") == "ABCDEF"
    for bad in ("ABCDE", "ABCDEF1", "ABCDE0", "ABC:EF", None):
        with pytest.raises(RoomNotFound):
            normal_code(bad)
    assert not set("0O1IL") & set(CODE_ALPHABET)


async def test_listeners_of_a_room_share_one_subscription(subscriptions, rstore, redis, prefix):
    channel = f"{prefix}:room:{CODE}"
    async with subscriptions.listen(CODE) as first, subscriptions.listen(CODE) as second:
        assert (await redis.pubsub_numsub(channel))[0][1] == 1
        await write(rstore, 1, 3)
        assert await take(first, 3) == [1, 2, 3]
        assert await take(second, 3) == [1, 2, 3]
    assert (await redis.pubsub_numsub(channel))[0][1] == 0


async def test_a_lost_message_is_refilled_from_the_log_and_a_repeat_dropped(subscriptions, rstore,
                                                                            redis, prefix):
    keys = Keys(prefix)
    async with subscriptions.listen(CODE) as queue:
        await write(rstore, 1, 1)
        assert await take(queue, 1) == [1]
        # Event 2 reaches the log but its message is lost (as during a reconnection).
        await redis.rpush(keys.log(CODE), encode_event(2, {"kind": "chat", "to": None}))
        await write(rstore, 3, 1)
        assert await take(queue, 2) == [2, 3]
        await redis.publish(keys.room(CODE), encode_event(3, {"kind": "chat", "to": None}))
        await write(rstore, 4, 1)
        assert await take(queue, 1) == [4]
        event = orjson.loads((await rstore.events_after(CODE, 3))[0]["frame"])
        assert event["seq"] == 4


async def test_listeners_survive_a_dropped_connection(rstore, redis, prefix):
    named = aioredis.from_url(REDIS_URL, client_name=f"{prefix}-sub")
    subscriptions = Subscriptions(named, Keys(prefix), rstore.events_after)
    await subscriptions.start()
    try:
        async with subscriptions.listen(CODE) as queue:
            await write(rstore, 1, 1)
            assert await take(queue, 1) == [1]
            for client in await redis.client_list():
                if client["name"] == f"{prefix}-sub":
                    await redis.client_kill_filter(_id=client["id"])
            await write(rstore, 2, 1)  # published while nobody listens: refilled from the log
            await asyncio.wait_for(resubscribed(redis, f"{prefix}:room:{CODE}"), 10)
            await write(rstore, 3, 1)
            assert await take(queue, 2) == [2, 3]
    finally:
        await subscriptions.close()
        await named.aclose()


async def resubscribed(redis, channel: str) -> None:
    while (await redis.pubsub_numsub(channel))[0][1] == 0:
        await asyncio.sleep(0.05)  # polling Redis for the resubscription, not waiting blindly



class HeldHost:
    """Each batch call waits until the test releases it; calls are recorded in arrival order."""

    def __init__(self) -> None:
        self.calls: list[list[tuple]] = []
        self.release: list[asyncio.Event] = []
        self.arrived = asyncio.Event()

    async def __call__(self, actor: str, method: str, requests: list[tuple]):
        assert method == "batch"
        self.calls.append(requests)
        gate = asyncio.Event()
        self.release.append(gate)
        self.arrived.set()
        await gate.wait()
        return [f"reply {request[1]} {request[3]}" for request in requests]

    async def wait_calls(self, n: int) -> None:
        while len(self.calls) < n:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 5)


@pytest.fixture
def lane():
    rc = RoomClient(Config())
    host = HeldHost()
    rc._call = host
    return rc, host


def command(code: str, n: int) -> tuple:
    return ("command", code, 0, n)


async def test_a_slow_room_holds_back_only_its_own_next_requests(lane):
    rc, host = lane
    slow_first = asyncio.create_task(rc._send("h", command("AAAAAA", 1)))
    await host.wait_calls(1)
    slow_second = asyncio.create_task(rc._send("h", command("AAAAAA", 2)))
    other = asyncio.create_task(rc._send("h", command("BBBBBB", 1)))
    await host.wait_calls(2)
    assert host.calls[1] == [command("BBBBBB", 1)]  # it did not wait for AAAAAA's batch
    host.release[1].set()
    assert await other == "reply BBBBBB 1"
    assert not slow_second.done() and len(host.calls) == 2  # AAAAAA's next waits for its first
    host.release[0].set()
    assert await slow_first == "reply AAAAAA 1"
    await host.wait_calls(3)
    assert host.calls[2] == [command("AAAAAA", 2)]
    host.release[2].set()
    assert await slow_second == "reply AAAAAA 2"
    assert rc.lane_backlog() == 0


async def test_what_queues_while_calls_are_in_flight_travels_together_in_order(lane, monkeypatch):
    monkeypatch.setattr(client_module, "LANE_CALLS", 1)
    rc, host = lane
    first = asyncio.create_task(rc._send("h", command("AAAAAA", 1)))
    await host.wait_calls(1)
    queued = [asyncio.create_task(rc._send("h", command(code, n)))
              for code, n in (("BBBBBB", 1), ("AAAAAA", 2), ("BBBBBB", 2))]
    await asyncio.sleep(0)
    assert rc.lane_backlog() == 3
    host.release[0].set()
    await first
    await host.wait_calls(2)
    assert host.calls[1] == [command("BBBBBB", 1), command("AAAAAA", 2), command("BBBBBB", 2)]
    host.release[1].set()
    assert await asyncio.gather(*queued) == ["reply BBBBBB 1", "reply AAAAAA 2", "reply BBBBBB 2"]


async def test_a_failed_call_fails_its_requests_and_the_lane_goes_on(lane):
    rc, host = lane

    async def failing(actor, method, requests):
        rc._call = host
        raise ConnectionError("host gone")
    rc._call = failing
    with pytest.raises(ConnectionError):
        await rc._send("h", command("AAAAAA", 1))
    second = asyncio.create_task(rc._send("h", command("AAAAAA", 2)))
    await host.wait_calls(1)
    host.release[0].set()
    assert await second == "reply AAAAAA 2"
