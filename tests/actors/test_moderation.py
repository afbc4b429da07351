"""The room's side of moderation (MemoryStore, fake clock): leaving, removal by the host or by a
public table's vote, the seat that moves into a removed one's place, absent seats of a public
lobby, and away seats of a public game."""
from dataclasses import replace

import orjson

import rules
from actors.lobby import LobbyTiming
from actors.moderation import GONE_AFTER
from actors.room import Room
from actors.room_data import AWAY_AFTER, WATCHER
from actors.tables import Kind
from tests.actors.rooms import CODE, frames, seat, stored

CLASSIC = Kind("seed_000", "en")
TIMING = LobbyTiming(countdown=600_000, absent=60_000)


async def private_room(store, clock) -> Room:
    return await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock, timing=TIMING)


async def public_room(store, clock) -> Room:
    return await Room.create(CODE, settings=CLASSIC.settings(), host="h1", store=store,
                             clock=clock, kind=CLASSIC, timing=TIMING)


def names(room: Room) -> list[str]:
    return [p.name for p in room.data.players]


async def test_a_seat_that_leaves_gives_its_place_to_the_last_one(store, clock):
    room = await private_room(store, clock)
    await seat(room, 5)
    assert (await room.command(1, {"type": "leave", "id": 1}))["type"] == "ack"
    assert names(room) == ["Player0", "Player4", "Player2", "Player3"]
    event = stored(store)[-1]
    assert event["unseat"] == [1, 4]
    assert orjson.loads(event["frame"]) == {
        "type": "event", "seq": 6, "kind": "removed", "seat": 1, "name": "Player1",
        "reason": "left", "moved": 4, "roles_in_play": room.data.lobby()["roles_in_play"],
        "remove_votes": {}}
    # the moved token proves its new seat, the gone one none
    assert store.tokens[CODE] == {"hash0": 0, "hash4": 1, "hash2": 2, "hash3": 3}
    await room.command(3, {"type": "leave", "id": 2})  # the last one: nobody moves
    assert orjson.loads(stored(store)[-1]["frame"])["moved"] is None
    assert stored(store)[-1]["unseat"] == [3]
    assert names(room) == ["Player0", "Player4", "Player2"]


async def test_a_stale_seat_s_requests_are_refused(store, clock):
    room = await private_room(store, clock)
    await seat(room, 3)
    await room.command(0, {"type": "remove", "id": 1, "seat": 1})
    # Player1's socket, not closed yet, still says seat 1: Player2 sits there now
    refused = await room.command(1, {"type": "leave", "id": 2}, proof="hash1"[:16])
    assert refused["code"] == "not_authenticated"
    assert names(room) == ["Player0", "Player2"]
    assert room.welcome(1, proof="hash1") == {"moved": True}
    assert room.welcome(1, proof="hash2")["view"]["players"][1]["name"] == "Player2"
    assert "seq" in room.welcome(WATCHER, proof=None)


async def test_only_a_private_table_s_host_removes_and_only_in_the_lobby(store, clock):
    room = await private_room(store, clock)
    await seat(room, 6)
    assert (await room.command(2, {"type": "remove", "id": 1, "seat": 3}))["code"] == "not_host"
    assert (await room.command(0,
                               {"type": "remove", "id": 2, "seat": 0}))["code"] == "illegal_target"
    assert (await room.command(0,
                               {"type": "remove", "id": 3, "seat": 9}))["code"] == "illegal_target"
    ack = await room.command(0, {"type": "remove", "id": 4, "seat": 3})
    assert ack["type"] == "ack" and orjson.loads(stored(store)[-1]["frame"])["reason"] == "host"
    await seat_more(room, ["Late"])
    await room.command(0, {"type": "start", "id": 5})
    assert (await room.command(0,
                               {"type": "remove", "id": 6, "seat": 2}))["code"] == "not_your_turn"
    # a seat leaving a game is played by a bot (tests/actors/test_bot_seats.py), once
    assert (await room.command(1, {"type": "leave", "id": 7}))["type"] == "ack"
    assert (await room.command(1, {"type": "leave", "id": 8}))["code"] == "not_your_turn"


async def seat_more(room: Room, more: list[str]) -> None:
    for name in more:
        assert "seat" in await room.join(name, f"hash-{name}")


async def test_the_host_that_leaves_hands_the_table_to_the_last_seat(store, clock):
    room = await private_room(store, clock)
    await seat(room, 3)
    await room.command(0, {"type": "leave", "id": 1})
    assert names(room) == ["Player2", "Player1"]
    assert room.data.lobby()["host"] == 0  # Player2 hosts now


async def test_a_public_table_removes_a_seat_once_most_of_the_others_vote_so(store, clock):
    room = await public_room(store, clock)
    await seat(room, 5)  # four others: three votes needed
    clock.advance(TIMING.settled)
    for voter in (0, 1):
        assert (await room.command(voter,
                                   {"type": "remove", "id": voter, "seat": 4}))["type"] == "ack"
    await room.command(1, {"type": "remove", "id": 9, "seat": 4})  # a second vote counts once
    votes = [f for f in frames(store) if f["kind"] == "remove_vote"]
    assert [(f["seat"], f["votes"], f["needed"]) for f in votes] == [(4, 1, 3), (4, 2, 3)]
    assert room.data.lobby()["remove_votes"] == {4: {"votes": 2, "needed": 3}}
    assert names(room)[4] == "Player4"
    await room.command(3, {"type": "remove", "id": 3, "seat": 4})
    assert names(room) == ["Player0", "Player1", "Player2", "Player3"]
    assert orjson.loads(stored(store)[-1]["frame"])["reason"] == "vote"
    assert store.tables.open[CLASSIC][CODE] == 4  # the list counts the seat gone


async def test_a_newcomer_can_neither_be_voted_out_nor_vote_at_once(store, clock):
    room = await public_room(store, clock)
    await seat(room, 4)
    clock.advance(TIMING.settled)
    assert await room.join("Newcomer", "hashN") == {"seat": 4}
    refused = await room.command(0, {"type": "remove", "id": 1, "seat": 4})
    assert refused["code"] == "not_your_turn" and "just sat down" in refused["message"]
    refused = await room.command(4, {"type": "remove", "id": 1, "seat": 0}, proof="hashN")
    assert refused["code"] == "not_your_turn"
    assert room.data.lobby()["remove_votes"] == {}
    clock.advance(TIMING.settled - 1)
    assert (await room.command(0, {"type": "remove", "id": 2, "seat": 4}))["code"] \
        == "not_your_turn"
    clock.advance(1)  # settled now: a vote like any seat's
    assert (await room.command(0, {"type": "remove", "id": 3, "seat": 4}))["type"] == "ack"
    assert room.data.lobby()["remove_votes"] == {4: {"votes": 1, "needed": 3}}


async def vote_out(room: Room, target: int, voters: range, round_: int = 0) -> None:
    for voter in voters:  # ids new every round: a frame id seen before is a retry
        ack = await room.command(voter, {"type": "remove", "id": 100 + round_,
                                         "seat": target}, proof=f"hash{voter}")
        assert ack["type"] == "ack", ack


async def test_a_seat_voted_out_is_not_seated_at_that_table_again(store, clock):
    room = await public_room(store, clock)
    await seat(room, 5)
    clock.advance(TIMING.settled)
    await vote_out(room, 4, range(3))
    assert names(room) == ["Player0", "Player1", "Player2", "Player3"]
    again = [("Player4", "other"), ("P1ayer4", "other"), ("Someone", "hash4")]
    for name, token_hash in again:  # by its token, or by its name or a look-alike of it
        assert (await room.join(name, token_hash))["error"] == "room_full", name
    assert await room.join("Someone", "fresh") == {"seat": 4}


async def test_a_seat_voted_out_is_not_seated_there_again_from_its_address(store, clock):
    """A new press has a new token, and a new name passes the name's bar: its address does not."""
    room = await public_room(store, clock)
    await seat(room, 4)
    assert await room.join("Pest", "hashP", address="markP") == {"seat": 4}
    clock.advance(TIMING.settled)
    await vote_out(room, 4, range(3))
    assert "markP" in orjson.loads(store.snapshots[CODE])["barred"]  # kept with the room
    assert (await room.join("Renamed", "fresh1", address="markP"))["error"] == "room_full"
    assert await room.join("Renamed", "fresh2", address="markQ") == {"seat": 4}


async def test_a_table_that_votes_out_three_newcomers_leaves_the_open_list(store, clock):
    room = await public_room(store, clock)
    await seat(room, 4)
    for held in range(4):  # connected: the lobby does not let them go as absent
        await room.presence(held, "gw1", True)
    for n in range(3):
        assert await room.join(f"New{n}", f"new{n}") == {"seat": 4}
        clock.advance(TIMING.settled)
        assert CODE in store.tables.open[CLASSIC]
        await vote_out(room, 4, range(3), n)
        assert names(room) == ["Player0", "Player1", "Player2", "Player3"]
    assert room.data.voted_out == 3
    assert CODE not in store.tables.open.get(CLASSIC, {})  # quick play sends nobody more
    assert await room.join("ByLink", "hashL") == {"seat": 4}  # its link still seats a friend
    assert CODE not in store.tables.open.get(CLASSIC, {})


async def test_votes_follow_the_players_when_a_seat_moves(store, clock):
    room = await public_room(store, clock)
    await seat(room, 6)
    clock.advance(TIMING.settled)
    await room.command(5, {"type": "remove", "id": 1, "seat": 2})  # Player5 votes against Player2
    await room.command(1, {"type": "remove", "id": 2, "seat": 5})  # and Player1 against Player5
    await room.command(3, {"type": "leave", "id": 3})  # Player5 moves to seat 3
    assert names(room)[3] == "Player5"
    # the event gives every count anew: the votes moved with Player5, and 5 seats need 3
    removed = [f for f in frames(store) if f["kind"] == "removed"][-1]
    assert removed["remove_votes"] == {"2": {"votes": 1, "needed": 3},
                                       "3": {"votes": 1, "needed": 3}}
    assert frames(store)[-1] == removed  # the countdown runs on: it stops only at 0 seats
    assert room.data.players[3].removers == ("hash1",)
    assert room.data.players[2].removers == ("hash5",)
    # Player5 leaves: its vote goes
    await room.command(3, {"type": "leave", "id": 4}, proof="hash5")
    assert room.data.players[2].removers == ()


async def test_a_public_lobby_lets_go_of_a_seat_with_no_socket(store, clock):
    room = await public_room(store, clock)
    await seat(room, 3)
    await room.presence(0, "gw1", True)
    await room.presence(1, "gw1", True)
    clock.advance(30_000)
    await room.presence(1, "gw1", False)  # Player1 goes at 30 s, Player2 never came
    clock.advance(30_000)
    await store.wait_for(lambda: len(room.data.players) == 2)
    assert names(room) == ["Player0", "Player1"]
    assert orjson.loads(stored(store)[-1]["frame"])["reason"] == "away"
    clock.advance(30_000)
    await store.wait_for(lambda: len(room.data.players) == 1)
    assert names(room) == ["Player0"]
    assert store.tables.open[CLASSIC][CODE] == 1


async def test_a_private_lobby_keeps_its_absent_seats(store, clock):
    room = await private_room(store, clock)
    await seat(room, 3)
    clock.advance(120_000)
    await room.command(0, {"type": "settings", "id": 1, "durations": {"vote": 40}})
    assert len(room.data.players) == 3


async def playing_public(store, clock) -> Room:
    room = await public_room(store, clock)
    await seat(room, 17)
    await room.join("Last", "hash17")  # full: it starts
    assert room.data.status == "running"
    return room


async def pass_deadline(store, room: Room, clock) -> None:
    seq = room.data.seq
    clock.advance(rules.next_deadline(room.data.game) - clock.now())
    await store.wait_for(lambda: room.data.seq > seq)


async def test_a_seat_that_lets_prompts_pass_is_away_until_it_acts(store, clock):
    room = await playing_public(store, clock)
    sleeper = None
    while sleeper is None or room.data.players[sleeper].missed < AWAY_AFTER:
        prompted = {p["seat"] for p in room.data.game.prompts}
        if sleeper is None and prompted:
            sleeper = min(prompted)
        await pass_deadline(store, room, clock)
        assert room.data.status == "running"
    assert room.data.lobby()["players"][sleeper]["away"] is True
    assert {"kind": "away", "seat": sleeper, "away": True} in [
        {k: f[k] for k in ("kind", "seat", "away")} for f in frames(store) if f["kind"] == "away"]
    while not any(p["seat"] == sleeper for p in room.data.game.prompts):
        await pass_deadline(store, room, clock)
    prompt = next(p for p in room.data.game.prompts if p["seat"] == sleeper)
    targets = prompt["choices"][:prompt["min"]]
    reply = await room.command(sleeper, {"type": "act", "id": "x", "action": prompt["action"],
                                         "targets": targets})
    assert reply["type"] == "ack"
    assert room.data.players[sleeper].missed == 0
    assert any(f["kind"] == "away" and f["seat"] == sleeper and f["away"] is False
               for f in frames(store))


async def test_a_gone_seat_passes_the_village_vote_at_once(store, clock):
    room = await playing_public(store, clock)
    players = tuple(replace(p, missed=GONE_AFTER) for p in room.data.players)
    room.data = replace(room.data, players=players)  # every seat gone
    def voted_out() -> bool:  # the day's vote opened and closed
        kinds = [(f["kind"], f.get("phase")) for f in frames(store)]
        return ("phase", "day.vote") in kinds and ("vote_result", "day.vote") in kinds
    for _ in range(30):
        if voted_out():
            break
        await pass_deadline(store, room, clock)
    # each gone seat passed the day's vote (and the election) as it opened, once; the night's
    # prompts ran their time
    vote_phase = next(f for f in frames(store) if f["kind"] == "phase" and f["phase"] == "day.vote")
    after = frames(store)[frames(store).index(vote_phase):]
    result = next(f for f in after if f["kind"] == "vote_result")
    voted = [f for f in after[:after.index(result)] if f["kind"] == "voted"]
    assert sorted(f["seat"] for f in voted) == list(range(18))


async def test_a_private_game_counts_no_missed_prompt(store, clock):
    room = await private_room(store, clock)
    await seat(room, 6)
    await room.command(0, {"type": "start", "id": 1})
    await pass_deadline(store, room, clock)
    await pass_deadline(store, room, clock)
    assert all(p.missed == 0 for p in room.data.players)


async def test_away_tells_nothing_of_a_card_every_silent_seat_turns_away_at_once(store, clock):
    """Night prompts (a role's) do not count: were they counted, the Seer who sleeps through her
    step would turn away a deadline before the villagers and name her card."""
    room = await playing_public(store, clock)
    while not any(f["kind"] == "away" for f in frames(store)):
        await pass_deadline(store, room, clock)
    away = [f for f in frames(store) if f["kind"] == "away"]
    living = [s for s, alive in enumerate(room.data.game.alive) if alive]
    assert sorted(f["seat"] for f in away) == living
    # all at once, each with its bot taking over (`bot_seat`)
    told = [f for f in frames(store) if f["kind"] in ("away", "bot_seat")][:2 * len(away)]
    assert [f["seq"] for f in told] == list(range(told[0]["seq"], told[0]["seq"] + len(told)))
    assert sorted(f["seat"] for f in told if f["kind"] == "bot_seat") == living


async def test_a_lobby_held_open_closes_at_its_maximum_age(store, clock):
    """One socket connected keeps a lobby from idling out, not for ever (issue 24: held lobbies
    filled every host slot)."""
    timing = LobbyTiming(max_age=1_800_000)
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock, idle_close=600_000, lobby_idle_close=60_000,
                             timing=timing)
    await seat(room, 2)
    await room.presence(0, "gw1", True)
    clock.advance(1_799_999)
    await room.presence(1, "gw1", True)  # still open just before
    assert room.data.status == "lobby"
    clock.advance(1)
    await store.wait_for(lambda: room.closed)
    assert store.rooms[CODE]["status"] == "finished"
    # whoever is connected is told, not left in a lobby that answers room_closed
    assert frames(store)[-1] == {"type": "event", "seq": room.data.seq, "kind": "closed",
                                 "reason": "max_age"}


async def test_a_game_is_not_held_to_the_lobby_s_age(store, clock):
    room = await Room.create(CODE, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock, timing=LobbyTiming(max_age=60_000))
    await seat(room, 6)
    await room.presence(0, "gw1", True)
    await room.command(0, {"type": "start", "id": 1})
    clock.advance(60_000)
    await room.command(0, {"type": "chat", "id": 2, "text": "still here"})
    assert room.data.status == "running"
