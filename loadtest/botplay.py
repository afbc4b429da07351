"""Play strength of the bots (issue 33): `python -m loadtest.botplay --games N`.

Self-play through the pure engine (no Ray, no Redis), seeded. For each table (preset and size)
three match-ups of N games each: plausible village against plausible wolves, a random village
against the same wolves, and plausible village against random wolves ("random": any legal
answer, no chat). Prints per-side and per-role win rates, the village's win rate split by
whether its Seer read a wolf, and the commands the engine refused (the target is 0).
"""
from __future__ import annotations

import argparse
import functools
import time
from collections import Counter

from bots.selfplay import play, village_or_wolves
from rules import SPECIAL_ROLES, Settings

# (name, settings, players): seed 000 and the web table 004 at three sizes; every card, on two
# tables since all of them never fit one (18 seats take the first 18 specials)
TABLES = [
    *((f"seed_000/{n}", {"preset": "seed_000"}, n) for n in (8, 12, 18)),
    *((f"seed_004/{n}", {"preset": "seed_004"}, n) for n in (6, 10, 16)),
    ("every_card_a/18", {"roles": list(SPECIAL_ROLES[:18])}, 18),
    ("every_card_b/14", {"roles": ["seer", "witch", "hunter", "guard",
                                   *SPECIAL_ROLES[18:]]}, 14),
]
print = functools.partial(print, flush=True)  # a long run shows each table as it ends

MATCHUPS = {"plausible": ("plausible", "plausible"), "random_village": ("random", "plausible"),
            "random_wolves": ("plausible", "random")}


def run(settings: Settings, players: int, games: int, village: str, wolves: str,
        seed: int) -> dict:
    sides: Counter = Counter()
    role_games: Counter = Counter()
    role_wins: Counter = Counter()
    by_seer: dict = {True: Counter(), False: Counter()}
    refused = commands = unfinished = 0
    examples: list = []
    for i in range(games):
        game = play(settings, players, seed * 1_000_003 + i, village_or_wolves(village, wolves))
        sides[game.side] += 1
        winners = set(game.state.outcome["winners"]) if game.state.outcome else set()
        for seat, card in enumerate(game.state.roles):
            role_games[card] += 1
            role_wins[card] += seat in winners
        found = game.seer_found_wolf()
        if found is not None:
            by_seer[found][game.side == "village"] += 1
        refused += len(game.refused)
        unfinished += game.state.phase != "over"
        commands += game.commands
        examples += game.refused[:3 - len(examples)]
    return {"games": games, "sides": sides, "role_games": role_games, "role_wins": role_wins,
            "by_seer": by_seer, "refused": refused, "commands": commands, "examples": examples,
            "unfinished": unfinished}


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def others(sides: Counter) -> str:
    """The other wins by reason (the Piper's, the lovers', the Fox's...), most first."""
    rest = [(n, side) for side, n in sides.most_common() if side not in ("village", "wolves")]
    return f" ({', '.join(f'{side} {n}' for n, side in rest)})" if rest else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per table and match-up")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tables", nargs="*", help="only these tables (e.g. seed_000/8)")
    parser.add_argument("--roles", action="store_true", help="print per-role win rates")
    parser.add_argument("--matchups", nargs="*", choices=list(MATCHUPS), default=list(MATCHUPS),
                        help="only these match-ups (the differences need all three)")
    args = parser.parse_args(argv)
    total_refused = 0
    for name, spec, players in TABLES:
        if args.tables and name not in args.tables:
            continue
        settings = Settings.from_json(spec)
        start = time.perf_counter()
        results = {m: run(settings, players, args.games, *styles, seed=args.seed)
                   for m, styles in MATCHUPS.items() if m in args.matchups}
        elapsed = time.perf_counter() - start
        games = len(results) * args.games
        print(f"{name}: {games} games in {elapsed:.0f} s ({games / elapsed:.0f} games/s)")
        for matchup, r in results.items():
            total_refused += r["refused"]
            seer = r["by_seer"]
            print(f"  {matchup:15s} village {pct(r['sides']['village'], r['games'])}"
                  f"  wolves {pct(r['sides']['wolves'], r['games'])}"
                  f"  other "
                  f"{pct(r['games'] - r['sides']['village'] - r['sides']['wolves'], r['games'])}"
                  f"{others(r['sides'])}"
                  f"  | village when its Seer read a wolf "
                  f"{pct(seer[True][True], sum(seer[True].values()))}"
                  f" ({sum(seer[True].values())}), did not "
                  f"{pct(seer[False][True], sum(seer[False].values()))}"
                  f" ({sum(seer[False].values())})"
                  f"  | refused {r['refused']}/{r['commands']}"
                  + (f", unfinished {r['unfinished']}" if r["unfinished"] else ""))
            for example in r["examples"]:
                print(f"    refused: {example}")
        if len(results) == len(MATCHUPS):
            p, rv, rw = (results[m] for m in MATCHUPS)
            print(f"  village: plausible - random = "
                  f"{100 * (p['sides']['village'] - rv['sides']['village']) / args.games:+.1f}"
                  f" points; wolves: plausible - random = "
                  f"{100 * (p['sides']['wolves'] - rw['sides']['wolves']) / args.games:+.1f} "
                  "points")
        if args.roles and "plausible" in results:
            rg, rwins = results["plausible"]["role_games"], results["plausible"]["role_wins"]
            print("  per role (plausible): " + ", ".join(
                f"{card} {pct(rwins[card], rg[card]).strip()}" for card in sorted(rg)))
    print(f"refused commands: {total_refused}")
    return 1 if total_refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
