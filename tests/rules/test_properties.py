"""Properties over thousands of random games: random tables (random mixes of every special role,
as many seats as they need up to 18, random house rules), random legal and illegal commands,
random chat and timeouts.

RULES_GAMES sets the number of games (default 1000, the CI figure; for a longer search,
`RULES_GAMES=20000 scripts/test -k random_games`)."""

import os
import random

from hypothesis import HealthCheck, given, settings, strategies as st

from rules import SETTINGS, SPECIAL_ROLES, BadSettings, Settings, min_players, start_game
from rules.settings import max_players
from tests.rules.random_games import PACK, check_outcome, play, run

GAMES = int(os.environ.get("RULES_GAMES", "1000"))


@settings(max_examples=GAMES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(roles=st.sets(st.sampled_from(SPECIAL_ROLES)), size=st.integers(0, 12),
       rules=st.fixed_dictionaries({s.id: st.sampled_from(s.values) for s in SETTINGS.values()}),
       seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_rule(roles, size, rules, seed, moves):
    if isinstance(rules["wolf_count"], int) and rules["wolf_count"] < len(roles & PACK):
        rules = {**rules, "wolf_count": "table_000"}  # the special wolves take the pack's seats
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
