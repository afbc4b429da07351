"""The seeds' tables as presets the host may pick (RULES.md, "Presets"). A preset sets the
special roles and the house rules; settings it does not name keep seed 000's values."""

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    id: str
    source: str  # the seed
    roles: tuple
    rules: dict = field(default_factory=dict)
    players: int | None = None  # the table the seed wrote it for (its counts fit that size)
    # n -> the special roles of a table of n, while the host keeps the preset's roles (004)
    by_size: Callable | None = None


def recommended_setup(n_players: int) -> tuple:
    """004's `recommendedSetup()` (roles-spec 3.4): the Seer at every size, the Guard from 5, the
    Medium from 7, the Traitor from 8; the wolves by `wolf_count = table_004` (1, one more at 7,
    11, 14, 18); the rest Villagers. The rules page's table is generated from this."""
    return tuple(role for role, first in (("seer", 4), ("guard", 5), ("medium", 7),
                                          ("traitor", 8)) if n_players >= first)


# 003's own house rules, shared by its four setups (roles-spec 2.15, column 003); its counts
# include the game master, so "8人" is a table of 7 (spec 3.3).
_SEED_003 = {"mayor": "none", "hunter_trigger": "attack_or_exile", "witch_potions_per_night": 1,
             "guard_self": "yes", "guard_repeat": "forbidden", "wolves_win": "kill_side",
             "lovers_vote_restriction": "not_against_each_other",
             "lovers_kill_restriction": "never"}

# 004's column of roles-spec 2.15 (its screen's defaults); the Hunter's `any` is the default.
_SEED_004 = {"player_range": "4-20", "mayor": "none", "wolves_win": "parity",
             "wolf_count": "table_004", "first_night_kill": "off", "seer_result": "wolf_or_not",
             "vote_tie": "revote_then_lot", "reveal_night_deaths": "no", "reveal_exile": "no"}

PRESETS = {p.id: p for p in (
    Preset("seed_000", "000", ("seer", "witch", "hunter", "cupid")),
    # 001: no card list survives (spec 3.5): seed 000's table with 001's roles and rules
    Preset("seed_001", "001", ("seer", "witch", "hunter", "cupid", "little_girl",
                               "trickster_wolf", "thief"),
           {"thief_mode": "steal", "witch_told_after_save": "no", "mayor_candidacy": "candidates",
            "election_tie": "runoff_then_lot"}),
    # 002's 24-card box; its Thief: two extra cards, a wolf among them must be taken
    Preset("seed_002", "002", ("seer", "witch", "hunter", "cupid", "little_girl", "thief"),
           {"lovers_learn_role": "yes", "lovers_vote_restriction": "not_against_each_other",
            "little_girl_from_night": 2, "wolves_may_target": "anyone",
            "thief_mode": "extra_cards", "thief_forced_wolf": "if_any_wolf"}),
    Preset("seed_003_7", "003", ("seer", "hunter", "guard"), {**_SEED_003, "wolf_count": 2}, 7),
    Preset("seed_003_9", "003", ("seer", "witch", "hunter", "guard"),
           {**_SEED_003, "wolf_count": 3}, 9),
    Preset("seed_003_11", "003", ("seer", "witch", "hunter", "guard", "elder"),
           {**_SEED_003, "wolf_count": 3}, 11),
    Preset("seed_003_15", "003", ("seer", "witch", "hunter", "guard", "elder", "idiot",
                                  "scapegoat"), {**_SEED_003, "wolf_count": 4}, 15),
    # the roles follow the table's size (recommended_setup); `roles` lists every one it may hold
    Preset("seed_004", "004", recommended_setup(20), _SEED_004, by_size=recommended_setup),
)}
