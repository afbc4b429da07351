"""The Redis store against the real (shared) Redis, under a random prefix."""
import asyncio

import orjson
import pytest
from redis.crc import key_slot

import rules
from actors.clock import FakeClock
from actors.inbox import Rider
from actors.pubsub import shard_pubsub
from actors.room import Room
from actors.room_data import encode_event
from actors.redis_connect import connect
from actors.store import Keys, NotReplicated, OutOfSync, RedisStore, StaleEpoch
from devstack.ray_head import free_port
from devstack.redis_servers import RedisServer, redis_server, wait_replica_online

CODE = "ABCDEF"


@pytest.fixture
def rstore(redis, prefix):
    return RedisStore(redis, prefix, finished_ttl=3600)


def event(seq: int, text: str, to=None) -> bytes:
    return encode_event(seq, {"kind": "chat", "to": to, "text": text})


async def write(rstore, *, epoch, first_seq, texts, status="running", tokens=None):
    await rstore.persist(CODE, epoch=epoch, host="h1", snapshot=orjson.dumps({"n": first_seq}),
                         status=status, first_seq=first_seq,
                         events=[event(first_seq + i, t) for i, t in enumerate(texts)],
                         tokens=tokens or {}, chat_from=None, chat=[])


async def test_a_writer_with_a_stale_epoch_is_refused_and_changes_nothing(rstore, redis):
    assert await rstore.claim(CODE, "h1") == 1
    await write(rstore, epoch=1, first_seq=1, texts=["a", "b"])
    assert await rstore.claim(CODE, "h1") == 2  # the room is taken over (host restart)
    with pytest.raises(StaleEpoch):
        await write(rstore, epoch=1, first_seq=3, texts=["zombie"])
    assert orjson.loads((await rstore.load(CODE)).snapshot) == {"n": 1}
    assert [e["seq"] for e in await rstore.events_after(CODE, 0)] == [1, 2]
    await write(rstore, epoch=2, first_seq=3, texts=["c"])
    assert [e["seq"] for e in await rstore.events_after(CODE, 0)] == [1, 2, 3]


async def test_a_writer_that_lost_track_of_the_log_is_refused_and_changes_nothing(rstore):
    await rstore.claim(CODE, "h1")
    await write(rstore, epoch=1, first_seq=1, texts=["a"])
    # behind the log, ahead of it (a failover lost the log's last writes), and without events
    for first_seq, texts in ((1, ["a again"]), (3, ["b", "c"]), (3, [])):
        with pytest.raises(OutOfSync):
            await write(rstore, epoch=1, first_seq=first_seq, texts=texts)
        stored = await rstore.events_after(CODE, 0)
        assert [orjson.loads(e["frame"])["text"] for e in stored] == ["a"]
        assert orjson.loads((await rstore.load(CODE)).snapshot) == {"n": 1}
    await write(rstore, epoch=1, first_seq=2, texts=[])  # in step, nothing to add: stored
    assert orjson.loads((await rstore.load(CODE)).snapshot) == {"n": 2}


async def test_events_after_returns_the_window_asked_for(rstore):
    await rstore.claim(CODE, "h1")
    await write(rstore, epoch=1, first_seq=1, texts=list("abcde"))
    assert [e["seq"] for e in await rstore.events_after(CODE, 2)] == [3, 4, 5]
    assert [e["seq"] for e in await rstore.events_after(CODE, 1, upto=3)] == [2, 3]
    assert await rstore.events_after(CODE, 3, upto=3) == []
    assert await rstore.events_after(CODE, 5) == []
    stored = (await rstore.events_after(CODE, 4))[0]
    assert stored["to"] is None
    assert orjson.loads(stored["frame"]) == {"type": "event", "seq": 5, "kind": "chat", "text": "e"}


async def test_a_write_s_events_are_published_on_the_room_channel_as_one_message(
        rstore, redis, prefix):
    pubsub = shard_pubsub(redis)
    await pubsub.ssubscribe(Keys(prefix).room(CODE))
    await pubsub.get_message(timeout=5)  # the subscribe confirmation
    await rstore.claim(CODE, "h1")
    await write(rstore, epoch=1, first_seq=1, texts=["a", "b"])
    await write(rstore, epoch=1, first_seq=3, texts=["c"])
    got = []
    while len(got) < 2:
        message = await pubsub.get_message(timeout=5)
        assert message is not None and message["type"] == "smessage"
        got.append([event["seq"] for event in orjson.loads(message["data"])])
    assert got == [[1, 2], [3]]
    await pubsub.aclose()


async def test_replies_ride_a_write_s_events_message_and_not_a_write_without_events(
        rstore, redis, prefix):
    pubsub = shard_pubsub(redis)
    await pubsub.ssubscribe(Keys(prefix).room(CODE))
    await pubsub.get_message(timeout=5)  # the subscribe confirmation
    await rstore.claim(CODE, "h1")
    riders = [(Rider("gw1", 7), {"type": "ack", "id": 3}),
              (Rider("gw2", 1), {"type": "ack", "id": 1})]
    await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="running", first_seq=1,
                         events=[event(1, "a")], tokens={"abc": 0}, chat_from=None, chat=[],
                         riders=riders)
    await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="running", first_seq=2,
                         events=[], tokens={}, chat_from=None, chat=[], riders=riders)
    message = orjson.loads((await pubsub.get_message(timeout=5))["data"])
    assert [item["seq"] for item in message[:-1]] == [1] and message[-1] == {"replies": {
        "gw1": [[7, 0, {"type": "ack", "id": 3}]], "gw2": [[1, 0, {"type": "ack", "id": 1}]]}}
    assert await pubsub.get_message(timeout=0.2) is None  # the second write published nothing
    assert await redis.hget(Keys(prefix).tokens(CODE), "abc") == b"0"  # the arguments after it
    assert [e["seq"] for e in await rstore.events_after(CODE, 0)] == [1]  # the log has no riders
    await pubsub.aclose()


async def test_tokens_are_stored_by_hash(rstore, redis, prefix):
    await rstore.claim(CODE, "h1")
    await write(rstore, epoch=1, first_seq=1, texts=["a"], tokens={"abc": 0})
    assert await redis.hget(Keys(prefix).tokens(CODE), "abc") == b"0"


async def test_chat_lines_are_appended_apart_from_the_snapshot(rstore, redis, prefix):
    await rstore.claim(CODE, "h1")

    async def persist(first_seq, chat_from, lines):
        await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="running",
                             first_seq=first_seq, events=[event(first_seq, "x")], tokens={},
                             chat_from=chat_from, chat=lines)

    await persist(1, None, [b"a", b"b"])
    await persist(2, 2, [b"c"])
    assert (await rstore.load(CODE)).chat == [b"a", b"b", b"c"]
    with pytest.raises(OutOfSync):  # a writer that thinks fewer lines are stored changes nothing
        await persist(3, 2, [b"zombie"])
    assert (await rstore.load(CODE)).chat == [b"a", b"b", b"c"]
    assert len(await rstore.events_after(CODE, 0)) == 2
    await persist(3, None, [b"new game"])  # None: the list starts again
    assert (await rstore.load(CODE)).chat == [b"new game"]
    await persist(4, 1, [])  # nothing added: nothing to check
    await persist(5, None, [])  # another game, no line yet: the last one's lines are gone
    assert (await rstore.load(CODE)).chat == []


@pytest.mark.parametrize("snapshot", [b"{}", None])
async def test_a_chat_command_persisted_alone_costs_five_redis_commands_and_a_snapshot(
        prefix, snapshot):
    """What commandstats counts for one command's write at human pace (one command per persist):
    the EVALSHA and the four commands it runs (the epoch and status read, the event, the chat
    line, the SPUBLISH of the event), and a SET when the snapshot changed (a chat line's write
    leaves it: None); the lists are checked by the lengths their RPUSH returns. A status that
    does not change is not written again."""
    with redis_server(appendonly=False) as server:
        client = connect(server.url)
        store = RedisStore(client, prefix, finished_ttl=3600)
        await store.claim(CODE, "h1")
        for seq, lines in ((1, None), (2, 1)):
            await client.config_resetstat()
            await store.persist(CODE, epoch=1, host="h1", snapshot=snapshot if seq > 1 else b"{}",
                                status="running", first_seq=seq, events=[event(seq, "hi")],
                                tokens={}, chat_from=lines, chat=[b"hi"])
            stats = await client.info("commandstats")
        await client.aclose()
    calls = {name.removeprefix("cmdstat_"): v["calls"] for name, v in stats.items()
             if name != "cmdstat_config|resetstat"}
    assert calls == {"evalsha": 1, "hmget": 1, "rpush": 2, "spublish": 1,
                     **({"set": 1} if snapshot else {})}


async def test_a_load_brings_the_log_s_tail_after_the_snapshot(rstore):
    await rstore.claim(CODE, "h1")
    await rstore.persist(CODE, epoch=1, host="h1", snapshot=orjson.dumps({"seq": 1}),
                         status="running",
                         first_seq=1, events=[event(1, "a")], tokens={}, chat_from=None,
                         chat=[b"a"])
    for seq in (2, 3):  # writes that leave the snapshot as it was
        await rstore.persist(CODE, epoch=1, host="h1", snapshot=None, status="running",
                             first_seq=seq, events=[event(seq, "b")], tokens={}, chat_from=seq - 1,
                             chat=[b"b"])
    stored = await rstore.load(CODE)
    assert orjson.loads(stored.snapshot) == {"seq": 1} and stored.chat == [b"a", b"b", b"b"]
    assert [orjson.loads(item)["seq"] for item in stored.tail] == [2, 3]


async def test_a_final_status_releases_the_room_and_sets_a_ttl(rstore, redis, prefix):
    await redis.zadd(Keys(prefix).hosts(), {"h1": 1})
    await rstore.claim(CODE, "h1")
    assert await rstore.host_rooms("h1") == [CODE]
    await write(rstore, epoch=1, first_seq=1, texts=["over"], status="finished")
    assert await rstore.host_rooms("h1") == []
    assert await redis.zscore(Keys(prefix).hosts(), "h1") == 0
    assert (await rstore.status(CODE))["status"] == "finished"
    await rstore.claim(CODE, "h1")
    await rstore.persist(CODE, epoch=2, host="h1", snapshot=b"{}", status="finished", first_seq=2,
                         events=[event(2, "over again")], tokens={}, chat_from=None,
                         chat=[b"a line"])
    k = Keys(prefix)
    for key in (k.room(CODE), k.state(CODE), k.log(CODE), k.chat(CODE)):
        assert 0 < await redis.ttl(key) <= 3600


async def test_a_room_is_released_from_its_host_once_however_often_it_is_told(
        rstore, redis, prefix):
    await redis.zadd(Keys(prefix).hosts(), {"h1": 2})
    await rstore.claim(CODE, "h1")
    await rstore.release("h1", CODE)
    await rstore.release("h1", CODE)  # a host's start releasing what a final persist already did
    assert await rstore.host_rooms("h1") == []
    assert await redis.zscore(Keys(prefix).hosts(), "h1") == 1


async def test_a_room_s_keys_share_one_slot_and_a_host_s_keys_another(prefix):
    k = Keys(prefix)
    slot = {key_slot(key.encode()) for key in (k.room(CODE), k.state(CODE), k.log(CODE),
                                                k.tokens(CODE), k.chat(CODE))}
    assert slot == {key_slot(CODE.encode())}
    assert (key_slot(k.inbox("h1").encode()) == key_slot(k.host_rooms("h1").encode())
            == key_slot(b"h1"))
    assert k.code_of(k.room(CODE)) == CODE


async def test_a_reserved_code_lapses_unless_its_room_is_written(rstore, redis, prefix):
    room = Keys(prefix).room(CODE)
    assert await rstore.claim_code(CODE, "h1") and not await rstore.claim_code(CODE, "h2")
    assert 0 < await redis.ttl(room) <= 600
    await rstore.claim(CODE, "h1")
    await write(rstore, epoch=1, first_seq=1, texts=["hello"])
    assert await redis.ttl(room) == -1  # the room's own now


async def test_a_creation_given_up_gives_back_its_slot_and_code_unless_its_host_has_the_room(
        rstore, redis, prefix):
    await redis.zadd(Keys(prefix).hosts(), {"h1": 3})
    await rstore.give_back("h1", None)  # given up before a code was reserved
    assert await rstore.claim_code("AAAAAA", "h1")
    await rstore.give_back("h1", "AAAAAA")  # after: the code is free again
    assert await redis.zscore(Keys(prefix).hosts(), "h1") == 1
    assert not await redis.exists(Keys(prefix).room("AAAAAA"))
    assert await rstore.claim_code(CODE, "h1")
    await rstore.claim(CODE, "h1")  # the host holds the room: its idle close gives the slot back
    await rstore.give_back("h1", CODE)
    assert await redis.zscore(Keys(prefix).hosts(), "h1") == 1
    assert (await rstore.status(CODE))["host"] == "h1"


async def test_a_room_persists_through_redis(rstore):
    clock = FakeClock()
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=rstore,
                             clock=clock)
    for i in range(6):
        await room.join(f"P{i}", f"hash{i}")
    assert await room.command(0, {"type": "start", "id": 1}) == {"type": "ack", "id": 1}
    reloaded = await Room.load(CODE, host="h1", store=rstore, clock=clock)
    assert reloaded.data == room.data
    assert len(await rstore.events_after(CODE, 0)) == room.data.seq
    # The first Room is now fenced: its next write is refused and it stops.
    await room.presence(0, "gw1", True)
    assert room.closed
    assert not reloaded.data.players[0].connected
    reloaded.close()


async def test_hundreds_of_concurrent_writes_wait_for_a_connection(prefix, redis, any_redis_url):
    client = connect(any_redis_url)
    many = RedisStore(client, prefix, finished_ttl=60)
    codes = [f"R{i:05d}" for i in range(300)]
    await asyncio.gather(*(many.claim(code, "h1") for code in codes))
    await asyncio.gather(*(many.persist(code, epoch=1, host="h1", snapshot=b"{}", status="lobby",
                                        first_seq=1, events=[event(1, code)], tokens={},
                                        chat_from=0, chat=[])
                           for code in codes))
    assert len(await many.host_rooms("h1")) == 300
    await client.aclose()


async def test_with_wait_events_are_announced_only_once_a_replica_has_them(prefix, tmp_path):
    with redis_server() as primary:
        redis = connect(primary.url)
        store = RedisStore(redis, prefix, finished_ttl=3600, wait_replicas=1)
        pubsub = shard_pubsub(redis)
        await pubsub.ssubscribe(Keys(prefix).room(CODE))
        assert (await pubsub.get_message(timeout=5))["type"] == "ssubscribe"
        await store.claim(CODE, "h1")
        with pytest.raises(NotReplicated):  # no replica: stored on the primary, not acknowledged
            await write(store, epoch=1, first_seq=1, texts=["a"])
        assert [e["seq"] for e in await store.events_after(CODE, 0)] == [1]
        with pytest.raises(NotReplicated):  # and not announced while only one copy exists
            await store.publish_stored(CODE, 0)
        assert await pubsub.get_message(timeout=0.2) is None
        replica = RedisServer(free_port(), tmp_path,
                              ["--replicaof", "127.0.0.1", str(primary.port)])
        try:
            replica.start()
            wait_replica_online(primary)
            await store.publish_stored(CODE, 0)  # what a room's reload does
            await write(store, epoch=1, first_seq=2, texts=["b"])
            got = [await pubsub.get_message(timeout=5) for _ in range(2)]
            assert [[e["seq"] for e in orjson.loads(m["data"])] for m in got] == [[1], [2]]
        finally:
            replica.kill()
            await pubsub.aclose()
            await redis.aclose()
