"""RoomHost without Ray: several rooms in one host, a restart, and requests through its inbox."""
import asyncio

import orjson

import rules
from actors.config import Config
from actors.host import RoomHost
from actors.inbox import REPLY_OK, REPLY_UNAVAILABLE
from actors.room import Room


def host(store, clock, name="h1") -> RoomHost:
    return RoomHost(name, Config(durations={"discussion": 30}), store, clock)


async def running_room(h: RoomHost, code: str) -> None:
    assert await h.create_room(code, "Host", "t0") == {"seat": 0}
    for i in range(1, 6):
        assert await h.join(code, f"P{i}", f"t{i}") == {"seat": i}
    assert await h.request("command", code, 0,
                           ({"type": "start", "id": 1}, None)) == {"type": "ack", "id": 1}


async def test_new_rooms_take_the_configured_durations(store, clock):
    h = host(store, clock)
    await h.create_room("AAAAAA", "Host", "t0")
    assert (await h.lobby("AAAAAA"))["settings"]["durations"]["discussion"] == 30


async def test_a_restarted_host_takes_its_rooms_back_with_their_timers(store, clock):
    before = host(store, clock)
    for code in ("AAAAAA", "BBBBBB"):
        await running_room(before, code)
    after = host(store, clock)  # same name: what Ray does after the process died
    await after.start()
    assert sorted(after.rooms) == ["AAAAAA", "BBBBBB"]
    assert {store.rooms[code]["epoch"] for code in after.rooms} == {"2"}
    phases = {code: room.data.game.phase for code, room in after.rooms.items()}
    clock.advance(max(rules.next_deadline(r.data.game) for r in after.rooms.values()) - clock.now())
    await store.wait_for(lambda: all(r.data.game.phase != phases[c]
                                     for c, r in after.rooms.items()))
    assert not before.rooms  # the leftovers were fenced at their first write and closed
    for code in ("AAAAAA", "BBBBBB"):
        seqs = [orjson.loads(raw)["seq"] for raw in store.logs[code]]
        assert seqs == list(range(1, len(seqs) + 1))


async def test_a_room_the_directory_gives_it_is_loaded_on_first_use(store, clock):
    await running_room(host(store, clock), "AAAAAA")
    fresh = host(store, clock)  # not started: the room is loaded by the request itself
    welcome = await fresh.welcome("AAAAAA", 2)
    assert welcome["view"]["me"]["seat"] == 2 and "AAAAAA" in fresh.rooms
    # snapshot, not a takeover
    assert await host(store, clock, "h2").welcome("AAAAAA", 2) == welcome
    assert store.rooms["AAAAAA"]["host"] == "h1"


def replies_to(store, gateway: str) -> dict[int, tuple]:
    """request number -> (status, reply), from every reply message published to `gateway`."""
    out = {}
    for message in store.replies.get(gateway, []):
        decoded = orjson.loads(message)
        assert decoded["host"] == "h1"
        out.update({number: (status, value) for number, status, value in decoded["replies"]})
    return out


async def ask(h: RoomHost, store, requests: list[tuple], gateway: str = "gw1") -> list[tuple]:
    """Put `requests` in the host's inbox as a gateway does; (status, reply) of each, in order."""
    first = len(replies_to(store, gateway)) + 1
    numbers = list(range(first, first + len(requests)))
    for number, request in zip(numbers, requests):
        store.send_request(h.name, orjson.dumps([gateway, number, *request]))
    await store.wait_for(lambda: set(numbers) <= set(replies_to(store, gateway)))
    replies = replies_to(store, gateway)
    return [replies[number] for number in numbers]


async def test_inbox_requests_are_each_answered_on_their_own(store, clock):
    h = host(store, clock)
    await h.start()
    await running_room(h, "AAAAAA")
    replies = await ask(h, store, [
        ("command", "ZZZZZZ", 0, ({"type": "chat", "id": 1, "text": "hi"}, None)),
        ("presence", "AAAAAA", 3, ("gw1", True)),
        ("command", "AAAAAA", 0, ({"type": "settings", "id": 2}, None)),
    ])
    assert replies[0][1]["code"] == "room_closed"
    assert replies[1] == (REPLY_OK, None) and h.rooms["AAAAAA"].data.players[3].connected
    assert replies[2][1]["code"] == "not_your_turn"


async def test_a_listening_gateway_s_reply_rides_the_write_once_and_only_with_events(store, clock):
    h = host(store, clock)
    await h.start()
    await h.create_room("AAAAAA", "Host", "t0")
    replies = await ask(h, store, [
        ("command", "AAAAAA", 0,
         ({"type": "settings", "id": 1, "roles": ["seer"]}, None, None, True)),
        ("command", "AAAAAA", 0, ({"type": "chat", "id": 2, "text": "hi"}, None, None, True)),
    ])
    assert replies == [(REPLY_OK, {"type": "ack", "id": 1}), (REPLY_OK, replies[1][1])]
    assert replies[1][1]["code"] == "not_your_turn"  # refused: nothing written, nothing to ride
    sent = [number for message in store.replies["gw1"]
            for number, _, _ in orjson.loads(message)["replies"]]
    assert sorted(sent) == [1, 2]  # each answered once: the rider is not sent again


async def test_joins_and_lobby_reads_come_through_the_inbox(store, clock):
    h = host(store, clock)
    await h.start()
    await h.create_room("AAAAAA", "Host", "t0")
    replies = await ask(h, store, [
        ("join", "AAAAAA", None, ("Omar", "t1")),
        ("join", "AAAAAA", None, ("Omar", "t1")),  # a retried join: the same seat
        ("join", "AAAAAA", None, ("Omar", "t2")),
        ("join", "NOROOM", None, ("Late", "t3")),
    ])
    assert replies[0] == replies[1] == (REPLY_OK, {"seat": 1})
    assert replies[2][1]["error"] == "name_taken"
    assert replies[3][1]["error"] == "room_not_found"
    lobby, missing = await ask(h, store,
                               [("lobby", "AAAAAA", None, None), ("lobby", "NOROOM", None, None)])
    assert [p["name"] for p in lobby[1]["players"]] == ["Host", "Omar"]
    assert missing == (REPLY_OK, None)


async def test_a_slow_room_never_holds_back_the_reply_of_another(store, clock):
    h = host(store, clock)
    await h.start()
    await running_room(h, "AAAAAA")
    await running_room(h, "BBBBBB")
    store.gate = asyncio.Event()  # every write waits: the first one holds room AAAAAA
    store.send_request("h1", orjson.dumps(["gw1", 1, "presence", "AAAAAA", 4, ["gw1", True]]))
    await asyncio.wait_for(store.held.wait(), 5)
    welcome = await ask(h, store, [("welcome", "BBBBBB", 2, None)], gateway="gw2")  # needs no write
    assert welcome[0][1]["view"]["me"]["seat"] == 2 and 1 not in replies_to(store, "gw1")
    store.gate.set()
    await store.wait_for(lambda: 1 in replies_to(store, "gw1"))


async def test_an_unreadable_request_is_dropped_and_the_inbox_goes_on(store, clock):
    h = host(store, clock)
    await h.start()
    await running_room(h, "AAAAAA")
    store.send_request("h1", b"{not json")
    store.send_request("h1", orjson.dumps(["gw1", 1, "only", "four"]))
    assert (await ask(h, store, [("welcome", "AAAAAA", 0, None)]))[0][0] == REPLY_OK


async def test_a_host_sweeps_out_the_gateways_whose_lease_lapsed(store, clock):
    h = host(store, clock)
    await h.start()
    await running_room(h, "AAAAAA")
    store.gateways = {"gw-a", "gw-b"}
    await ask(h, store, [("presence", "AAAAAA", 1, ("gw-a", True)),
                         ("presence", "AAAAAA", 2, ("gw-b", True))])
    players = lambda: h.rooms["AAAAAA"].data.players  # noqa: E731
    await h.sweep_presence()  # both leases live: nothing changes
    assert players()[1].connected and players()[2].connected
    store.gateways.discard("gw-a")  # gw-a died without a word
    clock.advance(Config().presence_lease * 1000)  # the host's own periodic sweep
    await store.wait_for(lambda: not players()[1].connected)
    assert players()[2].connected


async def test_joins_are_refused_by_cause(store, clock):
    h = host(store, clock)
    await running_room(h, "AAAAAA")
    assert (await h.join("AAAAAA", "Late", "late"))["error"] == "room_started"
    assert (await h.join("NOROOM", "Late", "late"))["error"] == "room_not_found"
    assert (await h.create_room("BBBBBB", " ", "t"))["error"] == "bad_name"


async def test_a_room_whose_first_write_failed_opens_when_its_creation_is_retried(store, clock):
    h = host(store, clock)
    store.fail = ConnectionError("Redis is away")  # the room is claimed; seating its host fails
    assert (await h.create_room("AAAAAA", "Host", "t0"))["error"] == "internal"
    store.fail = None
    assert await h.create_room("AAAAAA", "Host", "t0") == {"seat": 0}  # the gateway's retry
    assert await h.join("AAAAAA", "Omar", "t1") == {"seat": 1}
    assert store.kinds("AAAAAA") == ["joined", "joined"]


async def test_a_request_that_fails_fails_alone(store, clock):
    h = host(store, clock)
    await h.start()
    await running_room(h, "AAAAAA")
    store.rooms["BBBBBB"] = {"epoch": "1", "host": "h1", "status": "running"}
    store.snapshots["BBBBBB"] = b"{not a snapshot"  # this room cannot be loaded
    replies = await ask(h, store, [("welcome", "BBBBBB", 0, None),
                                   ("command", "BBBBBB", 0, ({"type": "start", "id": 7}, None)),
                                   ("welcome", "AAAAAA", 1, None)])
    assert replies[0] == (REPLY_UNAVAILABLE, "room BBBBBB is unavailable, retry")
    assert replies[1][1]["code"] == "internal"
    assert replies[2][1]["view"]["me"]["seat"] == 1


async def test_the_host_metrics_count_rooms_and_players(store, clock):
    h = host(store, clock)
    await running_room(h, "AAAAAA")
    await h.create_room("BBBBBB", "Solo", "s0")
    text = h.metrics.text()
    assert "ww_host_rooms 2.0" in text and "ww_host_players 7.0" in text
    assert "ww_host_restarts_total 0.0" in text


async def test_a_room_that_closes_late_leaves_the_newer_room_of_its_code_in_place(store, clock):
    """A host forgets a closed room by the Room, not by its code: a Room fenced by a newer load in
    this host, closing after that load took its place, must not unlist the live one (every later
    request would load the room again, fencing it in turn)."""
    h = host(store, clock)
    await running_room(h, "AAAAAA")
    fenced = h.rooms["AAAAAA"]
    newer = await Room.load("AAAAAA", host=h.name, store=store, clock=clock, on_close=h._forget)
    h.rooms["AAAAAA"] = newer  # what the load of a request does
    fenced.close()
    assert h.rooms["AAAAAA"] is newer and not newer.closed
    assert (await h.welcome("AAAAAA", 0))["seq"] == newer.data.seq
