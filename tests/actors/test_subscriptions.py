"""`Subscriptions`, a process's pub/sub multiplexer, on the real (shared) Redis: each listener gets
`Since(n)`, then every event after n its seat may see, once and in order, through lost messages
and dropped connections (on a Redis Cluster: tests/actors/test_pubsub.py)."""
import asyncio
import contextlib
from collections import Counter

import orjson
import pytest
import redis.asyncio as aioredis

from actors.inbox import REPLY_OK, events_message
from actors.room_data import encode_event
from actors.store import Keys, RedisStore
from actors.subscriptions import FAN_OUT_CHUNK, Since, Subscriptions
from tests.actors.conftest import REDIS_URL
from tests.actors.rooms import CODE, take, write
from tests.helpers import until


@pytest.fixture
async def rstore(redis, prefix):
    store = RedisStore(redis, prefix, finished_ttl=3600)
    await store.claim(CODE, "h1")
    return store


@pytest.fixture
async def subscriptions(redis, prefix, rstore):
    subs = Subscriptions(redis, Keys(prefix), rstore.events_after)
    await subs.start(Keys(prefix).replies("test"), lambda message: None)
    yield subs
    await subs.close()


async def test_a_seat_listens_only_to_the_events_it_may_see(subscriptions, rstore):
    events = [encode_event(1, {"kind": "chat", "to": None}),
              encode_event(2, {"kind": "role", "to": [3]}),
              encode_event(3, {"kind": "chat", "to": [1, 2]}),
              encode_event(4, {"kind": "phase", "to": None})]
    async with subscriptions.listen(CODE, 3) as seat3, subscriptions.listen(CODE, 1) as seat1, \
            subscriptions.listen(CODE) as everything:
        await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="lobby",
                             first_seq=1, events=events, tokens={}, chat_from=0, chat=[])
        assert await take(seat3, 3) == [1, 2, 4]
        assert await take(seat1, 3) == [1, 3, 4]
        assert await take(everything, 4) == [1, 2, 3, 4]


async def test_listeners_of_a_room_share_one_subscription(subscriptions, rstore, redis, prefix):
    channel = Keys(prefix).room(CODE)
    async with subscriptions.listen(CODE) as first, subscriptions.listen(CODE) as second:
        assert (await redis.pubsub_shardnumsub(channel))[0][1] == 1
        await write(rstore, 1, 3)
        assert await take(first, 3) == [1, 2, 3]
        assert await take(second, 3) == [1, 2, 3]
    assert (await redis.pubsub_shardnumsub(channel))[0][1] == 0


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
        await redis.spublish(keys.room(CODE),
                             events_message([encode_event(3, {"kind": "chat", "to": None})]))
        await write(rstore, 4, 1)
        assert await take(queue, 1) == [4]
        event = orjson.loads((await rstore.events_after(CODE, 3))[0]["frame"])
        assert event["seq"] == 4


async def test_a_queue_starts_with_the_seq_after_which_it_misses_nothing(subscriptions, rstore):
    async with subscriptions.listen(CODE, 1) as first:
        await write(rstore, 1, 2)
        assert [await asyncio.wait_for(first.get(), 5) for _ in range(3)][0] == Since(0)
        # Events 1 and 2 went out before this queue joined: its welcome may still lag them.
        async with subscriptions.listen(CODE, 2) as second:
            assert second.get_nowait() == Since(2)
            await write(rstore, 3, 1)
            assert await take(second, 1) == [3]


@pytest.fixture
async def named_subscriptions(rstore, prefix, any_redis_url):
    """Subscriptions over a connection the test can find by name (and kill). On a cluster a
    subscriber's connection is lost with its node: tests/gateway/test_redis_cluster_e2e.py."""
    if any_redis_url != REDIS_URL:
        pytest.skip("one Redis's connection killed by name")
    named = aioredis.from_url(REDIS_URL, client_name=f"{prefix}-sub")
    subscriptions = Subscriptions(named, Keys(prefix), rstore.events_after)
    await subscriptions.start(Keys(prefix).replies("test"), lambda message: None)
    yield subscriptions
    await subscriptions.close()
    await named.aclose()


async def lose_on_reconnection(redis, prefix, seqs: range) -> None:
    """Store and publish these events in the same transaction that drops the subscriber's
    connection: nobody is subscribed when they go out, the log has them."""
    [subscriber] = [c["id"] for c in await redis.client_list() if c["name"] == f"{prefix}-sub"]
    keys = Keys(prefix)
    events = [encode_event(seq, {"kind": "chat", "to": None}) for seq in seqs]
    async with redis.pipeline(transaction=True) as pipe:
        pipe.client_kill_filter(_id=subscriber)
        pipe.rpush(keys.log(CODE), *events)
        pipe.spublish(keys.room(CODE), events_message(events))
        await pipe.execute()
    await until(lambda: resubscribed(redis, keys.room(CODE)), 10,
                "the room's channel subscribed again")


async def test_listeners_survive_a_dropped_connection(named_subscriptions, rstore, redis, prefix):
    async with named_subscriptions.listen(CODE) as queue:
        await write(rstore, 1, 1)
        assert await take(queue, 1) == [1]
        await lose_on_reconnection(redis, prefix, range(2, 3))
        await write(rstore, 3, 1)
        assert await take(queue, 2) == [2, 3]  # 2 refilled from the log


async def test_what_went_out_while_reconnecting_arrives_without_a_next_message(
        named_subscriptions, rstore, redis, prefix):
    async with named_subscriptions.listen(CODE) as queue:
        await write(rstore, 1, 1)
        assert await take(queue, 1) == [1]
        await lose_on_reconnection(redis, prefix, range(2, 4))  # e.g. the game's last events
        assert await take(queue, 2) == [2, 3]


async def test_a_connection_dropped_before_the_first_message_is_told_to_its_listeners(
        named_subscriptions, rstore, redis, prefix):
    async with named_subscriptions.listen(CODE) as queue:
        await lose_on_reconnection(redis, prefix, range(1, 3))
        await write(rstore, 3, 1)
        # The queue cannot know what it lost before its first message: its listener reads the log.
        assert [await asyncio.wait_for(queue.get(), 5) for _ in range(2)] == [
            Since(2), (await rstore.events_after(CODE, 2))[0]]


async def resubscribed(redis, channel: str) -> int:
    return (await redis.pubsub_shardnumsub(channel))[0][1]


class TickedQueue(asyncio.Queue):
    """A listener's queue that notes, in `puts`, the loop's tick (`ticks[0]`) at each event put."""

    def __init__(self, ticks: list[int], puts: list[int]) -> None:
        super().__init__()
        self.ticks, self.puts = ticks, puts

    def put_nowait(self, item) -> None:
        if not isinstance(item, Since):
            self.puts.append(self.ticks[0])
        super().put_nowait(item)


async def test_a_crowded_room_lets_the_loop_run_between_chunks_of_its_fan_out(redis, prefix,
                                                                              rstore):
    """Past FAN_OUT_CHUNK listeners, a room's events go out from a task of its own that lets the
    loop run (other rooms' events and acks, every socket's pings) between chunks of listeners;
    a room of FAN_OUT_CHUNK goes out in one go. Each listener still gets every event once and in
    order, and the ack riding them comes after them."""
    keys = Keys(prefix)
    ticks = [0]  # turns of the loop so far

    async def ticker() -> None:
        while True:
            ticks[0] += 1
            await asyncio.sleep(0)

    settled: dict[str, int] = {}  # the room whose ack settled -> the loop's tick then
    subs = Subscriptions(redis, keys, rstore.events_after)
    await subs.start(keys.replies("gw"), lambda replies: settled.update(
        {reply["id"]: ticks[0] for _, _, reply in replies}), me="gw")
    ticking = asyncio.create_task(ticker())
    rooms = {CODE: FAN_OUT_CHUNK * 3, "BBBBBB": FAN_OUT_CHUNK}
    puts: dict[str, list[int]] = {code: [] for code in rooms}
    chat = [encode_event(seq, {"kind": "chat", "to": None}) for seq in (1, 2)]
    try:
        async with contextlib.AsyncExitStack() as listening:
            queues = [await listening.enter_async_context(
                subs.listen(code, None, TickedQueue(ticks, puts[code])))
                for code, count in rooms.items() for _ in range(count)]
            for code in rooms:
                riding = {"replies": {"gw": [[7, REPLY_OK, {"type": "ack", "id": code}]]}}
                await redis.spublish(keys.room(code), events_message(chat, orjson.dumps(riding)))
            for queue in queues:
                assert await take(queue, 2) == [1, 2]
            await until(lambda: len(settled) == 2, 5, "both acks settled")
    finally:
        ticking.cancel()
        await subs.close()
    assert len(set(puts["BBBBBB"])) == 1  # in one go: the loop did not run meanwhile
    # The crowd's 2 x 3 chunks over turns of the loop; no turn does more than the end of one
    # event and the start of the next.
    assert max(Counter(puts[CODE]).values()) <= 2 * FAN_OUT_CHUNK < len(puts[CODE])
    for code in rooms:
        assert settled[code] >= max(puts[code])  # the ack after the events it rode
