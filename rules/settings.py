"""Table settings: which special roles are dealt and how long each phase lasts."""

from dataclasses import dataclass

from rules.errors import BadSettings

MIN_PLAYERS = 6
MAX_PLAYERS = 18
SPECIAL_ROLES = ("seer", "witch", "hunter", "cupid")
WOLF = "werewolf"
ROLES = ("werewolf", "villager") + SPECIAL_ROLES

# Seconds; each phase may be ended sooner by the players (see RULES.md).
DEFAULT_DURATIONS = {
    "cupid": 30,
    "seer": 30,
    "wolves": 60,
    "witch": 45,
    "election": 60,
    "discussion": 180,
    "vote": 60,
    "tiebreak": 30,
    "hunter": 30,
    "successor": 30,
}
MAX_DURATION = 900


def wolves_for(n_players: int) -> int:
    """About one in four: 1 for 6-7, 2 for 8-11, 3 for 12-15, 4 for 16-18."""
    if n_players < 8:
        return 1
    return min(4, (n_players - 4) // 4 + 1)


@dataclass(frozen=True)
class Settings:
    roles: tuple[str, ...]
    durations: dict

    @classmethod
    def default(cls) -> "Settings":
        return cls(roles=SPECIAL_ROLES, durations=dict(DEFAULT_DURATIONS))

    @classmethod
    def from_json(cls, data) -> "Settings":
        if not isinstance(data, dict):
            raise BadSettings("settings: expected an object")
        unknown = set(data) - {"roles", "durations"}
        if unknown:
            raise BadSettings(f"settings: unknown field(s) {sorted(unknown)}")
        roles = data.get("roles", list(SPECIAL_ROLES))
        if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
            raise BadSettings("settings: roles must be a list of role names")
        bad = [r for r in roles if r not in SPECIAL_ROLES]
        if bad or len(set(roles)) != len(roles):
            raise BadSettings(f"settings: roles must be distinct names among {list(SPECIAL_ROLES)}")
        given = data.get("durations", {})
        if not isinstance(given, dict):
            raise BadSettings("settings: durations must be an object")
        durations = dict(DEFAULT_DURATIONS)
        for name, seconds in given.items():
            if name not in DEFAULT_DURATIONS:
                raise BadSettings(f"settings: unknown duration {name!r}")
            if type(seconds) is not int or not 1 <= seconds <= MAX_DURATION:
                raise BadSettings(f"settings: duration {name!r} must be an integer 1..{MAX_DURATION}")
            durations[name] = seconds
        return cls(roles=tuple(r for r in SPECIAL_ROLES if r in roles), durations=durations)

    def to_json(self) -> dict:
        return {"roles": list(self.roles), "durations": dict(self.durations)}


def roles_in_play(n_players: int, settings: Settings) -> dict:
    """The public deal for a table of n players: {"werewolf": k, <specials>: 1, "villager": m}.

    n is clamped into MIN_PLAYERS..MAX_PLAYERS so a lobby that is not full yet can show the deal
    of the smallest (or largest) table it could start with.
    """
    n = min(MAX_PLAYERS, max(MIN_PLAYERS, n_players))
    deal = {"werewolf": wolves_for(n)}
    for role in settings.roles:
        deal[role] = 1
    deal["villager"] = n - sum(deal.values())
    return deal
