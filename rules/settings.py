"""Table settings: which special roles are dealt, the house rules the roles declare, the phase
durations, and the presets of the seeds. Everything here is derived from the roles' declarations
(`rules.registry`): the room, the gateway, the JSON schema and the host's form read it from here.
"""

from dataclasses import dataclass, field

from rules.errors import BadSettings
from rules.presets import PRESETS
from rules.registry import (CARDS, DURATION_OWNERS, DURATIONS, FACTS, FILLER_CARD, SETTINGS,
                             SPECIAL_ROLES, SWITCHES, WOLF_CARD)

MIN_PLAYERS = 4  # the widest range any preset plays (004: 4-20); `player_range` narrows it
MAX_PLAYERS = 20
WOLF = WOLF_CARD
ROLES = tuple(CARDS)
DEFAULT_DURATIONS = dict(DURATIONS)  # seconds; each phase may be ended sooner by the players
MAX_DURATION = 900
DEFAULT_RULES = {s.id: s.default for s in SETTINGS.values()}
FIELDS = ("roles", "durations", "rules", "preset")


def wolves_for(n_players: int, rule="table_000") -> int:
    """`table_000`: about one in four, 1 for 6-7, 2 for 8-11, 3 for 12-15, 4 for 16-18;
    `table_004`: 1, one more at 7, 11, 14 and 18; a number: that many."""
    if rule == "table_000":
        return 1 if n_players < 8 else min(4, (n_players - 4) // 4 + 1)
    if rule == "table_004":
        return 1 + sum(n_players >= k for k in (7, 11, 14, 18))
    return rule


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


@dataclass(frozen=True)
class Settings:
    roles: tuple[str, ...]
    durations: dict
    rules: dict = field(default_factory=lambda: dict(DEFAULT_RULES))
    preset: str | None = "seed_000"  # the preset last chosen, None once the host changed it

    @classmethod
    def default(cls) -> "Settings":
        return cls.from_json({})

    @classmethod
    def from_json(cls, data) -> "Settings":
        if not isinstance(data, dict):
            raise BadSettings("settings: expected an object")
        unknown = set(data) - set(FIELDS)
        if unknown:
            raise BadSettings(f"settings: unknown field(s) {sorted(unknown)}")
        preset = data.get("preset", "seed_000" if "roles" not in data else None)
        if preset is not None and preset not in PRESETS:
            raise BadSettings(f"settings: preset must be one of {sorted(PRESETS)} or null")
        base = PRESETS["seed_000"] if preset is None else PRESETS[preset]
        roles = data.get("roles", list(base.roles))
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
                raise BadSettings(f"settings: duration {name!r} must be an integer "
                                  f"1..{MAX_DURATION}")
            durations[name] = seconds
        rules = {**DEFAULT_RULES, **base.rules}
        given = data.get("rules", {})
        if not isinstance(given, dict):
            raise BadSettings("settings: rules must be an object")
        for name, value in given.items():
            setting = SETTINGS.get(name)
            if setting is None:
                raise BadSettings(f"settings: unknown rule {name!r}")
            if not any(_same(value, v) for v in setting.values):
                raise BadSettings(f"settings: rule {name!r} must be one of {list(setting.values)}")
            rules[name] = value
        settings = cls(roles=tuple(r for r in SPECIAL_ROLES if r in roles), durations=durations,
                       rules=rules, preset=preset)
        if min_players(settings) is None:
            lo, hi = player_range(settings)
            raise BadSettings(f"settings: no table of {lo}-{hi} players can be "
                              f"dealt {len(settings.roles)} special roles and the wolves")
        return settings

    def change(self, frame: dict) -> "Settings":
        """The host's change: a preset replaces the roles and rules (durations stay); roles or
        rules changed without naming a preset make the table "custom" (preset null);
        durations and rules may be given in part."""
        wanted = self.to_json()
        preset = frame.get("preset")
        if preset is not None:
            if preset not in PRESETS:
                raise BadSettings(f"settings: preset must be one of {sorted(PRESETS)} or null")
            wanted = {"durations": wanted["durations"], "preset": preset,
                      "roles": list(PRESETS[preset].roles), "rules": {}}
        elif "roles" in frame or "rules" in frame or "preset" in frame:
            wanted["preset"] = None
        for name in ("roles", "durations", "rules"):
            if name in frame:
                value = frame[name]
                wanted[name] = {**wanted[name], **value} if (
                    name != "roles" and isinstance(value, dict)) else value
        changed = Settings.from_json(wanted)
        if preset is None and self.preset is not None and "preset" not in frame \
                and changed.roles == self.roles and changed.rules == self.rules:
            # the host's form sends every field: unchanged roles and rules keep the preset
            changed = Settings.from_json({**wanted, "preset": self.preset})
        return changed

    def to_json(self) -> dict:
        return {"roles": list(self.roles), "durations": dict(self.durations),
                "rules": dict(self.rules), "preset": self.preset}


def player_range(settings: Settings) -> tuple[int, int]:
    """The table sizes these settings play: 6-18 (000) or 4-20 (004)."""
    lo, hi = settings.rules["player_range"].split("-")
    return int(lo), int(hi)


def specials_for(n_players: int, settings: Settings) -> tuple:
    """The special roles dealt at a table of n: the preset's own table by size while the host
    has not changed the roles (004's recommendedSetup), else the host's list."""
    preset = PRESETS.get(settings.preset) if settings.preset else None
    if preset is not None and preset.by_size is not None and settings.roles == preset.roles:
        return preset.by_size(n_players)
    return settings.roles


def deal(n_players: int, settings: Settings) -> dict:
    """The public deal of a table of n: {"werewolf": k, <specials>: 1 (the Lover 2),
    "villager": m}; refuses a table it cannot fill."""
    wolves = wolves_for(n_players, settings.rules["wolf_count"])
    roles = specials_for(n_players, settings)
    # a special wolf (the Trickster) takes one of the pack's seats
    pack = [r for r in roles if CARDS[r].wolf]
    villagers = n_players - wolves - sum(CARDS[r].cards for r in roles) + len(pack)
    if villagers < 0 or len(pack) > wolves:
        raise BadSettings(f"settings: a table of {n_players} cannot hold {wolves} wolves and "
                          f"{len(roles)} special roles")
    result = {WOLF_CARD: wolves - len(pack)}
    for role in roles:
        result[role] = CARDS[role].cards
    result[FILLER_CARD] = villagers
    return result


def max_players(settings: Settings) -> int:
    return player_range(settings)[1]


def min_players(settings: Settings) -> int | None:
    """The smallest table these settings can deal, or None if none in their range can."""
    lo, hi = player_range(settings)
    for n in range(lo, hi + 1):
        try:
            deal(n, settings)
            return n
        except BadSettings:
            continue
    return None


def roles_in_play(n_players: int, settings: Settings) -> dict:
    """The deal the lobby shows: that of the table seated, or of the smallest table the settings
    can start with while fewer are seated (D23)."""
    smallest = min_players(settings)
    if smallest is None:
        raise BadSettings("no table in these settings' range can be dealt")
    return deal(min(max_players(settings), max(smallest, n_players)), settings)


def _present(unit: str, dealt: dict) -> bool:
    """A special role is at the table when dealt; every other unit (the pack, the day, the
    mayor) always is."""
    return dealt.get(unit, 0) > 0 if unit in SPECIAL_ROLES else True


def units_in_play(settings: Settings, dealt: dict) -> frozenset:
    """The units whose rules and durations apply to a table dealt `dealt` (`roles_in_play`):
    those at the table that no rule of their own takes out (`Setting.off`: `mayor = none`)."""
    owners = {*DURATION_OWNERS.values(), *(s.owner for s in SETTINGS.values())}
    return frozenset(u for u in owners if _present(u, dealt) and (
        u not in SWITCHES or settings.rules[SWITCHES[u][0]] != SWITCHES[u][1]))


def rules_that_apply(settings: Settings, dealt: dict) -> tuple:
    """The house rules of the units in play, and the switch of a unit taken out ("Mayor: none")."""
    units = units_in_play(settings, dealt)
    return tuple(s.id for s in SETTINGS.values()
                 if s.owner in units or (s.off is not None and _present(s.owner, dealt)))


def durations_that_apply(settings: Settings, dealt: dict) -> tuple:
    """The phase durations of the units in play: no other phase is ever timed at this table."""
    units = units_in_play(settings, dealt)
    return tuple(name for name in DEFAULT_DURATIONS if DURATION_OWNERS[name] in units)


def _span(preset) -> tuple[int, int]:
    lo, hi = Settings.from_json({"preset": preset.id}).rules["player_range"].split("-")
    return int(lo), int(hi) + 1


def declaration() -> dict:
    """What a client needs to build the host's form and show the chosen rules, as data: the
    dealable roles, every house rule with its values, default, owner and source, the presets,
    the durations and the view fields a seat's card shows (`Fact`). A new role or rule reaches
    the client through this alone."""
    return {
        "players": {"min": MIN_PLAYERS, "max": MAX_PLAYERS},
        # `wolf`: one of the pack, counted among the wolves (its card takes a wolf's seat)
        "roles": [{"id": r, "team": CARDS[r].team, "cards": CARDS[r].cards, "wolf": CARDS[r].wolf}
                  for r in SPECIAL_ROLES],
        "pack": WOLF_CARD,  # the plain wolves' card, which `wolf_count` deals
        # `off`: the value that takes the owner out of the game, with its other rules and durations
        "rules": [{"id": s.id, "values": list(s.values), "default": s.default, "owner": s.owner,
                   "source": s.source, "off": s.off} for s in SETTINGS.values()],
        "presets": [{"id": p.id, "source": p.source, "roles": list(p.roles),
                     "rules": dict(p.rules), "players": p.players,
                     # the preset's table by size, from the code that deals (004)
                     "by_size": None if p.by_size is None else {
                         str(n): deal(n, Settings.from_json({"preset": p.id}))
                         for n in range(*_span(p))}} for p in PRESETS.values()],
        "durations": dict(DEFAULT_DURATIONS),
        "duration_owners": dict(DURATION_OWNERS),  # a duration applies while its owner is in play
        # what a seat knows by its card, in the roles' order: the card shows each field it holds
        "facts": [{"role": role, **fact.to_json()} for role, fact in FACTS.values()],
    }


def settings_schema() -> dict:
    """The JSON Schema of the client's `settings` frame (docs/schema/settings.json), derived from
    the declaration so the two can never disagree."""
    seconds = {"type": "integer", "minimum": 1, "maximum": MAX_DURATION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "settings.json",
        "title": "settings",
        "description": "Client, host only, lobby only: a preset, the special roles dealt, house "
                       "rules and phase durations (seconds); rules and durations may be given in "
                       "part. Generated from rules.settings.declaration().",
        "type": "object",
        "properties": {
            "type": {"const": "settings"},
            "id": {"description": "client-chosen id echoed in the ack or error",
                   "oneOf": [{"type": "string", "maxLength": 64}, {"type": "integer"},
                             {"type": "null"}]},
            "preset": {"enum": [*PRESETS, None]},
            "roles": {"type": "array", "items": {"enum": list(SPECIAL_ROLES)},
                      "uniqueItems": True},
            "rules": {"type": "object", "additionalProperties": False,
                      "properties": {s.id: {"enum": list(s.values)} for s in SETTINGS.values()}},
            "durations": {"type": "object", "additionalProperties": seconds,
                          "propertyNames": {"enum": list(DEFAULT_DURATIONS)}},
        },
        "required": ["type"],
    }
