"""Bots at a room's seats (actors.bot_seats), with the in-memory store and the fake clock only."""
import asyncio
import itertools
import secrets
from types import SimpleNamespace

import orjson

import rules
from actors import lobby
from actors.lobby import LobbyTiming
from actors.room import Room
from actors.memory_store import MemoryStore
from bots import Bot
from tests.actors.players import act_frames

CODE = "BOTSAA"


async def new_room(store, clock, code=CODE, make_bot=None, **options) -> Room:
    return await Room.create(code, settings=rules.Settings.default(), host="h1", store=store,
                             clock=clock, make_bot=make_bot, **options)


def frames(store: MemoryStore, code=CODE) -> list[dict]:
    return [orjson.loads(orjson.loads(raw)["frame"]) for raw in store.logs.get(code, [])]


def stored(store: MemoryStore, code=CODE) -> list[dict]:
    return [orjson.loads(raw) for raw in store.logs.get(code, [])]


async def settle(room: Room) -> None:
    """Let the room and its bots run until nothing is queued or in flight."""
    quiet = 0
    while quiet < 5:
        await asyncio.sleep(0)
        quiet = 0 if room.backlog or not room.bots.settled else quiet + 1


async def play_out(room: Room, clock, limit_ms: int = 6 * 3600_000, until=lambda: False,
                   human: int | None = None) -> None:
    """Move the fake clock from one due time to the next (the room's timer, a bot's) until the
    game is over (or `until()`). `human`: a seat that answers its prompts at once, the simplest
    legal way (an idle seat can stall a game: a silent wolf kills nobody)."""
    end = clock.now() + limit_ms
    ids = itertools.count()
    await settle(room)
    while room.data.status == "running" and clock.now() < end and not until():
        if human is not None:
            for frame in act_frames(room.welcome(human)["view"], ids):
                await room.command(human, frame)
            await settle(room)
        due = [t for t in (room._armed, room.bots.next_wake()) if t is not None]
        clock.advance(max(1, min(due, default=clock.now() + 1000) - clock.now()))
        await settle(room)


async def host_with_bots(store, clock, bots: int, **options) -> Room:
    room = await new_room(store, clock, **options)
    assert await room.join("Layla", "hash0") == {"seat": 0}
    for _ in range(bots):
        assert (await room.command(0, {"type": "add_bot"}))["type"] == "ack"
    return room


async def test_the_host_adds_and_removes_bots(store, clock):
    room = await host_with_bots(store, clock, 3)
    lobby = room.data.lobby()
    assert [p["bot"] for p in lobby["players"]] == [False, True, True, True]
    names = [p["name"] for p in lobby["players"]]
    assert len(set(names)) == 4
    joined = [f for f in frames(store) if f["kind"] == "joined"]
    assert [f["bot"] for f in joined] == [False, True, True, True]
    assert (await room.command(0, {"type": "remove_bot", "seat": 1}))["type"] == "ack"
    removed = frames(store)[-1]
    assert (removed["kind"], removed["seat"], removed["moved"]) == ("removed", 1, 3)
    assert [p.name for p in room.data.players] == [names[0], names[3], names[2]]


async def test_only_the_host_of_a_private_lobby_handles_bots(store, clock):
    room = await host_with_bots(store, clock, 1)
    assert await room.join("Omar", "hash1") == {"seat": 1}  # takes the bot's seat
    assert (await room.command(1, {"type": "add_bot"}))["code"] == "not_host"
    assert (await room.command(0, {"type": "remove_bot", "seat": 1}))["code"] == "illegal_target"
    assert (await room.command(0, {"type": "remove_bot", "seat": 0}))["code"] == "illegal_target"
    assert (await room.command(0, {"type": "table", "public": True}))["type"] == "ack"
    assert (await room.command(0, {"type": "add_bot"}))["code"] == "not_host"


async def test_a_human_takes_a_bot_s_seat_in_the_lobby(store, clock):
    room = await host_with_bots(store, clock, 2)
    bot_name = room.data.players[1].name
    assert await room.join("Omar", "hash1") == {"seat": 1}
    assert [(p.name, p.bot) for p in room.data.players][:2] == [("Layla", False), ("Omar", False)]
    assert len(room.data.players) == 3 and room.data.players[2].bot
    last = frames(store)[-1]
    assert (last["kind"], last["seat"], last["name"], last["bot"]) == ("joined", 1, "Omar", False)
    assert bot_name != "Omar"
    # a full table of bots still seats a human
    for _ in range(15):
        assert (await room.command(0, {"type": "add_bot"}))["type"] == "ack"
    assert (await room.command(0, {"type": "add_bot"}))["code"] == "not_your_turn"
    assert await room.join("Zoe", "hash2") == {"seat": 2}
    assert len(room.data.players) == 18


async def test_the_host_leaving_takes_the_bots_so_a_human_stays_host(store, clock):
    room = await host_with_bots(store, clock, 2)
    await room.join("Omar", "hash1")  # seat 1, a bot's
    assert (await room.command(0, {"type": "leave"}))["type"] == "ack"
    assert [(p.name, p.bot) for p in room.data.players] == [("Omar", False)]


async def test_a_bot_seat_is_stored_and_an_old_snapshot_seats_humans(store, clock):
    room = await host_with_bots(store, clock, 1)
    room.close()
    loaded = await Room.load(CODE, host="h2", store=store, clock=clock)
    assert [p.bot for p in loaded.data.players] == [False, True]
    loaded.close()
    snapshot = orjson.loads(store.snapshots[CODE])
    for player in snapshot["players"]:
        player.pop("bot", None)
    store.snapshots[CODE] = orjson.dumps(snapshot)
    old = await Room.load(CODE, host="h3", store=store, clock=clock)
    assert [p.bot for p in old.data.players] == [False, False]
    old.close()


async def test_a_room_loaded_mid_game_rebuilds_its_bots_from_their_views(store, clock):
    Watched.fed = []
    room = await host_with_bots(store, clock, 7, make_bot=Watched)
    await room.command(0, {"type": "start"})
    room.close()
    Watched.fed = []
    loaded = await Room.load(CODE, host="h2", store=store, clock=clock, make_bot=Watched)
    assert loaded.bots.seats == set(range(1, 8))
    assert sorted(s for s, kind, _ in Watched.fed if kind == "view") == list(range(1, 8))
    await play_out(loaded, clock, human=0)
    assert loaded.data.status == "finished" and loaded.bots.refused == []


async def test_a_public_table_with_one_human_fills_with_bots_and_deals_at_its_countdown(store,
                                                                                       clock):
    room = await new_room(store, clock)
    await room.join("Layla", "hash0")
    assert (await room.command(0, {"type": "table", "public": True, "language": "en"}))[
        "type"] == "ack"
    starts_at = room.data.starts_at
    assert starts_at == clock.now() + 30_000  # from the first seat
    clock.advance(29_999)
    await settle(room)
    assert room.data.status == "lobby"
    clock.advance(1)
    await store.wait_for(lambda: room.data.status == "running")
    assert [p.bot for p in room.data.players] == [False] + [True] * 7
    assert room.data.listing().bots == 7
    kinds = [f["kind"] for f in frames(store)]
    assert kinds.count("joined") == 8 and "game_started" in kinds
    room.close()


async def test_a_game_of_17_bots_and_1_human_ends_with_a_winner(store, clock):
    room = await host_with_bots(store, clock, 17)
    assert (await room.command(0, {"type": "start"}))["type"] == "ack"
    await play_out(room, clock, human=0)
    assert room.data.status == "finished"
    over = frames(store)[-1]
    assert over["kind"] == "game_over" and over["winners"]
    assert room.bots.sent > 100 and room.bots.refused == []


async def test_bots_never_act_outside_a_prompt_over_many_seeded_games(store, clock):
    sent = 0
    for game in range(24):  # 6 to 17 seats, all of them bots once the host leaves
        code = f"MANY{game:02d}"
        room = await new_room(store, clock, code=code)
        await room.join("Layla", "hash0")
        for _ in range(5 + game % 12):
            await room.command(0, {"type": "add_bot"})
        await room.command(0, {"type": "start"})
        assert (await room.command(0, {"type": "leave"}))["type"] == "ack"
        await play_out(room, clock)
        assert room.data.status == "finished", code
        assert room.bots.refused == [], code
        sent += room.bots.sent
    assert sent > 500


class Watched(Bot):
    """A bot that writes down everything it is fed."""
    fed: list = []

    def see(self, view):
        Watched.fed.append((self.seat, "view", view))
        super().see(view)

    def observe(self, event):
        Watched.fed.append((self.seat, "event", event))
        super().observe(event)


async def test_a_bot_is_fed_exactly_its_seat_s_frames(store, clock):
    Watched.fed = []
    room = await host_with_bots(store, clock, 11, make_bot=Watched)
    await room.command(0, {"type": "start"})
    dealt = room.data.seq  # the deal's write: each bot starts from its seat's view of it
    await play_out(room, clock, human=0)
    assert room.data.status == "finished"
    log = stored(store)
    for seat in range(1, 12):
        views = [what for s, kind, what in Watched.fed if s == seat and kind == "view"]
        assert len(views) == 1 and views[0]["me"]["seat"] == seat
        # then every frame its socket would get after that write, as that socket gets it
        audience = [orjson.loads(item["frame"]) for item in log if item["seq"] > dealt
                    and (item["to"] is None or seat in item["to"])]
        fed = [what for s, kind, what in Watched.fed if s == seat and kind == "event"]
        assert fed == audience
    assert len(Watched.fed) > 200


async def test_a_seat_that_leaves_mid_game_is_bot_played_and_its_player_takes_it_back(store,
                                                                                     clock):
    room = await host_with_bots(store, clock, 6)
    assert await room.join("Omar", "hash6") == {"seat": 1}  # a bot's
    await room.presence(1, "g1", True)
    await room.command(0, {"type": "start"})
    assert (await room.command(1, {"type": "leave"}))["type"] == "ack"
    told = frames(store)[-1]
    assert (told["kind"], told["seat"], told["bot"]) == ("bot_seat", 1, True)
    assert room.data.lobby()["players"][1]["bot"] and 1 in room.bots.seats
    assert (await room.command(1, {"type": "leave"}))["code"] == "not_your_turn"
    await room.presence(1, "g1", False)
    await room.presence(1, "g1", True)  # the player is back
    assert not room.data.players[1].bot and 1 not in room.bots.seats
    back = [f for f in frames(store) if f["kind"] == "bot_seat"][-1]
    assert (back["seat"], back["bot"]) == (1, False)
    # a command of the seat takes it back too
    clock.advance(10_000)  # a leave a 10 s (the third)
    assert (await room.command(1, {"type": "leave"}))["type"] == "ack"
    assert room.data.players[1].bot
    reply = await room.command(1, {"type": "chat", "text": "back"})
    assert not room.data.players[1].bot
    assert reply["type"] in ("ack", "error")
    room.close()


async def test_a_game_with_no_human_connected_closes_after_idle_close(store, clock):
    room = await host_with_bots(store, clock, 7, idle_close=90_000)
    await room.presence(0, "g1", True)
    await room.command(0, {"type": "start"})
    await room.command(0, {"type": "leave"})
    await room.presence(0, "g1", False)
    gone = clock.now()
    await play_out(room, clock)
    assert room.data.status == "finished"
    assert frames(store)[-1] == {"type": "event", "seq": room.data.seq, "kind": "closed",
                                 "reason": "idle"}
    assert clock.now() == gone + 90_000


async def public_game_with_an_away_seat(store, clock) -> tuple[Room, str]:
    """A public table of one human and 7 bots where the human let the votes pass: away, and a
    bot plays the seat. (The deal is random: a human killed the first night is never away, so
    tables are tried until one has its human turn away.)"""
    for attempt in range(20):
        code = f"AWAY{attempt:02d}"
        room = await new_room(store, clock, code=code)
        await room.join("Layla", "hash0")
        await room.presence(0, "g1", True)
        await room.command(0, {"type": "table", "public": True, "language": "en"})
        clock.advance(30_000)
        await store.wait_for(lambda: room.data.status == "running")
        await play_out(room, clock, until=lambda: room.data.players[0].bot)
        if room.data.status == "running":
            return room, code
        room.close()
    raise AssertionError("no table of 20 had its human turn away")


def told_of(store, code: str, seat: int) -> list[tuple[str, bool]]:
    return [(f["kind"], f["away"] if f["kind"] == "away" else f["bot"])
            for f in frames(store, code) if f["kind"] in ("away", "bot_seat") and f["seat"] == seat]


async def test_a_public_game_s_away_seat_is_played_by_a_bot_and_stays_away(store, clock):
    room, code = await public_game_with_an_away_seat(store, clock)
    assert told_of(store, code, 0) == [("away", True), ("bot_seat", True)]
    assert 0 in room.bots.seats
    await play_out(room, clock)
    assert room.data.status == "finished"
    # its bot answered for it, and the seat stayed away all along: its player was
    assert told_of(store, code, 0) == [("away", True), ("bot_seat", True)]
    assert room.bots.refused == []


async def test_an_away_seat_s_player_takes_it_back_and_is_back(store, clock):
    room, code = await public_game_with_an_away_seat(store, clock)
    await room.command(0, {"type": "chat", "text": "sorry, back"})
    assert not room.data.players[0].bot and 0 not in room.bots.seats
    assert not room.data.players[0].away
    assert told_of(store, code, 0) == [("away", True), ("bot_seat", True), ("bot_seat", False),
                                 ("away", False)]
    room.close()


class Broken(Bot):
    def decide(self, now):
        raise RuntimeError("a bug in a bot")


async def test_a_bot_s_bug_costs_its_seat_its_bot_not_the_room(store, clock):
    room = await host_with_bots(store, clock, 6, make_bot=Broken)
    await room.command(0, {"type": "start"})
    dealt = room.data.seq
    await play_out(room, clock, limit_ms=600_000)
    # nobody plays (a private game has no away rule): its timers run on, the room is whole
    assert room.data.status == "running" and room.data.seq > dealt + 10
    assert room.bots.sent == 0 and room.bots.seats == set()
    room.close()


async def test_the_bots_speak_the_table_s_language(store, clock):
    room = await new_room(store, clock)
    await room.join("Layla", "hash0")
    await room.command(0, {"type": "table", "public": True, "language": "vi"})
    clock.advance(30_000)
    await store.wait_for(lambda: room.data.status == "running")
    assert room.bots.language == "vi" and {b.language for b in room.bots._bots.values()} == {"vi"}
    room.close()


async def test_a_bot_is_seated_as_a_bot_again_at_its_table_s_next_game(store, clock):
    """`RoomClient.again` joins every seat of the finished table with its token hash."""
    first = await host_with_bots(store, clock, 2)
    again = await new_room(store, clock, code="NEXTGM")
    for player in first.data.players:
        await again.join(player.name, player.token_hash)
    assert [(p.name, p.bot) for p in again.data.players] == [
        (p.name, p.bot) for p in first.data.players]
    first.close()
    again.close()


async def silent_human(store, clock, seed: int, monkeypatch) -> Room:
    """A private table of 6 dealt with `seed`: its human (seat 0) connected and silent, 5 bots."""
    monkeypatch.setattr(lobby, "secrets", SimpleNamespace(randbits=lambda bits: seed,
                                                          token_hex=secrets.token_hex))
    timing = LobbyTiming(game_idle=600_000, game_max_age=4 * 3600_000)
    room = await host_with_bots(store, clock, 5, code=f"SILENT{seed}", timing=timing)
    await room.presence(0, "g1", True)
    assert (await room.command(0, {"type": "start"}))["type"] == "ack"
    return room


async def test_a_silent_wolf_and_bots_end_in_minutes_not_at_the_game_s_maximum_age(
        store, clock, monkeypatch):
    """Deals where the human is the wolf and says nothing: the bots broke no tie and their
    votes counted as the table heard, so these played on to the 4 h limit (the Seer voting the
    wolf, the wolf's lover the Seer, the wolf the mayor: day after day a tie nobody breaks)."""
    ends = []
    for seed in (8, 318, 326):
        room = await silent_human(store, clock, seed, monkeypatch)
        assert room.data.game.roles[0] == "werewolf"
        dealt = clock.now()
        await play_out(room, clock)
        last = frames(store, room.code)[-1]
        ends.append(last["kind"] if last["kind"] == "game_over" else last["reason"])
        assert clock.now() - dealt < 1_800_000 and room.data.played_at == dealt
    assert "unplayed" in ends and set(ends) <= {"game_over", "unplayed"}


async def test_once_bots_play_every_living_seat_their_commands_are_the_table_heard(
        store, clock, monkeypatch):
    room = await silent_human(store, clock, 8, monkeypatch)
    dealt = clock.now()
    assert (await room.command(0, {"type": "leave"}))["type"] == "ack"  # a bot plays it now
    await play_out(room, clock)
    assert frames(store, room.code)[-1]["kind"] == "game_over"
    assert room.data.played_at > dealt
