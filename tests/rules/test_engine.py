"""The API: dealing, the flow of phases and deadlines, and errors that change nothing."""

import copy
import json
from collections import Counter

import pytest

from rules import (BadFrame, IllegalTarget, NotYourTurn, RoomClosed, Settings, act, advance,
                   next_deadline, outcome, roles_in_play, say, start_game)
from tests.rules.driver import EIGHT_SEATS, Game, NAMES, T0

DEAL = EIGHT_SEATS


def test_the_deal_is_random_from_the_seed_and_holds_the_public_roles_in_play():
    settings = Settings.default()
    deals = set()
    for seed in range(10):
        state, _ = start_game(NAMES[:9], settings, seed, T0)
        assert Counter(state.roles) == Counter(roles_in_play(9, settings))
        deals.add(tuple(state.roles))
    assert len(deals) > 5
    again, _ = start_game(NAMES[:9], settings, 3, T0)
    assert again == start_game(NAMES[:9], settings, 3, T0)[0]


def test_starting_tells_each_seat_only_its_own_card_and_the_wolves_each_other():
    state, events = start_game(NAMES[:8], Settings.default(), 11, T0)
    assert events[0] == {"kind": "game_started", "to": None,
                         "seats": [{"seat": i, "name": n} for i, n in enumerate(NAMES[:8])],
                         "roles_in_play": roles_in_play(8, Settings.default())}
    cards = [e for e in events if e["kind"] == "role"]
    assert [(e["to"], e["role"]) for e in cards] == [([i], r) for i, r in enumerate(state.roles)]
    wolves = [i for i, r in enumerate(state.roles) if r == "werewolf"]
    assert {"kind": "wolves", "to": wolves, "wolves": wolves} in events
    phase = next(e for e in events if e["kind"] == "phase")
    assert phase == {"kind": "phase", "to": None, "phase": "night.cupid", "day": 1,
                     "deadline": T0 + 30_000}
    assert events[-1]["kind"] == "prompt" and events[-1]["to"] == [state.roles.index("cupid")]


def test_the_first_night_starts_with_the_first_role_in_play():
    state, _ = start_game(NAMES[:6], Settings.from_json({"roles": ["witch"]}), 1, T0)
    assert state.phase == "night.wolves"


@pytest.mark.parametrize("names", [NAMES[:5], NAMES + ["Extra"], "Layla", [1] * 6])
def test_a_table_needs_six_to_eighteen_named_players(names):
    with pytest.raises(BadFrame):
        start_game(names, Settings.default(), 1, T0)


def test_a_set_up_deal_must_hold_the_cards_in_play():
    with pytest.raises(BadFrame):
        start_game(NAMES[:8], Settings.default(), 1, T0, deal=["villager"] * 8)


def test_every_event_is_json():
    game = Game(DEAL)
    game.night(link=[3, 5], inspect=0, victim=3)
    game.act(3, "hunter.shoot", [1])
    game.say(4, "who?")
    game.elect(2)
    assert json.loads(json.dumps(game.log)) == game.log


def test_a_phase_ends_at_its_deadline_and_not_before():
    game = Game(DEAL)
    assert next_deadline(game.state) == T0 + 30_000
    state, events = advance(game.state, T0 + 29_999)
    assert state is game.state and events == []
    state, events = advance(game.state, T0 + 30_000)
    assert state.phase == "night.seer" and state.deadline == T0 + 60_000
    assert events[0] == {"kind": "prompt_closed", "to": [4], "action": "cupid.link"}


def test_a_late_advance_starts_the_next_phase_from_now():
    game = Game(DEAL)
    state, _ = advance(game.state, T0 + 100_000)
    assert state.phase == "night.seer" and state.deadline == T0 + 130_000


def test_durations_come_from_the_settings():
    game = Game(DEAL, durations={"cupid": 5, "seer": 7})
    assert game.state.deadline == T0 + 5_000
    game.timeout()
    assert game.state.deadline == T0 + 12_000
    assert game.prompts(1)[0]["deadline"] == T0 + 12_000


def refused(state, seat, action, targets, error):
    before = copy.deepcopy(state.to_json())
    with pytest.raises(error) as raised:
        act(state, seat, action, targets, T0)
    assert state.to_json() == before
    return str(raised.value)


def test_a_command_from_the_wrong_seat_is_not_your_turn_and_names_the_phase():
    game = Game(DEAL)
    message = refused(game.state, 1, "cupid.link", [1, 2], NotYourTurn)
    assert "cupid.link" in message and "night.cupid" in message
    refused(game.state, 4, "seer.inspect", [1], NotYourTurn)


def test_malformed_commands_are_bad_frames():
    game = Game(DEAL)
    refused(game.state, 4, "cupid.kiss", [1, 2], BadFrame)
    refused(game.state, 4, None, [1, 2], BadFrame)
    refused(game.state, 4, "cupid.link", "1,2", BadFrame)
    refused(game.state, 4, "cupid.link", [1, "2"], BadFrame)
    refused(game.state, 4, "cupid.link", [1, True], BadFrame)
    refused(game.state, 8, "cupid.link", [1, 2], BadFrame)
    refused(game.state, -1, "cupid.link", [1, 2], BadFrame)
    refused(game.state, "4", "cupid.link", [1, 2], BadFrame)


def test_targets_outside_the_prompt_are_illegal():
    game = Game(DEAL)
    refused(game.state, 4, "cupid.link", [1, 8], IllegalTarget)
    refused(game.state, 4, "cupid.link", [1, -1], IllegalTarget)
    refused(game.state, 4, "cupid.link", [1, 1], IllegalTarget)


def test_after_the_game_every_command_is_refused_as_room_closed():
    game = Game(["werewolf", "villager", "villager", "villager", "villager", "villager"])
    game.night(victim=None)
    game.elect(None)
    game.vote_out(0)
    assert outcome(game.state).reason == "no_wolves_alive"
    refused(game.state, 1, "vote", [2], RoomClosed)
    with pytest.raises(RoomClosed):
        say(game.state, 1, "gg", T0)
    assert advance(game.state, T0 + 10**9) == (game.state, [])
    assert next_deadline(game.state) is None


def test_commands_never_change_the_state_they_are_given():
    game = Game(DEAL)
    before = copy.deepcopy(game.state.to_json())
    act(game.state, 4, "cupid.link", [1, 2], T0)
    say(game.state, 0, "psst", T0)
    advance(game.state, T0 + 10**6)
    assert game.state.to_json() == before


def test_a_command_after_the_deadline_counts_until_the_deadline_is_fired():
    game = Game(DEAL)
    game.now = game.state.deadline + 1
    game.act(4, "cupid.link", [1, 2])
    assert game.phase == "night.seer" and game.events("lovers")
