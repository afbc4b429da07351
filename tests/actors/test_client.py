"""The parts of the client that need only Redis: codes, and requests to a RoomHost through its
Redis inbox and this process's reply channel (its pub/sub multiplexer: test_subscriptions.py)."""
import asyncio
import contextlib

import orjson
import pytest

from actors import client as client_module
from actors.client import CODE_ALPHABET, RoomClient, normal_code
from actors.clock import FakeClock
from actors.config import Config
from actors.host import RoomHost
from actors.room import RATE_LIMITS
from actors.pubsub import shard_pubsub
from actors.refusals import AgainRefused, RoomNotFound
from actors.reports import REPORT_LINES
from actors.store import RedisStore
from actors.subscriptions import Subscriptions
from tests.helpers import until


def test_room_codes_are_case_insensitive_and_checked():
    assert normal_code("abcdef") == "ABCDEF"
    for bad in ("ABCDE", "ABCDEF1", "ABCDE0", "ABC:EF", None):
        with pytest.raises(RoomNotFound):
            normal_code(bad)
    assert not set("0O1IL") & set(CODE_ALPHABET)


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


async def test_commands_a_fenced_room_held_are_sent_again_and_applied_once(wired):
    """A newer owner's epoch fences a room while a write of it is in flight and a command waits
    behind it. Neither was applied, and the room goes on under that owner: they are answered
    `internal` ROOM_MOVED (they were answered `room_closed`), and the gateway sends them again to
    the room, loaded anew, which applies each once."""
    rc, host, store = wired
    store.held_room = "AAAAAA"
    frames = [{"type": "settings", "id": i, "durations": {"vote": 10 + i}} for i in (1, 2)]
    in_flight = asyncio.create_task(rc.command("AAAAAA", 0, frames[0]))
    await asyncio.wait_for(store.holding.wait(), 5)
    fenced = host.rooms["AAAAAA"]
    queued = asyncio.create_task(rc.command("AAAAAA", 0, frames[1]))
    await until(lambda: fenced.backlog == 1, 5, "the second command queued behind the first")
    await store.claim("AAAAAA", "h1")  # what a second load of the room does first
    store.held_room = None
    store.gate.set()
    assert await in_flight == {"type": "ack", "id": 1}
    assert await queued == {"type": "ack", "id": 2}
    assert fenced.closed and host.rooms["AAAAAA"] is not fenced
    applied = [orjson.loads(e["frame"])["settings"]["durations"]["vote"]
               for e in await rc.events_after("AAAAAA", 1)]
    assert applied == [11, 12]


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
    successor = RoomHost("h1", Config(prefix=prefix), RedisStore(redis, prefix, 3600), FakeClock())
    taken = asyncio.Event()

    async def ask_ray(actor, method):
        """What the Ray call answers: the same process until it took the request and died, then
        the process Ray restarted. Patched before the command is sent, so that however soon the
        client asks (a loaded machine), it never makes a real Ray call."""
        assert (actor, method) == ("h1", "incarnation")
        return successor.incarnation if taken.is_set() else host.incarnation
    monkeypatch.setattr(rc, "_call", ask_ray)
    monkeypatch.setattr(client_module, "REPLY_PATIENCE", 0.05)
    host._inbox.cancel()  # the process "dies": it takes one request and never answers
    dying = RedisStore(redis, prefix, 3600)
    reply = asyncio.create_task(rc.command("BBBBBB", 0, {"type": "settings", "id": 5, "roles": []}))
    while not await dying.take_requests("h1", 0.05):
        pass
    taken.set()
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


async def test_reports_store_no_copy_of_the_chat_however_much_was_said(wired, redis):
    """306 reports copying the reported seats' chat took 17x the chat (issue 34): a report
    stores where the lines are, so what the reports take does not grow with what was said."""
    rc, _, _ = wired

    async def stored_by_reports(code: str, said: int) -> int:
        seats = [await rc.join(code, f"P{i}") for i in (1, 2, 3)]
        for i in range(said):
            line = {"channel": "day", "seat": 3, "name": "P3", "text": f"{i} " + "abuse " * 40,
                    "ts": i, "to": None}
            await redis.rpush(rc.keys.chat(code), orjson.dumps(line))
        for seat in seats[:2]:
            assert await rc.report(code, seat["token"], 3, "abuse", "insults")
        report_keys = [key async for key in redis.scan_iter(match=f"*{{{code}}}*report*")]
        return sum([await redis.memory_usage(key) for key in report_keys])

    quiet, chatty = await stored_by_reports("AAAAAA", 0), await stored_by_reports("BBBBBB", 400)
    assert chatty < quiet + 64, (quiet, chatty)  # 400 lines of 250 bytes: 100 KB if copied
    page = await rc.reports(10)
    assert [len(r["lines"]) for r in page["reports"] if r["room"] == "BBBBBB"] == [REPORT_LINES] * 2


async def test_a_report_past_its_bounds_or_again_never_reaches_the_room_s_host(wired, monkeypatch):
    """306 reports at once, most past the bounds, each asked the room's host for the seats'
    names and kept it from the honest tables' commands (issue 34): the bounds and a duplicate
    are refused from Redis alone."""
    rc, _, _ = wired
    seats = [await rc.join("AAAAAA", f"P{i}") for i in range(rc.config.reports_per_seat + 3)]
    reporter = seats[0]
    for seat in seats[1:rc.config.reports_per_seat + 1]:
        assert await rc.report("AAAAAA", reporter["token"], seat["seat"], "abuse", "")
    asked = []
    real_lobby = rc.lobby

    async def lobby(code):
        asked.append(code)
        return await real_lobby(code)
    monkeypatch.setattr(rc, "lobby", lobby)
    assert not await rc.report("AAAAAA", reporter["token"], seats[1]["seat"], "abuse", "")
    with pytest.raises(AgainRefused, match="at most"):
        await rc.report("AAAAAA", reporter["token"], seats[-1]["seat"], "abuse", "")
    assert asked == []
    assert await rc.report("AAAAAA", seats[1]["token"], reporter["seat"], "abuse", "")
    assert asked == ["AAAAAA"]  # one that is filed reads the names
