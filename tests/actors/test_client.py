"""The parts of the client that need only Redis: codes, the pub/sub multiplexer, and requests to a
RoomHost through its Redis inbox and this process's reply channel."""
import asyncio
import contextlib

import orjson
import pytest
import redis.asyncio as aioredis

from actors import client as client_module
from actors.client import CODE_ALPHABET, RoomClient, RoomNotFound, Since, Subscriptions, normal_code
from actors.clock import FakeClock
from actors.config import Config
from actors.host import RoomHost
from actors.room import RATE_LIMITS
from actors.room_data import encode_event
from actors.pubsub import shard_pubsub
from actors.inbox import events_message
from actors.store import Keys, RedisStore
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


def test_room_codes_are_case_insensitive_and_checked():
    assert normal_code("abcdef") == "ABCDEF"
    for bad in ("ABCDE", "ABCDEF1", "ABCDE0", "ABC:EF", None):
        with pytest.raises(RoomNotFound):
            normal_code(bad)
    assert not set("0O1IL") & set(CODE_ALPHABET)


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



class GatedStore(RedisStore):
    """Holds the writes of `held_room` (once the test names one) until the test opens the gate."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.held_room, self.gate, self.holding = None, asyncio.Event(), asyncio.Event()

    async def persist(self, code, **kwargs):
        if code == self.held_room:
            self.holding.set()
            await self.gate.wait()
        await super().persist(code, **kwargs)


@contextlib.asynccontextmanager
async def wire(redis, prefix, store_class=None):
    """A RoomClient and a RoomHost talking through real Redis (inbox list, reply channel), no
    Ray: the host's incarnation is handed over, as the client's Ray call would fetch it. The host
    holds rooms AAAAAA and BBBBBB; its store is a `store_class` (GatedStore by default)."""
    config = Config(prefix=prefix)
    rc = RoomClient(config)
    rc.redis = redis
    rc.store = RedisStore(redis, prefix, 3600)
    rc.subscriptions = Subscriptions(redis, rc.keys, rc.store.events_after)
    await rc.subscriptions.start(rc.keys.replies(rc.gateway_id), rc._on_replies, me=rc.gateway_id)
    store = (store_class or GatedStore)(redis, prefix, 3600)
    host = RoomHost("h1", config, store, FakeClock())
    await host.start()
    rc._incarnations["h1"] = host.incarnation
    try:
        for code in ("AAAAAA", "BBBBBB"):
            await redis.hset(rc.keys.room(code), "host", "h1")
            assert await host.create_room(code, "Host", f"token-{code}") == {"seat": 0}
        yield rc, host, store
    finally:
        await host.stop()
        await rc.subscriptions.close()


@pytest.fixture
async def wired(redis, prefix):
    async with wire(redis, prefix) as pair:
        yield pair


async def test_a_command_travels_through_the_inbox_and_its_reply_comes_back(wired):
    rc, host, _ = wired
    assert await rc.command("bbbbbb", 0, {"type": "settings", "id": 1, "roles": ["seer"]}) == \
        {"type": "ack", "id": 1}
    assert (await rc.welcome("BBBBBB", 0))["view"]["settings"]["roles"] == ["seer"]
    assert rc.pending_requests() == 0


async def test_a_listening_gateway_s_ack_rides_the_events_it_caused(wired, redis):
    rc, _, _ = wired
    replies = shard_pubsub(redis)  # what the host sends this process on its own channel
    await replies.ssubscribe(rc.keys.replies(rc.gateway_id))
    assert (await replies.get_message(timeout=5))["type"] == "ssubscribe"
    async with rc.listen("BBBBBB", 0) as events:
        assert await rc.command("BBBBBB", 0, {"type": "settings", "id": 1, "roles": ["seer"]}) == \
            {"type": "ack", "id": 1}
        since = events.get_nowait()
        settings = events.get_nowait()  # queued before the ack was handed over
        assert orjson.loads(settings["frame"])["kind"] == "settings"
        assert settings["seq"] == since.seq + 1
        refused = await rc.command("BBBBBB", 0, {"type": "chat", "id": 2, "text": "hi"})
        assert refused["code"] == "not_your_turn"  # a lobby has no chat
    # the refusal wrote nothing, so it came on the reply channel; the ack did not
    message = await replies.get_message(timeout=5)
    assert [number for number, _, _ in orjson.loads(message["data"])["replies"]] == [2]
    assert await replies.get_message(timeout=0.2) is None
    await replies.aclose()


async def test_a_gateway_not_listening_gets_its_ack_on_its_own_channel(wired, redis):
    rc, _, _ = wired
    replies = shard_pubsub(redis)
    await replies.ssubscribe(rc.keys.replies(rc.gateway_id))
    assert (await replies.get_message(timeout=5))["type"] == "ssubscribe"
    assert await rc.command("BBBBBB", 0, {"type": "settings", "id": 1, "roles": ["seer"]}) == \
        {"type": "ack", "id": 1}
    message = await replies.get_message(timeout=5)
    assert orjson.loads(message["data"])["replies"][0][2] == {"type": "ack", "id": 1}
    await replies.aclose()


async def test_a_slow_room_never_delays_an_unrelated_one(wired):
    rc, _, store = wired
    store.held_room = "AAAAAA"
    slow = asyncio.create_task(rc.command("AAAAAA", 0, {"type": "settings", "id": 1, "roles": []}))
    await asyncio.wait_for(store.holding.wait(), 5)
    assert await rc.command("BBBBBB", 0, {"type": "settings", "id": 2, "roles": []}) == \
        {"type": "ack", "id": 2}
    assert not slow.done()
    store.gate.set()
    assert await slow == {"type": "ack", "id": 1}


async def test_commands_of_a_room_apply_in_the_order_sent(wired):
    rc, _, _ = wired
    count, _ = RATE_LIMITS["settings"]  # as many as a host may send at once
    frames = [{"type": "settings", "id": i, "durations": {"vote": 10 + i}} for i in range(count)]
    replies = await asyncio.gather(*(rc.command("BBBBBB", 0, frame) for frame in frames))
    assert replies == [{"type": "ack", "id": i} for i in range(count)]
    applied = [orjson.loads(e["frame"])["settings"]["durations"]["vote"]
               for e in await rc.events_after("BBBBBB", 1)]
    assert applied == [10 + i for i in range(count)]


async def test_a_request_taken_by_a_process_that_died_is_sent_again(wired, redis, prefix,
                                                                     monkeypatch):
    rc, host, _ = wired
    monkeypatch.setattr(client_module, "REPLY_PATIENCE", 0.05)
    host._inbox.cancel()  # the process "dies": it takes one request and never answers
    dying = RedisStore(redis, prefix, 3600)
    reply = asyncio.create_task(rc.command("BBBBBB", 0, {"type": "settings", "id": 5, "roles": []}))
    while not await dying.take_requests("h1", 0.05):
        pass
    successor = RoomHost("h1", Config(prefix=prefix), RedisStore(redis, prefix, 3600), FakeClock())

    async def ask_ray(actor, method):  # what the Ray call answers once Ray restarted the actor
        assert (actor, method) == ("h1", "incarnation")
        return successor.incarnation
    monkeypatch.setattr(rc, "_call", ask_ray)
    await successor.start()
    try:
        assert await asyncio.wait_for(reply, 10) == {"type": "ack", "id": 5}
    finally:
        await successor.stop()


class SweepHeldStore(GatedStore):
    """A host's sweep that has read which leases lapsed waits there until the test opens `swept`."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.sweep_read, self.swept = asyncio.Event(), asyncio.Event()

    async def live_gateways(self, ids):
        live = await super().live_gateways(ids)
        self.sweep_read.set()
        await self.swept.wait()
        return live


async def test_seats_announced_again_after_a_lapse_survive_the_sweep_that_read_the_lapse(
        redis, prefix):
    async with wire(redis, prefix, SweepHeldStore) as (rc, host, store):
        assert await rc.renew_lease()  # the first lease: the seats are announced under it
        await rc.presence("AAAAAA", 0, True)
        connected = lambda: host.rooms["AAAAAA"].data.players[0].connected  # noqa: E731
        assert connected()
        await redis.delete(rc.keys.gateway(rc.presence_id))  # the lease lapses (a starved process)
        sweep = asyncio.create_task(host.sweep_presence())
        await asyncio.wait_for(store.sweep_read.wait(), 5)  # the sweep has read the lapse...
        assert await rc.renew_lease()  # ...the process renews, sees the lapse, announces again
        await rc.presence("AAAAAA", 0, True)
        store.swept.set()  # ...and the sweep's removal lands after that
        await asyncio.wait_for(sweep, 5)
        assert connected()
        assert not await rc.renew_lease()  # a lease kept is not announced again
