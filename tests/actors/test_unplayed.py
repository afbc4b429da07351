"""A started game nobody plays ends, sockets connected or not (rules/RULES.md, "Unplayed games";
issue 34: one socket held a started game, and its host slot, for ever). MemoryStore, fake clock."""
import itertools

import rules
from actors.lobby import LobbyTiming
from actors.endings import QUIET_DAYS
from actors.room import Room, wakeup
from actors.tables import Kind
from tests.actors.players import act_frames
from tests.actors.rooms import CODE, frames, seat

IDLE = 600_000
TIMING = LobbyTiming(game_idle=IDLE)
STEPS = 300  # timer firings a test lets pass before it calls the game endless


async def started(store, clock, timing=TIMING, settings=None, kind=None, rules_=None) -> Room:
    """Six seats, seat 0's socket connected (held open), the game started."""
    room = await Room.create(CODE, settings=settings or rules.Settings.default(), host="h1",
                             store=store, clock=clock, timing=timing, kind=kind)
    await seat(room, 6)
    await room.presence(0, "gw1", True)
    if rules_:
        frame = {"type": "settings", "id": "r", "rules": rules_}
        assert (await room.command(0, frame))["type"] == "ack"
    if kind is None:
        assert (await room.command(0, {"type": "start", "id": "go"}))["type"] == "ack"
    else:  # a public table starts by itself at its countdown's end
        clock.advance(wakeup(room.data, None, None, timing) - clock.now())
        await store.wait_for(lambda: room.data.status == "running")
    return room


async def next_timer(room: Room, store, timing=TIMING) -> None:
    """Let the room's next timer fire and wait for what it wrote."""
    seq = room.data.seq
    clock_now = room._clock.now()
    room._clock.advance(wakeup(room.data, None, None, timing) - clock_now)
    await store.wait_for(lambda: room.data.seq > seq or room.closed)


async def answer_every_step(room: Room, ids) -> None:
    """Every seat answers its open prompts, and again while an answer ends a step: the next
    step's prompts too (left to their timer, a 1-wolf endgame's pack and vote went unanswered
    night after night, and the game never ended: 1 run in 25)."""
    while not room.closed:
        phase = room.data.game.phase
        for s in range(6):
            for frame in act_frames(room.data.view(s), ids):
                await room.command(s, frame)
        if room.closed or room.data.game.phase == phase:
            return


def closed_reason(store) -> str | None:
    last = frames(store)[-1]
    return last["reason"] if last["kind"] == "closed" else None


async def test_a_timed_game_nobody_plays_ends_after_two_quiet_days_with_a_socket_connected(
        store, clock):
    room = await started(store, clock)
    dealt = clock.now()
    for _ in range(STEPS):
        if room.closed:
            break
        await next_timer(room, store)
    assert room.closed and room.data.players[0].connected  # the socket never left
    assert closed_reason(store) == "unplayed"
    assert store.rooms[CODE]["status"] == "finished" and CODE not in store.hosted["h1"]
    assert rules.outcome(room.data.game) is None
    # It ended at the dusk closing its second whole day, not before its idle time.
    assert room.data.game.day == QUIET_DAYS + 1 and clock.now() >= dealt + IDLE


async def test_a_game_without_a_discussion_timer_ends_once_its_table_falls_silent(store, clock):
    room = await started(store, clock, rules_={"discussion_timer": "off"})
    while rules.next_deadline(room.data.game) is not None:  # the night runs on its timers
        await next_timer(room, store)
    dawn = clock.now()
    assert wakeup(room.data, None, None, TIMING) == dawn + IDLE  # the night does not count
    clock.advance(IDLE - 1)
    living = room.data.game.alive.index(True)
    chat = {"type": "chat", "id": "c", "text": "anyone?"}
    assert (await room.command(living, chat))["type"] == "ack"  # a day's line: heard
    spoke = clock.now()
    assert room.data.status == "running"
    assert wakeup(room.data, None, None, TIMING) == spoke + IDLE
    clock.advance(IDLE)
    await store.wait_for(lambda: room.closed)
    assert closed_reason(store) == "unplayed" and CODE not in store.hosted["h1"]


async def test_a_night_act_does_not_move_the_end(store, clock):
    """Only what the whole table sees counts: the end of a silent game tells nobody that a
    night role acted, nor when."""
    room = await started(store, clock, rules_={"discussion_timer": "off"})
    heard = room.data.played_at, room.data.played_day
    secret = next(s for s in range(6) if room.data.view(s).get("prompts"))
    frame = act_frames(room.data.view(secret), itertools.count())[0]
    clock.advance(1000)
    assert (await room.command(secret, frame))["type"] == "ack"
    assert (room.data.played_at, room.data.played_day) == heard


async def test_a_table_that_plays_is_never_unplayed(store, clock):
    """Every seat answers what it is asked, nobody chats: the game runs to its outcome."""
    room = await started(store, clock)
    ids = itertools.count()
    for _ in range(STEPS):
        if room.closed:
            break
        await answer_every_step(room, ids)
        if not room.closed:
            await next_timer(room, store)
    assert room.closed and rules.outcome(room.data.game) is not None
    assert "closed" not in [f["kind"] for f in frames(store)]


async def test_a_game_lasts_at_most_its_maximum_age(store, clock):
    timing = LobbyTiming(game_idle=IDLE, game_max_age=3_600_000)
    room = await started(store, clock, timing, rules_={"discussion_timer": "off"})
    opened = room.data.opened_at
    while rules.next_deadline(room.data.game) is not None:
        await next_timer(room, store, timing)
    living = room.data.game.alive.index(True)
    for i in itertools.count():  # a seat that chats now and then keeps the game from idling
        if clock.now() + IDLE // 2 >= opened + 3_600_000:
            break
        clock.advance(IDLE // 2)
        line = {"type": "chat", "id": i, "text": "hm"}
        assert (await room.command(living, line))["type"] == "ack"
    assert wakeup(room.data, None, None, timing) == opened + 3_600_000
    clock.advance(opened + 3_600_000 - clock.now())
    await store.wait_for(lambda: room.closed)
    assert closed_reason(store) == "game_max_age" and CODE not in store.hosted["h1"]


async def test_an_unplayed_public_game_leaves_the_list(store, clock):
    kind = Kind("seed_000", "en")
    timing = LobbyTiming(countdown=1000, game_idle=IDLE)
    room = await started(store, clock, timing, settings=kind.settings(), kind=kind)
    assert CODE in store.tables.running[kind]
    for _ in range(STEPS):
        if room.closed:
            break
        await next_timer(room, store, timing)
    assert closed_reason(store) == "unplayed"
    assert CODE not in store.tables.running[kind] and CODE not in store.hosted["h1"]
