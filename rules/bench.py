"""Plays random full games through the engine alone: `python -m rules.bench --games N`.

Prints games/s and microseconds per command (act, say, advance, view), the floor under every
latency the cluster can reach. Per-command figures are CPU time (`time.process_time`), so a busy
shared machine inflates the wall-clock games/s but not them. `--against REV` plays the same games
on the engine of a git revision too (this file run on that revision's `rules/`; with
`--largest`, every special role of that engine that fits) and prints both figures.
"""

import argparse
import pathlib
import random
import subprocess
import sys
import tempfile
import time

# only names every revision's engine has, so --against can run this file on an older one
from rules.engine import act, advance, say, start_game, view
from rules.errors import BadSettings, NotYourTurn
from rules.settings import MAX_PLAYERS, SPECIAL_ROLES, Settings

try:
    from rules.settings import min_players
except ImportError:  # an engine from before issue 9 fits every table from its minimum
    from rules.settings import MIN_PLAYERS

    def min_players(settings: Settings) -> int | None:
        return MIN_PLAYERS

try:
    from rules.settings import max_players
except ImportError:  # an engine from before seed 004's table sizes: one range for every table
    def max_players(settings: Settings) -> int:
        return MAX_PLAYERS


def table(roles: list) -> Settings:
    """The settings of these roles, less the last ones while their cards do not fit the widest
    table (every special role no longer fits 18 seats)."""
    while True:
        try:
            return Settings.from_json({"roles": roles})
        except BadSettings:
            roles = roles[:-1]


def random_game(seed: int, rng: random.Random, timed: dict | None = None, largest=False):
    """One full game with random legal answers, chat and timeouts; returns the final state.
    `largest`: the most seats and every special role that fits them (the costliest table)."""
    clock = time.process_time
    roles = list(SPECIAL_ROLES) if largest else [r for r in SPECIAL_ROLES if rng.random() < 0.5]
    settings = table(roles)
    smallest = min_players(settings)
    assert smallest is not None  # table() keeps only settings that deal
    n = max_players(settings) if largest else rng.randint(smallest, max_players(settings))
    now = 1_700_000_000_000
    state, _ = start_game([f"p{i}" for i in range(n)], settings, seed, now)
    counts = timed if timed is not None else {}

    def timed_call(kind, fn, *args):
        start = clock()
        result = fn(*args)
        spent, calls = counts.get(kind, (0.0, 0))
        counts[kind] = (spent + clock() - start, calls + 1)
        return result

    while state.phase != "over":
        now += rng.randint(0, 3000)
        if state.prompts and rng.random() < 0.85:
            prompt = rng.choice(state.prompts)
            k = rng.randint(prompt["min"], min(prompt["max"], len(prompt["choices"])))
            targets = rng.sample(prompt["choices"], k)
            state, _ = timed_call("act", act, state, prompt["seat"], prompt["action"], targets, now)
        elif rng.random() < 0.5:
            seat = rng.randrange(n)
            try:
                state, _ = timed_call("say", say, state, seat, "hello there", now)
            except NotYourTurn:  # a sleeping villager may not talk
                pass
        else:
            now = max(now, state.deadline)
            state, _ = timed_call("advance", advance, state, now)
        timed_call("view", view, state, rng.randrange(n))
    return state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--largest", action="store_true",
                        help="the most seats and every special role that fits them in every game")
    parser.add_argument("--against", metavar="REV",
                        help="also run the games on the engine of this git revision")
    args = parser.parse_args()
    if args.against:
        run_against(args)
    rng = random.Random(args.seed)
    timed: dict = {}
    start, start_cpu = time.perf_counter(), time.process_time()
    for game in range(args.games):
        random_game(args.seed * 1_000_003 + game, rng, timed, args.largest)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    commands = sum(calls for _, calls in timed.values())
    print(f"{args.games} games in {elapsed:.2f} s wall, {cpu:.2f} s CPU: "
          f"{args.games / elapsed:.1f} games/s wall, {args.games / cpu:.1f} games/s CPU, "
          f"{commands} commands, {cpu / commands * 1e6:.1f} us/command overall (CPU)")
    for kind, (spent, calls) in sorted(timed.items()):
        print(f"  {kind:8s} {calls:8d} calls {spent / calls * 1e6:8.1f} us/call (CPU)")


def run_against(args) -> None:
    """This file, run on `args.against`'s `rules/` exported to a temporary directory."""
    root = pathlib.Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", args.against, "rules"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        (pathlib.Path(tmp) / "bench_against.py").write_text(pathlib.Path(__file__).read_text())
        command = [sys.executable, "bench_against.py", "--games", str(args.games),
                   "--seed", str(args.seed)] + (["--largest"] if args.largest else [])
        print(f"engine of {args.against}:", flush=True)
        subprocess.run(command, cwd=tmp, check=True)
    print("this engine:", flush=True)


if __name__ == "__main__":
    main()
