"""loadtest.core's BotSeat: the `bots` load model's seat, fed only what its socket is sent. Whole
games through the engine alone, each seat given socket-shaped frames (a lobby welcome, then
`{"type": "event", "seq": ...}` frames of its audience), its client frames sent back as commands."""
from __future__ import annotations

import pytest

from loadtest.core import MODELS, TABLE_MODELS, BotSeat
from rules import RulesError, Settings, act, advance, next_deadline, say, start_game

START = 1_700_000_000_000


def play_frames(players: int, seed: int, max_commands: int = 20_000):
    """(seats, refused, commands, over): one game of BotSeats at socket frames."""
    seats = [BotSeat(s, seed) for s in range(players)]
    for seat in seats:
        seat.welcome({"type": "welcome", "seq": 3, "view": {"room": "R", "status": "lobby"}})
    seq = [3]

    def deliver(events: list[dict]) -> None:
        for event in events:
            seq[0] += 1
            frame = {"type": "event", "seq": seq[0],
                     **{k: v for k, v in event.items() if k != "to"}}
            for seat in seats:
                if event["to"] is None or seat.bot.seat in event["to"]:
                    seat.event(frame)

    now = START
    names = [f"P{i}x1" for i in range(players)]
    state, events = start_game(names, Settings.default(), seed, now)
    deliver(events)
    refused, commands = [], 0
    while state.phase != "over" and commands < max_commands:
        acted = True
        while acted and state.phase != "over":
            acted = False
            for seat in seats:
                for frame in seat.due(now):
                    commands += 1
                    try:
                        if frame["type"] == "act":
                            state, events = act(state, seat.bot.seat, frame["action"],
                                                frame["targets"], now)
                        else:
                            state, events = say(state, seat.bot.seat, frame["text"], now,
                                                channel=frame["channel"])
                    except RulesError as error:
                        refused.append((seat.bot.seat, frame, str(error)))
                        continue
                    deliver(events)
                    acted = True
        times = [t for t in (s.wake_at() for s in seats) if t is not None]
        deadline = next_deadline(state)
        if deadline is not None:
            times.append(deadline)
        if not times:
            break
        now = max(now, min(times))
        if deadline is not None and deadline <= now:
            state, events = advance(state, now)
            deliver(events)
    return seats, refused, commands, state.phase == "over"


def test_the_bots_model_is_a_table_model_played_by_bots():
    assert "bots" in TABLE_MODELS and MODELS["bots"].brain == "bots"
    assert {MODELS[m].brain for m in ("human", "rush", "quickplay")} == {"random"}


@pytest.mark.parametrize("players,seed", [(8, 1), (18, 2)])
def test_bot_seats_play_a_game_from_their_frames_to_its_end(players, seed):
    seats, refused, commands, over = play_frames(players, seed)
    assert over and refused == []
    assert all(seat.over for seat in seats)
    assert commands > players  # they voted and talked
    assert all(seat.due(START * 2) == [] and seat.wake_at() is None for seat in seats)


def test_a_lobby_welcome_and_the_events_it_covers_are_not_a_game():
    seat = BotSeat(0, 1)
    seat.welcome({"type": "welcome", "seq": 5, "view": {"room": "R", "status": "lobby"}})
    seat.event({"type": "event", "seq": 5, "kind": "game_started",
                "seats": [{"seat": 0, "name": "A"}], "roles_in_play": {}})
    assert not seat.playing and seat.due(START) == [] and seat.wake_at() is None
