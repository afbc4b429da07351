"""Bots play from their seat's frames only, never outside a prompt, and play their cards."""
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings as hsettings, strategies as st

from bots import Bot, Claim, render
from bots.mind import WOLF_CARDS
from bots.policy import POLICIES
from bots.selfplay import NAMES, START, play, village_or_wolves
from rules import ACTIONS, SPECIAL_ROLES, Settings, start_game, view

SEED_000 = Settings.from_json({"preset": "seed_000"})
TABLES = [
    (SEED_000, 8), (SEED_000, 12), (Settings.from_json({"preset": "seed_004"}), 10),
    (Settings.from_json({"preset": "seed_001"}), 10),
    (Settings.from_json({"preset": "seed_002"}), 12),
    (Settings.from_json({"preset": "seed_003_15"}), 15),
    (Settings.from_json({"roles": list(SPECIAL_ROLES[:18])}), 18),
    (Settings.from_json({"roles": ["seer", "witch", "hunter", "guard", *SPECIAL_ROLES[18:]]}), 14),
]


def traced(settings, players, seed, **kwargs):
    """The game and, per seat, its bot's inputs and outputs in order."""
    traces: dict = {}
    game = play(settings, players, seed, trace=lambda seat, what, item:
                traces.setdefault(seat, []).append((what, item)), **kwargs)
    return game, traces


@pytest.mark.parametrize("settings, players", TABLES)
@pytest.mark.parametrize("village, wolves", [("plausible", "plausible"), ("random", "plausible"),
                                             ("plausible", "random")])
def test_bots_act_only_on_their_prompts_and_finish_the_game(settings, players, village, wolves):
    for seed in range(3):
        game = play(settings, players, seed, village_or_wolves(village, wolves))
        assert game.refused == []
        assert game.state.phase == "over"


def common_decisions(a: list, b: list) -> int:
    """While two traces of one seat had the same inputs, their decisions are the same; returns
    how many decisions that compared."""
    compared = 0
    for (what_a, item_a), (what_b, item_b) in zip(a, b):
        if "decision" in (what_a, what_b):
            assert (what_a, item_a) == (what_b, item_b)
            compared += 1
        elif (what_a, item_a) != (what_b, item_b):
            break  # the frames differ from here: so may the decisions
    return compared


# cards that do nothing before the pack's first choice: swapped, the night still looks the same
QUIET = ("villager", "hunter", "witch", "elder", "idiot", "scapegoat")


@hsettings(max_examples=25, deadline=None)
@given(table=st.sampled_from([(SEED_000, 8), (SEED_000, 12),
                              (Settings.from_json({"preset": "seed_003_11"}), 11)]),
       seed=st.integers(0, 10**6), pick=st.integers(0, 10**6))
def test_the_same_frames_with_other_hidden_cards_give_the_same_decisions(table, seed, pick):
    """One deal, and the same deal with two hidden village cards swapped: each seat decides
    alike as long as its frames are alike (the pack all through its first night)."""
    settings, players = table
    names = list(NAMES[:players])
    state, _ = start_game(names, settings, seed, START)
    quiet = [s for s, card in enumerate(state.roles) if card in QUIET]
    pairs = [(x, y) for x in quiet for y in quiet if state.roles[x] < state.roles[y]]
    assume(pairs)
    x, y = pairs[pick % len(pairs)]
    roles = list(state.roles)
    roles[x], roles[y] = roles[y], roles[x]
    swapped = replace(state, roles=roles)
    _, traces_a = traced(settings, players, seed, started=state)
    _, traces_b = traced(settings, players, seed, started=swapped)
    pack_compared = 0
    for seat in range(players):
        compared = common_decisions(traces_a[seat], traces_b[seat])
        if state.roles[seat] in WOLF_CARDS:
            pack_compared += compared
    # its first night was compared: the proposal and the attacker's point (its other wolves
    # may say and do nothing that night)
    assert pack_compared > 0


def seer_days(trace: list):
    """(day, wolf read the night before, alive at the discussion, lines said that day) for each
    discussion the Seer's trace shows."""
    day, found, alive, me = 0, set(), True, None
    days: dict = {}
    for what, item in trace:
        if what == "view":
            me = item["me"]["seat"]
        elif what == "event" and item["kind"] == "phase":
            day = item["day"]
            if item["phase"] == "day.discussion":
                days.setdefault(day, (set(found), alive, []))
        elif what == "event" and item["kind"] == "seer_result" and item["role"] in WOLF_CARDS:
            found.add(item["seat"])
        elif what == "event" and item["kind"] == "death":
            found.discard(item["seat"])
            alive = alive and item["seat"] != me
        elif what == "decision" and item.claim is not None and day in days:
            days[day][2].append(item.claim)
    return days


def test_the_seer_names_the_wolf_she_found_as_the_seer():
    checked = 0
    for seed in range(20):
        game, traces = traced(SEED_000, 12, seed)
        seer = game.dealt.index("seer")
        said: list = []  # a reading is said once a game: that day or before
        for day, (found, alive, claims) in sorted(seer_days(traces[seer]).items()):
            said += claims
            if found and alive:
                checked += 1
                assert any(Claim("wolf", seat=w, role="seer") in said for w in found), \
                    (seed, day, found, claims)
    assert checked > 0


def test_the_guard_protects_a_claimed_seer():
    settings = Settings.from_json({"preset": "seed_003_9"})
    names = [f"p{i}" for i in range(9)]
    state, _ = start_game(names, settings, 3, START)
    guard = state.roles.index("guard")
    seer_claimant, named = (guard + 1) % 9, (guard + 2) % 9
    line = render(Claim("wolf", seat=named, role="seer"), "en", names)
    for bot_seed in range(5):
        bot = Bot(guard, bot_seed)
        bot.see(view(state, guard))
        for event in ({"kind": "phase", "phase": "day.discussion", "day": 1, "deadline": None},
                      {"kind": "chat", "channel": "day", "seat": seer_claimant,
                       "name": names[seer_claimant], "text": line, "ts": START},
                      {"kind": "phase", "phase": "night.guard", "day": 2,
                       "deadline": START + 60_000},
                      {"kind": "prompt", "action": "guard.protect",
                       "choices": [s for s in range(9) if s != guard], "min": 0, "max": 1,
                       "deadline": START + 60_000}):
            bot.observe(event)
        assert bot.decide(START) == []  # it thinks first
        decisions = bot.decide(START + 60_000)
        assert [(d.action, d.targets) for d in decisions] == [("guard.protect", (seer_claimant,))]


def test_the_pack_converges_on_one_victim():
    nights = 0
    for seed in range(10):
        game, traces = traced(SEED_000, 12, seed)
        wolf = next(s for s, card in enumerate(game.dealt) if card in WOLF_CARDS)
        pointing: dict = {}
        for what, item in traces[wolf]:
            if what != "event":
                continue
            if item["kind"] == "pointed":
                pointing[item["seat"]] = item["target"]
            elif item["kind"] == "phase" and pointing:
                nights += 1
                assert len(set(pointing.values())) == 1, (seed, pointing)
                pointing = {}
    assert nights > 0


def test_every_action_of_the_engine_has_its_policy():
    assert set(POLICIES) == set(ACTIONS)


def test_two_bots_voting_each_other_again_end_the_tie_on_the_third_seat():
    """Three alive: a silent wolf and two village bots who voted each other yesterday. A tie
    eliminates nobody, and the silent wolf kills nobody: day after day. Each bot looks at the
    vote again before it closes: one names the third seat, the other joins it."""
    state = start_game(list(NAMES[:6]), SEED_000, 1, START)[0]
    assert state.roles == ["witch", "seer", "werewolf", "cupid", "hunter", "villager"]
    wolf, a, b = 2, 4, 5
    bots = {seat: Bot(seat, 0) for seat in (a, b)}
    deadline = START + 60_000
    opening = [{"kind": "death", "seat": s, "role": state.roles[s], "cause": "vote"}
               for s in (0, 1, 3)]
    yesterday = [{"kind": "phase", "phase": "day.vote", "day": 2, "deadline": START},
                 *({"kind": "voted", "phase": "day.vote", "seat": voter, "target": a + b - voter,
                    "tally": {}} for voter in (a, b)),
                 {"kind": "vote_result", "phase": "day.vote", "target": None, "tie": [a, b]}]
    opening += yesterday
    opening.append({"kind": "phase", "phase": "day.vote", "day": 3, "deadline": deadline})
    for seat, bot in bots.items():
        bot.see(view(state, seat))
        for event in opening:
            bot.observe(event)
        bot.observe({"kind": "prompt", "action": "vote", "min": 0, "max": 1,
                     "choices": [s for s in (wolf, a, b) if s != seat], "deadline": deadline})
        bot.mind.suspicion.update({wolf: -1.0, a + b - seat: 5.0})  # each suspects the other
    ballot: dict = {}
    now, voted_each_other = START, False
    while now < deadline:
        for seat, bot in bots.items():
            for decision in bot.decide(now):
                if decision.action == "vote":
                    ballot[seat] = decision.targets[0]
                    for other in bots.values():
                        other.observe({"kind": "voted", "phase": "day.vote", "seat": seat,
                                       "target": decision.targets[0], "tally": {}})
        voted_each_other |= ballot == {a: b, b: a}
        wakes = [t for t in (bot.wake_at() for bot in bots.values()) if t is not None]
        if not wakes:
            break
        now = max(now + 1, min(wakes))
    assert voted_each_other and ballot == {a: wolf, b: wolf}
