"""One phone passed around (issue 35 part 1, RULES.md "One phone"): the phone's round paces the
night, the day's clock starts when the phone shows the dawn, and the night's length tells nothing:
whatever the deal, the same steps, each of one turn per living player, each turn as long."""

import pytest

from rules import (BadFrame, NotYourTurn, Settings, act, advance, dawn_shown, round_done,
                   start_game, view)
from rules.registry import STEPS
from rules.table import PHONE_STEP_CAP, PHONE_TURN, Table
from tests.rules.driver import NAMES, T0

SEED_004 = Settings.from_json({"preset": "seed_004"})
EIGHT = NAMES[:8]


def answer_every_prompt(state, now):
    """Every open prompt answered as early as it may be, with its first choices."""
    for p in list(state.prompts):
        if p in state.prompts:  # not closed by an earlier answer
            targets = p["choices"][:max(1, p["min"])] if p["max"] else []
            state, _ = act(state, p["seat"], p["action"], targets, now)
    return state


def night(state, now):
    """Play a night on the phone: each step answered at once, then its round of turns, each
    PHONE_TURN long; returns the state at dawn, the time, and the night's rounds as
    (step, its seconds, turns)."""
    rounds = []
    while state.phase.startswith("night."):
        phase, turns = state.phase, sum(state.alive)
        rounds.append((phase, (state.deadline - now) // 1000, turns))
        state = answer_every_prompt(state, now)
        assert state.phase == phase  # every move made: the step waits for the phone
        now += turns * PHONE_TURN * 1000 - 1
        assert advance(state, now)[0] == state  # the round's time is not up
        state, _ = round_done(state, now, phase, state.day)
    return state, now, rounds


def day(state, now):
    """The phone shows the dawn, the clock runs out, everybody abstains: the next night."""
    state, events = dawn_shown(state, now, state.day)
    assert events == [{"kind": "clock", "to": None, "phase": "day.discussion",
                       "deadline": now + SEED_004.durations["discussion"] * 1000}]
    while not state.phase.startswith("night.") and state.phase != "over":
        now = state.deadline
        state, _ = advance(state, now)
    return state, now


def the_same_two_nights_whatever_the_deal(names, night_of, day_of, **table) -> list[tuple]:
    """Plays the first two nights of 40 deals (`night_of` and `day_of` drive them) and checks
    they are the same steps whatever the deal; returns those steps."""
    nights, deals = set(), set()
    for seed in range(40):
        state, _ = start_game(names, SEED_004, seed, T0, phone=True, **table)
        deals.add(tuple(state.roles))
        state, now, first = night_of(state, T0)
        state, now = day_of(state, now)
        state, now, second = night_of(state, now)
        nights.add((tuple(first), tuple(second)))
    assert len(deals) > 10
    assert len(nights) == 1, nights
    (first, second), = nights
    assert len(second) >= 3, second  # the Seer's, the Guard's, the pack's...
    return [*first, *second]


def test_the_nights_have_the_same_rounds_of_the_same_turns_whatever_the_deal():
    def phone_day(state, now):
        assert state.deadline is None  # the day waits for the phone's dawn
        return day(state, now)

    steps = the_same_two_nights_whatever_the_deal(EIGHT, night, phone_day)
    assert all(seconds == 8 * PHONE_TURN and turns == 8 for _, seconds, turns in steps)


def test_a_step_ends_at_its_deadline_if_the_phone_does_not_come_back():
    state, events = start_game(EIGHT, SEED_004, 1, T0, phone=True)
    phase = state.phase
    assert view(state, 0)["turn"] == events[0]["turn"] == PHONE_TURN
    assert advance(state, state.deadline - 1)[0] == state
    later, _ = advance(state, state.deadline)
    assert later.phase != phase


def test_a_night_step_is_capped_however_many_live():
    state, _ = start_game([f"P{i}" for i in range(20)], SEED_004, 1, T0, phone=True)
    assert state.deadline == T0 + PHONE_STEP_CAP * 1000 < T0 + 20 * PHONE_TURN * 1000


def test_round_done_and_dawn_shown_are_refused_but_on_the_phone_and_in_their_time():
    online, _ = start_game(EIGHT, SEED_004, 1, T0)
    assert view(online, 0)["turn"] is None
    with pytest.raises(NotYourTurn):
        round_done(online, T0, online.phase, 1)
    with pytest.raises(NotYourTurn):
        dawn_shown(online, T0, 1)
    state, _ = start_game(EIGHT, SEED_004, 1, T0, phone=True)
    with pytest.raises(NotYourTurn):  # another step's round
        round_done(state, T0, "night.wolves" if state.phase != "night.wolves" else "night.seer", 1)
    with pytest.raises(NotYourTurn):
        round_done(state, T0, state.phase, 2)
    with pytest.raises(NotYourTurn):  # no dawn yet
        dawn_shown(state, T0, 1)
    state, now, _ = night(state, T0)
    with pytest.raises(NotYourTurn):  # by day
        round_done(state, now, "night.seer", 1)
    shown, _ = dawn_shown(state, now, state.day)
    with pytest.raises(NotYourTurn):  # shown once
        dawn_shown(shown, now + 1, state.day)


# One phone + online (issue 35 part 3, RULES.md "One phone + online"): three of six seats on the
# phone, the other three each on its own device.
SIX = NAMES[:6]
ONLINE = [1, 3, 5]


def hybrid_night(state, now):
    """A night at a table with seats online: each step answered at once (by the phone's seats and
    the online ones alike), then its whole time; returns the state at dawn, the time, and the
    night's steps as (step, its seconds)."""
    steps = []
    while state.phase.startswith("night."):
        phase = state.phase
        steps.append((phase, (state.deadline - now) // 1000))
        state = answer_every_prompt(state, now)
        assert state.phase == phase  # every move made: the step lasts its time
        with pytest.raises(NotYourTurn):  # the phone's round does not end it either
            round_done(state, now, phase, state.day)
        assert advance(state, state.deadline - 1)[0] == state
        now = state.deadline
        state, _ = advance(state, now)
    return state, now, steps


def hybrid_day(state, now):
    """The day waits for the phone's dawn, at most the phone's round (3 seats' turns); the phone
    shows it, the clock runs out, everybody abstains: the next night."""
    assert state.deadline == now + 3 * PHONE_TURN * 1000  # the wait's end, not the discussion's
    return day(state, now)


def test_with_seats_online_the_night_steps_last_the_same_whatever_the_deal():
    steps = the_same_two_nights_whatever_the_deal(SIX, hybrid_night, hybrid_day, online=ONLINE)
    # Each step: its usual time, or the phone's round (its 3 living seats' turns) if longer.
    durations = SEED_004.durations
    for phase, seconds in steps:
        usual = durations[phase.removeprefix("night.")]
        assert seconds == max(usual, 3 * PHONE_TURN), (phase, seconds, usual)
    assert any(seconds == 3 * PHONE_TURN for _, seconds in steps)


def test_the_phone_s_round_counts_its_living_seats_only():
    settings = Settings.from_json({"preset": "seed_004", "durations": {
        "seer": 4, "guard": 4, "wolves": 4, "discussion": 20, "vote": 15}})
    online = list(range(6, 12))
    state, _ = start_game(NAMES[:12], settings, 1, T0, phone=True, online=online)
    assert state.deadline == T0 + 6 * PHONE_TURN * 1000  # 6 seats on the phone, 6 online
    state.alive[0] = state.alive[7] = False  # one of each dies: the next steps know it
    table = Table(state, T0)
    assert table.seconds(STEPS["night.wolves"]) == 5 * PHONE_TURN


def test_the_seats_online_are_some_of_a_table_with_a_phone():
    for phone, online in ((False, [1]), (True, list(range(6))), (True, [6])):
        with pytest.raises(BadFrame):
            start_game(SIX, SEED_004, 1, T0, phone=phone, online=online)


def test_the_online_seats_cannot_start_the_vote_before_the_phone_shows_the_dawn():
    state, _ = start_game(SIX, SEED_004, 1, T0, phone=True, online=ONLINE)
    state, now, _ = hybrid_night(state, T0)
    assert state.phase == "day.discussion"
    for seat in ONLINE + [0]:  # a majority of the six living asks
        state, _ = act(state, seat, "vote.request", [], now)
    assert state.phase == "day.discussion"  # the phone's players have not seen the dawn
    state, events = dawn_shown(state, now + 5000, state.day)
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "clock" and "phase" in kinds and state.phase == "day.vote", kinds


def test_with_seats_online_the_day_waits_for_the_phone_s_dawn_at_most_its_round():
    state, _ = start_game(SIX, SEED_004, 1, T0, phone=True, online=ONLINE)
    state, now, _ = hybrid_night(state, T0)
    assert advance(state, state.deadline - 1)[0] == state
    now = state.deadline  # the phone never showed it (gone, or reloaded)
    state, events = advance(state, now)
    assert state.phase == "day.discussion" and events == [
        {"kind": "clock", "to": None, "phase": "day.discussion",
         "deadline": now + SEED_004.durations["discussion"] * 1000}]
    with pytest.raises(NotYourTurn):  # its dawn comes too late: the clock runs already
        dawn_shown(state, now + 1, state.day)
