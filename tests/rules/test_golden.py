"""Golden games: a seed, the commands and the exact event log, checked in as data (like chess's
perft files). Any change to what the engine emits shows up here first.

Regenerate after a deliberate change with `python -m tests.rules.test_golden` and review the diff.
"""

import json
import random

import pytest

from rules import EVENTS, Settings, act, advance, say, start_game
from tests.rules.golden_tables import GOLDEN, TABLES

T0 = 1_700_000_000_000


def replay(game: dict) -> list:
    settings = Settings.from_json(game["settings"])
    state, events = start_game(game["names"], settings, game["seed"], game["now"])
    for command in game["commands"]:
        state, more = run(state, command)
        events += more
    return events


def run(state, command: list):
    kind, *args = command
    if kind == "act":
        return act(state, *args)
    if kind == "say":
        return say(state, *args)
    return advance(state, *args)


def record(players: int, table: dict, seed: int) -> dict:
    """Play a game with random legal commands drawn from `seed`."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    settings = Settings.from_json(table)
    state, _ = start_game(names, settings, seed, T0)
    commands, now = [], T0
    while state.phase != "over":
        now += rng.choice((0, 1000, 4000))
        if state.prompts and rng.random() < 0.8:
            prompt = rng.choice(state.prompts)
            k = rng.randint(prompt["min"], min(prompt["max"], len(prompt["choices"])))
            command = ["act", prompt["seat"], prompt["action"],
                       rng.sample(prompt["choices"], k), now]
        elif rng.random() < 0.5:
            seat = rng.randrange(players)
            if not state.alive[seat] or not state.phase.startswith("night.") \
                    or state.roles[seat] == "werewolf":
                command = ["say", seat, f"line {len(commands)}", now]
            else:
                continue
        else:
            now = max(now, state.deadline)
            command = ["advance", now]
        state, _ = run(state, command)
        commands.append(command)
    return {"names": names, "settings": settings.to_json(), "seed": seed, "now": T0,
            "commands": commands}


def dump(game: dict) -> str:
    """One command or event per line, so a change reads as a small diff."""
    head = {k: game[k] for k in ("names", "settings", "seed", "now")}
    lines = [json.dumps(head)[:-1] + ","]
    for key in ("commands", "events"):
        items = ",\n  ".join(json.dumps(item) for item in game[key])
        lines.append(f' "{key}": [\n  {items}\n ]' + ("," if key == "commands" else ""))
    return "\n".join(lines) + "\n}\n"


@pytest.mark.parametrize("name", [t[0] for t in TABLES])
def test_a_golden_game_replays_to_its_recorded_event_log(name):
    game = json.loads((GOLDEN / f"{name}.json").read_text())
    assert replay(game) == game["events"]


def test_the_golden_games_cover_every_event_kind_the_engine_emits():
    kinds = set()
    for name, *_ in TABLES:
        kinds |= {e["kind"] for e in json.loads((GOLDEN / f"{name}.json").read_text())["events"]}
    kinds.add("clock")  # a table on one phone's only (its commands): test_engine_phone.py
    assert kinds == set(EVENTS)  # every kind a module declares


if __name__ == "__main__":
    import sys

    # `python -m tests.rules.test_golden [name...]`: only those (all when none is named)
    for name, players, table, seed in TABLES:
        if sys.argv[1:] and name not in sys.argv[1:]:
            continue
        game = record(players, table, seed)
        game["events"] = replay(game)
        (GOLDEN / f"{name}.json").write_text(dump(game))
        print(name, len(game["commands"]), "commands", len(game["events"]), "events")
