"""Properties over thousands of random games: random tables (random mixes of every special role,
as many seats as they need up to 18, random house rules), random legal and illegal commands,
random chat and timeouts.

RULES_GAMES sets the number of games (default 2000, the CI figure)."""

import os
import random

import orjson

from hypothesis import HealthCheck, given, settings, strategies as st

from rules import (ACTIONS, SETTINGS, BadSettings, SPECIAL_ROLES, GameState, RulesError,
                   Settings, act, advance, min_players, say, start_game, view)
from rules.registry import STEPS
from rules.settings import max_players

GAMES = int(os.environ.get("RULES_GAMES", "2000"))
T0 = 1_700_000_000_000
MAX_COMMANDS = 3000  # far above the longest random game; reaching it means a game that never ends
# the commands of death reactions (the only ones the dead make) -> the pending kind they answer
DEATH_REACTIONS = {action: step.phase for step in STEPS.values() if step.reaction
                   for action in step.actions}
MALFORMED = [None, "1", 1.5, True, [1], {"seat": 1}]
# the oracle's own reading of the spec: the pack's cards, and the cards of no village side
PACK = {"werewolf", "trickster_wolf"}
TEAM = {"werewolf": "wolves", "trickster_wolf": "wolves", "piper": "piper",  # else "village"
        "traitor": "wolves", "fox": "fox"}
PLAIN = {"villager", "thief"}  # no power: a Thief who stole nothing is a plain villager (O9)
PRIVATE_ROLE_FIELDS = {"wolves": PACK, "pointing": PACK, "seer_results": {"seer"},
                       "witch": {"witch"}, "linked": {"cupid"}, "guard": {"guard"},
                       "little_girl": {"little_girl"}, "medium_results": {"medium"},
                       "pack": {"traitor"}, "lover_pair": {"lover"}}


def play(n: int, table: Settings, seed: int, rng: random.Random):
    """A random game, checked command by command; returns (start, commands, events, state)."""
    names = [f"p{i}" for i in range(n)]
    state, events = start_game(names, table, seed, T0)
    start = (names, table, seed, T0)
    commands, log = [], list(events)
    check_events(state, state, events)
    check_views(state, list(range(n)))
    now = T0
    while state.phase != "over":
        assert len(commands) < MAX_COMMANDS, "the game does not end"
        now += rng.choice((0, 0, 500, 5000))
        before = state
        command = choose(rng, state, now)
        snapshot = orjson.dumps(vars(state)) if rng.random() < 0.3 else None
        try:
            state, events = run(state, command)
        except RulesError:
            continue
        finally:
            # Refused or not, the state a command was given is never changed.
            assert snapshot is None or orjson.dumps(vars(before)) == snapshot
        commands.append(command)
        log += events
        if command[0] == "advance":  # every running phase has a deadline in the future
            # (004's discussion may have no timer at all)
            assert state.phase == "over" or state.deadline is None or state.deadline > command[1]
        check_command(before, state, command)
        check_events(before, state, events)
        if state.phase != before.phase or rng.random() < 0.05:
            check_views(state, rng.sample(range(n), 4))
            assert GameState.from_json(orjson.loads(orjson.dumps(state.to_json()))) == state
    return start, commands, log, state


def choose(rng: random.Random, state: GameState, now: int) -> tuple:
    n = len(state.roles)
    roll = rng.random()
    if roll < 0.6 and state.prompts:
        prompt = rng.choice(state.prompts)
        k = rng.randint(prompt["min"], min(prompt["max"], len(prompt["choices"])))
        return ("act", prompt["seat"], prompt["action"], rng.sample(prompt["choices"], k), now)
    if roll < 0.72:  # anything at all: mostly illegal
        return ("act", rng.randrange(-1, n + 1), rng.choice(sorted(ACTIONS) + ["oops"]),
                rng.sample(range(-1, n + 1), rng.randint(0, 3)), now)
    if roll < 0.75:  # malformed shapes
        return ("act", rng.choice(MALFORMED + [0]), rng.choice(MALFORMED + ["vote"]),
                rng.choice(MALFORMED + [[None], []]), now)
    if roll < 0.85:
        return ("say", rng.choice(range(n) if rng.random() < 0.95 else MALFORMED),
                rng.choice(["hi", " ", "x" * 501, "wolf!", None, 5]), now)
    return ("advance", max(now, state.deadline or now))


def run(state: GameState, command: tuple):
    if command[0] == "act":
        return act(state, *command[1:])
    if command[0] == "say":
        return say(state, *command[1:])
    return advance(state, command[1])


def check_command(before: GameState, after: GameState, command: tuple) -> None:
    if command[0] != "act":
        return
    _, seat, action, targets, _ = command
    last = before.memo.get("guard")
    if action == "guard.protect" and targets and last and last["night"] == before.day - 1 \
            and before.settings["rules"]["guard_repeat"] == "forbidden":
        assert targets != [last["seat"]]  # never the same seat two nights running
    if not before.alive[seat]:
        # The dead act only to shoot (hunter) or name a successor (mayor) as they die.
        assert {"kind": DEATH_REACTIONS[action], "seat": seat} in before.pending


def check_events(before: GameState, after: GameState, events: list) -> None:
    roles = after.roles
    wolves = {s for s, r in enumerate(roles) if r in PACK}
    for event in events:
        kind, to = event["kind"], event["to"]
        orjson.dumps(event)  # also refuses non-string keys
        if kind in ("role", "prompt", "prompt_closed", "seer_result", "witch_victim",
                    "medium_result", "traitor_pack"):
            assert len(to) == 1
        if kind == "role":
            assert roles[to[0]] == event["role"]
        elif kind == "seer_result":
            assert roles[to[0]] == "seer"
        elif kind == "witch_victim":
            assert roles[to[0]] == "witch"
        elif kind in ("wolves", "pointed"):
            assert set(to) <= wolves
        elif kind == "lovers":
            assert set(to) <= set(event["lovers"]) | {roles.index("cupid")}
        elif kind == "chat":
            channel = event["channel"]
            if channel == "wolves":
                assert set(to) <= wolves and all(before.alive[s] for s in to)
            elif channel == "dead":
                assert not any(after.alive[s] for s in to)
            else:
                assert to is None
        elif kind == "death":
            # the card shows unless the rule for its cause hides it until the end (004)
            rule = "reveal_exile" if event["cause"] in ("vote", "scapegoat") \
                else "reveal_night_deaths"
            hidden = after.settings["rules"][rule] == "no"
            assert to is None and event["role"] == (None if hidden else roles[event["seat"]])
            assert not after.alive[event["seat"]]
        elif kind == "medium_result":
            assert roles[to[0]] == "medium" and not after.alive[event["seat"]]
        elif kind == "traitor_pack":
            assert roles[to[0]] == "traitor" and set(event["wolves"]) == wolves
        elif kind == "lover_pair":
            assert set(to) == set(event["lovers"]) and all(roles[s] == "lover" for s in to)
        elif kind == "peeked":  # letters for the wolves, never their seats
            assert roles[to[0]] == "little_girl" and len(to) == 1
            assert all(isinstance(label, str) and label.isalpha() for label in event["pointing"])
        elif kind == "charmed":
            assert set(to) <= set(event["charmed"]) | {roles.index("piper")}
        elif kind == "little_girl_caught":
            assert set(to) <= wolves and roles[event["seat"]] == "little_girl"
        elif kind == "idiot_revealed":
            assert to is None and roles[event["seat"]] == event["role"] == "idiot"
            assert not before.memo.get("idiot")  # once per game
        else:
            assert to is None or kind in ("prompt", "prompt_closed"), kind


def check_views(state: GameState, seats: list) -> None:
    over = state.phase == "over"
    for seat in seats:
        role = state.roles[seat]
        seen = view(state, seat)
        orjson.dumps(seen)
        if over:
            continue
        revealed = state.memo.get("revealed", [])
        hidden = state.memo.get("hidden", [])
        for other in seen["seats"]:
            if other["role"] is not None:
                assert other["seat"] in [seat, *revealed] or (
                    not state.alive[other["seat"]] and other["seat"] not in hidden)
        for field, holder in PRIVATE_ROLE_FIELDS.items():
            if seen[field] is not None:
                assert role in holder, field
        if seen["charmed"] is not None:
            assert role == "piper" or seat in state.memo["piper"]["charmed"]
        if seen["lover"] is not None:
            assert seat in state.memo["cupid"]["lovers"]
        if not state.alive[seat]:
            assert {p["action"] for p in seen["prompts"]} <= set(DEATH_REACTIONS)
        for channel, lines in seen["chat"].items():
            # the wolves' lines only as a wolf: a wolf robbed by the Thief keeps those he read
            wolf_lines = channel == "wolves" and (role in PACK or all(
                seat in line["to"] for line in state.chat if line["channel"] == "wolves"
                and {k: v for k, v in line.items() if k != "to"} in lines))
            assert channel == "day" or wolf_lines or (channel == "dead" and not state.alive[seat])


def village_side_gone(state: GameState) -> bool:
    """003's 屠边 / 屠城: a dealt village group all dead."""
    rule = state.settings["rules"]["wolves_win"]
    if rule not in ("kill_side", "kill_all"):
        return False
    plain = [s for s, r in enumerate(state.roles) if r in PLAIN]
    powered = [s for s, r in enumerate(state.roles)
               if r not in PLAIN and TEAM.get(r, "village") == "village"]
    return any(group and not any(state.alive[s] for s in group)
               for group in ((plain + powered,) if rule == "kill_all" else (plain, powered)))


def check_outcome(state: GameState, commands: list, log: list) -> None:
    alive = [s for s, a in enumerate(state.alive) if a]
    wolves_alive = [s for s in alive if state.roles[s] in PACK]
    lovers = state.memo.get("cupid", {}).get("lovers") or []
    mixed = lovers if len({TEAM.get(state.roles[s], "village") for s in lovers}) == 2 else []
    side = lambda team: [s for s, r in enumerate(state.roles)  # noqa: E731
                         if TEAM.get(r, "village") == team and s not in mixed]
    reason, winners = state.outcome["reason"], state.outcome["winners"]
    rules = state.settings["rules"]
    fox = state.roles.index("fox") if "fox" in state.roles else None
    pair = [s for s, r in enumerate(state.roles) if r == "lover"]
    # what the sides would win by (004's Fox and dealt pair take a side's win from it)
    counted = [s for s in alive if s not in wolves_alive
               and not (state.roles[s] == "fox" and rules["fox_counted"] == "no")]
    side_holds = not wolves_alive or (rules["wolves_win"] == "parity" and
                                      len(wolves_alive) >= len(counted)) or all(
        TEAM.get(state.roles[s], "village") == "wolves" for s in alive) or village_side_gone(state)
    if reason in ("fox_survives", "lovers_pair_alive"):
        assert side_holds
    if reason != "fox_survives" and reason != "piper_charmed_all" and reason != \
            "lovers_last_alive" and fox is not None:
        # a side's win with a living Fox is his, unless the pair goes first
        assert not state.alive[fox] or (reason == "lovers_pair_alive"
                                        and rules["fox_lover_priority"] == "lover")
    if reason == "fox_survives":
        assert state.alive[fox] and winners == [fox]
    elif reason == "lovers_pair_alive":
        assert rules["lover_win"] == "pair" and all(state.alive[s] for s in pair)
        assert winners == pair
    elif reason == "piper_charmed_all":
        piper = state.roles.index("piper")
        assert state.alive[piper] and winners == [piper]
        assert all(s in state.memo["piper"]["charmed"] for s in alive if s != piper)
    elif reason == "lovers_last_alive":
        assert sorted(alive) == lovers == mixed and winners == lovers
    elif reason == "no_wolves_alive":
        assert not wolves_alive
        assert winners == side("village")
    elif reason == "only_wolves_alive":
        assert wolves_alive and all(TEAM.get(state.roles[s]) == "wolves" for s in alive)
        assert winners == side("wolves")
    elif reason == "wolves_at_parity":
        # the Traitor counts among the humans; the Fox only with fox_counted (004)
        assert state.settings["rules"]["wolves_win"] == "parity"
        assert wolves_alive and len(wolves_alive) >= len(counted)
        assert winners == side("wolves")
    else:
        rule = state.settings["rules"]["wolves_win"]
        assert reason == "village_side_killed" and rule != "only_wolves" and wolves_alive
        assert village_side_gone(state)
        assert winners == side("wolves")
    over = [e for e in log if e["kind"] == "game_over"]
    assert len(over) == 1 and over[0]["alive"] == alive
    for potion in ("witch.save", "witch.poison"):
        assert sum(1 for c in commands if c[0] == "act" and c[2] == potion and c[3]) <= 1
    assert sum(1 for e in log if e["kind"] == "idiot_revealed") <= 1
    assert sum(1 for e in log if e["kind"] == "powers_lost") <= 1


@settings(max_examples=GAMES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(roles=st.sets(st.sampled_from(SPECIAL_ROLES)), size=st.integers(0, 12),
       rules=st.fixed_dictionaries({s.id: st.sampled_from(s.values) for s in SETTINGS.values()}),
       seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_rule(roles, size, rules, seed, moves):
    try:
        table = Settings.from_json({"roles": sorted(roles), "rules": rules})
    except BadSettings:  # more special cards than the widest range seats: drop some
        table = Settings.from_json({"roles": sorted(roles)[:10], "rules": rules})
    n = min(max_players(table), min_players(table) + size)
    start, commands, log, state = play(n, table, seed, random.Random(moves))
    check_outcome(state, commands, log)
    # Replaying the seed and the commands gives the same event log and the same end.
    replayed, events = start_game(*start)
    for command in commands:
        replayed, more = run(replayed, command)
        events += more
    assert events == log and replayed == state
