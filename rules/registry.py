"""Indexes of the cast (`rules.roles.UNITS`), built once: the flow and the settings read these,
never a role module by name."""

from collections.abc import Callable

from rules import role as _role
from rules.events import FLOW
from rules.roles import UNITS

CARDS = {unit.id: unit for unit in UNITS if unit.deal is not None}
SPECIAL_ROLES = tuple(unit.id for unit in UNITS if unit.deal == "special")
WOLF_CARD = next(unit.id for unit in UNITS if unit.deal == "pack")
FILLER_CARD = next(unit.id for unit in UNITS if unit.deal == "filler")

STEPS = {step.phase: step for unit in UNITS for step in unit.steps}
# The one night order: every role's night steps, lowest night_order first.
NIGHT_ORDER = sorted((s for s in STEPS.values() if s.night_order is not None),
                     key=lambda s: s.night_order)
# The day opens with the first of these that runs (the election on day 1, else the discussion).
DAY_OPENING = sorted((s for s in STEPS.values() if s.opens_day is not None),
                     key=lambda s: s.opens_day)
# The one dawn order: protect 10, attack 20 (second victim 22, devoured wolf 24, infection 25),
# save 30, poison 40, night shot 50.
DAWN_ORDER = [d.resolve for d in sorted((d for u in UNITS for d in u.dawn), key=lambda d: d.order)]
DEATH_REACTIONS = [u.on_death for u in sorted(UNITS, key=lambda u: u.death_order) if u.on_death]
SPARES = [u.spares for u in UNITS if u.spares]
TIE_BREAKERS = [u.tie_break for u in sorted(UNITS, key=lambda u: u.tie_order) if u.tie_break]
WINS = sorted((w for u in UNITS for w in u.wins), key=lambda w: w.priority)
VIEW_FIELDS: list[Callable] = [u.view for u in UNITS if u.view]
PROMPT_FILTERS = [u.prompt_filter for u in UNITS if u.prompt_filter]
STARTS = [u.start for u in UNITS if u.start]
HIDES = [u.hides for u in UNITS if u.hides]
OVERHEARS = [u.overhears for u in UNITS if u.overhears]
SETTINGS = {s.id: s for u in UNITS for s in u.settings}
DURATIONS = {name: seconds for u in UNITS for name, seconds in u.durations.items()}
DURATION_OWNERS = {name: u.id for u in UNITS for name in u.durations}  # duration -> its unit
# unit -> the rule and value that take it out of the game (the mayor: `mayor = none`)
SWITCHES = {s.owner: (s.id, s.off) for s in SETTINGS.values() if s.off is not None}
# role -> (extra_cards, set_aside): the roles that deal more cards than there are seats
DECKS: dict[str, tuple[Callable, Callable]] = {}
for _unit in UNITS:
    if _unit.extra_cards:
        assert _unit.set_aside, f"{_unit.id} deals extra cards: it says which it sets aside"
        DECKS[_unit.id] = (_unit.extra_cards, _unit.set_aside)
# kind -> its declaration (rules.events): the flow's and every module's, each declared once
EVENTS: dict = {}
for _kind in (*FLOW, *(k for u in UNITS for k in u.events)):
    assert _kind.kind not in EVENTS, f"event kind {_kind.kind!r} declared twice"
    EVENTS[_kind.kind] = _kind
# field -> (its role, its Fact): the view fields the seats' cards show, each declared once
FACTS: dict = {}
for _unit in UNITS:
    for _fact in _unit.facts:
        assert _fact.field not in FACTS, f"fact {_fact.field!r} declared twice"
        if _fact.told_by:  # the event that tells it carries what it reads
            _carried = {"seat", "role"} if _fact.shape == "results" else {_fact.told_in}
            assert _fact.told_by in EVENTS and _carried <= set(EVENTS[_fact.told_by].fields), \
                f"fact {_fact.field}: {_fact.told_by!r} does not carry {sorted(_carried)}"
        FACTS[_fact.field] = (_unit.id, _fact)
JOINS: dict = {}  # phase -> the Joins acting in it
for _join in (j for u in UNITS for j in u.joins):
    JOINS.setdefault(_join.phase, []).append(_join)
JOIN_ACTS = {(j.phase, a): j.act for js in JOINS.values() for j in js for a in j.actions}
WATCHERS: dict = {}  # event kind -> fns
for _unit in UNITS:
    for _kind, _fn in _unit.watch.items():
        WATCHERS.setdefault(_kind, []).append(_fn)
ACTIONS = frozenset([action for step in STEPS.values() for action in step.actions]
                    + [action for _, action in JOIN_ACTS])

assert len(NIGHT_ORDER) == len({s.night_order for s in NIGHT_ORDER}), "two steps, one place"
assert len(WINS) == len({w.priority for w in WINS}), "two win conditions, one priority"

_role.CARDS.update(CARDS)
_role.SETTING_DEFAULTS.update({s.id: s.default for s in SETTINGS.values()})
_role.ALLEGIANCES.extend(u.allegiance for u in UNITS if u.allegiance)
_role.SIDE_WINS.extend(w for w in WINS if w.side)
_role.UNCOUNTED.extend(u.uncounted for u in UNITS if u.uncounted)
_role.TURNED.extend(u.turns_wolf for u in UNITS if u.turns_wolf)
_role.KILL_ACTIONS.update(a for step in STEPS.values() for a in step.kill_actions)
