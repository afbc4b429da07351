"""Public tables: the room's side (MemoryStore, fake clock) and the index's scripts on a real
Redis and a Redis Cluster."""
import asyncio

import pytest

import rules
from actors.lobby import LobbyTiming
from actors.room import Room
from actors.tables import Kind, NoSuchKind, TableIndex, kinds
from tests.actors.rooms import CODE, frames, seat

CLASSIC = Kind("seed_000", "en")
COUNTDOWN = 20_000
TIMING = LobbyTiming(countdown=COUNTDOWN, absent=600_000)


async def public_room(store, clock, kind=CLASSIC, code=CODE) -> Room:
    return await Room.create(code, settings=kind.settings(), host="h1", store=store, clock=clock,
                             kind=kind, timing=TIMING)


def listed(store, kind=CLASSIC) -> dict[str, int]:
    return store.tables.open.get(kind, {})


async def test_a_public_table_is_listed_with_its_seats_from_its_first_player(store, clock):
    room = await public_room(store, clock)
    await seat(room, 3)
    assert listed(store) == {CODE: 3}
    starts_at = clock.now() + COUNTDOWN  # from its first seat
    assert store.tables.facts_of[CLASSIC][CODE] == {"size": 18, "starts_at": starts_at, "bots": 0}
    lobby = room.data.lobby()
    assert (lobby["public"], lobby["language"], lobby["starts_at"]) == (True, "en", starts_at)


async def test_a_private_table_is_never_listed(store, clock):
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock)
    await seat(room, 7)
    assert store.tables.open == {} and store.tables.running == {}
    assert room.data.lobby()["public"] is False


async def test_a_seat_promised_by_a_press_is_not_counted_twice(store, clock):
    room = await public_room(store, clock)
    await seat(room, 2)
    store.tables.open[CLASSIC][CODE] += 1  # what the press's claim did
    assert await room.join("Pressed", "hp", promised=True) == {"seat": 2}
    assert listed(store) == {CODE: 3}


async def test_the_countdown_starts_at_the_first_seat_and_a_joiner_resets_nothing(store, clock):
    room = await public_room(store, clock)
    await seat(room, 1)
    starts_at = clock.now() + COUNTDOWN
    assert room.data.starts_at == starts_at
    assert store.tables.facts_of[CLASSIC][CODE]["starts_at"] == starts_at
    clock.advance(5_000)
    await room.join("Second", "h2")
    await room.join("Third", "h3")
    assert room.data.starts_at == starts_at
    assert [f for f in frames(store) if f["kind"] == "countdown"] == [
        {"type": "event", "seq": 2, "kind": "countdown", "starts_at": starts_at}]
    clock.advance(COUNTDOWN - 5_000)
    await store.wait_for(lambda: room.data.status == "running")
    # filled up with bots to 8 (actors.lobby.fill_size)
    assert len(room.data.game.roles) == 8 and sum(p.bot for p in room.data.players) == 5
    assert listed(store) == {} and CODE in store.tables.running[CLASSIC]
    assert store.tables.running[CLASSIC][CODE]["seats"] == 8
    assert store.tables.running[CLASSIC][CODE]["bots"] == 5
    room.close()


async def test_a_table_that_empties_stops_its_countdown(store, clock):
    room = await public_room(store, clock)
    await seat(room, 1)
    await room.command(0, {"type": "leave", "id": 1})
    assert room.data.starts_at is None
    assert frames(store)[-1] == {"type": "event", "seq": 4, "kind": "countdown", "starts_at": None}


async def test_an_emptied_table_leaves_the_list_at_once_and_its_next_seat_lists_it(store, clock):
    room = await public_room(store, clock)
    await seat(room, 2)
    for left in (1, 0):
        await room.command(left, {"type": "leave", "id": left})
    assert listed(store) == {} and CODE not in store.tables.facts_of[CLASSIC]
    assert room.data.status == "lobby" and not room.closed  # its link still seats
    clock.advance(5_000)
    await room.join("Back", "hb")
    assert listed(store) == {CODE: 1}
    facts = {"size": 18, "starts_at": clock.now() + COUNTDOWN, "bots": 0}  # a countdown anew
    assert store.tables.facts_of[CLASSIC][CODE] == facts


async def test_a_table_of_nine_humans_needs_no_bot(store, clock):
    room = await public_room(store, clock)
    await seat(room, 9)
    clock.advance(COUNTDOWN)
    await store.wait_for(lambda: room.data.status == "running")
    assert len(room.data.players) == 9 and not any(p.bot for p in room.data.players)
    room.close()


async def test_a_full_table_starts_at_once(store, clock):
    room = await public_room(store, clock)
    await seat(room, 17)
    assert room.data.status == "lobby"
    await room.join("Last", "h18")
    assert room.data.status == "running"
    assert "game_started" in [f["kind"] for f in frames(store)]
    assert listed(store) == {}
    assert store.tables.running[CLASSIC][CODE]["size"] == 18


async def test_a_public_table_is_not_started_by_its_host_and_keeps_its_preset(store, clock):
    room = await public_room(store, clock)
    await seat(room, 6)
    assert (await room.command(0, {"type": "start", "id": 1}))["code"] == "not_host"
    refused = await room.command(0, {"type": "settings", "id": 2, "preset": "seed_002"})
    assert refused["code"] == "not_host"
    refused = await room.command(0, {"type": "settings", "id": 3, "roles": ["seer"]})
    assert refused["code"] == "not_host"
    assert room.data.settings.preset == "seed_000"
    ack = await room.command(0, {"type": "settings", "id": 4, "durations": {"discussion": 90}})
    assert ack["type"] == "ack" and room.data.settings.durations["discussion"] == 90


async def test_the_host_opens_a_private_table_and_it_stays_public(store, clock):
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock, timing=TIMING)
    await seat(room, 4)
    assert (await room.command(1, {"type": "table", "id": 1, "public": True}))["code"] == "not_host"
    refused = await room.command(0, {"type": "table", "id": 4, "public": True, "language": "xx"})
    assert refused["code"] == "bad_frame"
    ack = await room.command(0, {"type": "table", "id": 2, "public": True, "language": "vi"})
    assert ack["type"] == "ack"
    assert listed(store, Kind("seed_000", "vi")) == {CODE: 4}
    assert [f["kind"] for f in frames(store)[-2:]] == ["table", "countdown"]
    # strangers may sit down now: it has no host left to close it on them
    refused = await room.command(0, {"type": "table", "id": 3, "public": False})
    assert refused["code"] == "not_host" and room.data.lobby()["public"] is True


async def test_a_public_table_has_no_host_to_make_it_private_or_move_it(store, clock):
    room = await public_room(store, clock)
    await seat(room, 4)
    seq = room.data.seq
    for id_, frame in enumerate([{"public": False}, {"public": True, "language": "vi"},
                                 {"public": False, "language": "xx"}]):
        refused = await room.command(0, {"type": "table", "id": id_, **frame})
        assert refused["code"] == "not_host" and "stays public" in refused["message"]
    # nothing changed: no write, still listed in its language, its countdown running
    assert room.data.seq == seq and (room.data.public, room.data.language) == (True, "en")
    assert listed(store) == {CODE: 4} and room.data.starts_at is not None


async def test_a_custom_table_cannot_go_public(store, clock):
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock)
    await seat(room, 6)
    await room.command(0, {"type": "settings", "id": 1, "roles": ["seer", "witch"]})
    assert room.data.settings.preset is None
    refused = await room.command(0, {"type": "table", "id": 2, "public": True})
    assert refused["code"] == "not_your_turn"
    assert store.tables.open == {}


async def test_a_public_lobby_nobody_attends_closes_and_leaves_the_list(store, clock):
    room = await Room.create(CODE, settings=CLASSIC.settings(), host="h1", store=store,
                             clock=clock, kind=CLASSIC, idle_close=600_000,
                             lobby_idle_close=60_000, timing=TIMING)
    await seat(room, 2)
    clock.advance(60_000)
    await store.wait_for(lambda: room.closed)
    assert listed(store) == {}


async def test_a_snapshot_keeps_the_table(store, clock):
    room = await public_room(store, clock)
    await seat(room, 6)
    room.close()
    again = await Room.load(CODE, host="h2", store=store, clock=clock, timing=TIMING)
    assert (again.data.public, again.data.language) == (True, "en")
    assert again.data.starts_at == room.data.starts_at is not None
    clock.advance(COUNTDOWN)  # its timer re-armed from the stored countdown
    await store.wait_for(lambda: again.data.status == "running")


def test_kinds_are_the_presets_in_each_language():
    assert len(kinds()) == len(rules.PRESETS) * 4
    assert kinds("seed_004", "zh") == [Kind("seed_004", "zh")]
    with pytest.raises(NoSuchKind):
        Kind("seed_999", "en")
    with pytest.raises(NoSuchKind):
        kinds(language="fr")
    assert Kind("seed_004", "en").size() == 20


# -- the index's scripts, on Redis and on a Redis Cluster ------------------------------------------

async def test_claims_fill_the_fullest_open_table_and_never_pass_its_size(redis, prefix):
    index = TableIndex(redis, prefix)
    assert await index.claim(CLASSIC, 3) == ("create", None)
    assert await index.claim(CLASSIC, 3) == ("wait", None)  # another press is opening one
    await index.listed(CLASSIC, "AAAAAA", 1, {"size": 3, "starts_at": None})
    await index.listed(CLASSIC, "BBBBBB", 2, {"size": 3, "starts_at": None})
    await index.made(CLASSIC)
    assert await index.claim(CLASSIC, 3) == ("seat", "BBBBBB")  # the fullest first
    assert await index.claim(CLASSIC, 3) == ("seat", "AAAAAA")
    assert await index.claim(CLASSIC, 3, ["AAAAAA"]) == ("create", None)
    await index.made(CLASSIC)
    assert await index.claim(CLASSIC, 3) == ("seat", "AAAAAA")
    assert await index.claim(CLASSIC, 3) == ("create", None)  # both full
    tables = await index.open_tables(CLASSIC)
    assert [(t["room"], t["seats"]) for t in tables] == [("BBBBBB", 3), ("AAAAAA", 3)]
    assert tables[0] == {"room": "BBBBBB", "preset": "seed_000", "language": "en",
                         "state": "open", "seats": 3, "size": 3, "starts_at": None}


async def test_concurrent_claims_take_each_seat_once(redis, prefix):
    index = TableIndex(redis, prefix)
    for code in ("AAAAAA", "BBBBBB"):
        await index.listed(CLASSIC, code, 0, {"size": 18, "starts_at": None})
    await redis.set(index.key(CLASSIC, "making"), b"1")  # no new table in this test
    verdicts = await asyncio.gather(*(index.claim(CLASSIC, 18) for _ in range(40)))
    seats = [code for verdict, code in verdicts if verdict == "seat"]
    assert sorted(seats) == ["AAAAAA"] * 18 + ["BBBBBB"] * 18
    assert [v for v, _ in verdicts].count("wait") == 4


async def test_a_started_game_moves_to_the_running_list_and_an_ended_one_leaves(redis, prefix):
    index = TableIndex(redis, prefix)
    await index.listed(CLASSIC, "AAAAAA", 5, {"size": 18, "starts_at": None})
    await index.seated(CLASSIC, "AAAAAA", 1)
    await index.facts(CLASSIC, "AAAAAA", {"size": 18, "starts_at": 123})
    assert [(t["seats"], t["starts_at"]) for t in await index.open_tables(CLASSIC)] == [(6, 123)]
    await index.started(CLASSIC, "AAAAAA", 1000, {"seats": 6, "size": 18, "started": 1000})
    assert await index.open_tables(CLASSIC) == []
    await index.seated(CLASSIC, "AAAAAA", -1)  # a late count of a started table does nothing
    assert await index.open_tables(CLASSIC) == []
    assert await index.running_games(CLASSIC) == [
        {"room": "AAAAAA", "preset": "seed_000", "language": "en", "state": "running",
         "seats": 6, "size": 18, "started": 1000}]
    await index.ended(CLASSIC, "AAAAAA")
    assert await index.running_games(CLASSIC) == []
