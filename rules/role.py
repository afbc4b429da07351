"""What a role is: one declarative `Role` per module in `rules/roles/`, and the `Step` (phase)
shape its night steps and death reactions take.

A `Role` says everything the rest of the engine needs to know about it: its team, whether it
wakes with the pack, how the Seer sees it, how it is dealt, its steps (night steps carry their
place in the one night order), what it resolves at dawn (its intents, in the one dawn order), how
it reacts to a death given the cause, its win conditions and their priority, its view fields and
which of them its card shows (`Fact`), the settings it owns and the durations of its phases.
The mayor and the day are units of the same shape that are never dealt (`deal=None`).

This module is the leaf of the engine: roles import it, never the flow (`rules.table`), so the
flow can index the roles without an import cycle. `CARDS` is filled once by `rules.registry` from
its explicit list.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

CARDS: dict = {}  # role id -> Role, for every dealt card (filled by rules.registry)


@dataclass(frozen=True)
class Setting:
    """A house rule: one of `values`, `default` keeps seed 000's game."""

    id: str
    values: tuple
    default: object
    owner: str  # the role (or unit) whose rule it is; its form shows only when that role is dealt
    source: str  # the seed the variant comes from ("000" = the default game's own rule)
    # the value that takes its owner out of the game (the mayor's `none`): the owner's other
    # rules and its durations then do not apply
    off: object = None


@dataclass(frozen=True)
class Win:
    """A win condition; conditions are tried lowest `priority` first, the first that holds wins.

    `check(state)` returns the winners' seats or None. `settles`: once it holds, no death reaction
    (a Hunter's shot) can undo it, so none is asked; a condition that does not settle (the pack's
    "only wolves alive") leaves the shots to be taken first (RULES.md D4)."""

    reason: str
    priority: int
    check: Callable
    settles: bool = True
    side: str | None = None  # "village" | "wolves": a side's own condition (the Fox's watch)


@dataclass(frozen=True)
class Dawn:
    """What a role's night intents do at dawn: `resolve(table, night)` runs at `order` in the one
    dawn order (protect 10, attack 20, save 30, poison 40, night shot 50) and adds to (or takes
    back from) `night["deaths"]`, so roles interact through the night's record, not through each
    other."""

    order: int
    resolve: Callable


@dataclass(frozen=True)
class Join:
    """A role acting inside another role's step (the Little Girl in the wolves' step): `open(t)`
    after the step opens, `act(t, seat, action, targets)` for its own actions. It never holds the
    step open: the step's length does not tell that it is there."""

    phase: str
    actions: tuple
    open: Callable
    act: Callable


FACT_SHAPES = ("seat", "seats", "couple", "others", "results")


@dataclass(frozen=True)
class Fact:
    """What a seat knows by its card, as the card shows it: one of the role's view fields. The
    client draws it from this declaration alone (`/api/rules` "facts"), in the words of the
    catalogues' `fact.<field>`, whenever the seat's view holds the field (not null).

    `shape`, how the field reads: "seat" one seat ({name}); "seats" ({names}); "couple" two seats
    ({names}, joined by a heart); "others" seats among which the reader's own ({names}: the
    others; `fact.<field>.alone` when there are none); "results" one line per reading {seat, role,
    night} ({name}, {role}, {n}).
    `told_by`: the event kind that brings the field to a seat between two views: its field
    `told_in` is the field's new value; for "results", its `seat` and `role` are the night's
    reading, added to the others."""

    field: str
    shape: str
    told_by: str | None = None
    told_in: str | None = None

    def __post_init__(self) -> None:
        assert self.shape in FACT_SHAPES, f"fact {self.field}: no shape {self.shape!r}"
        assert (self.told_in is None) == (self.told_by is None or self.shape == "results"), \
            f"fact {self.field}: `told_in` names the field of `told_by` that holds its value"

    def to_json(self) -> dict:
        return {"field": self.field, "shape": self.shape, "told_by": self.told_by,
                "told_in": self.told_in}


@dataclass(frozen=True)
class Role:
    id: str
    team: str = "village"  # "village" | "wolves"; the side whose win it shares
    wolf: bool = False  # one of the pack: wakes with it, is a wolf for every count
    seen_as: str | None = None  # what the Seer learns of this card; None: the card itself
    # "special": one card if the host deals it; "pack": the wolves' count; "filler": the rest;
    # None: not a card (the mayor, the day)
    deal: str | None = "special"
    protectable: bool = True  # whether a Guard's protection holds on this card (O3)
    plain: bool = False  # a card without power: 003's "plain villagers" (屠边 counts them apart)
    steps: tuple = ()  # Step instances: night steps (with night_order), reactions, day phases
    dawn: tuple = ()  # Dawn entries
    on_death: Callable | None = None  # fn(table, seat, cause), for every death at the table
    death_order: int = 50  # reactions to one death run lowest first (grief at 10: before shots)
    spares: Callable | None = None  # fn(table, seat, cause) -> True: this death does not happen
    wins: tuple = ()  # Win entries
    view: Callable | None = None  # fn(state, seat) -> dict of this role's view fields
    facts: tuple = ()  # Fact entries: the view fields the seat's card shows
    # fn(state, seat, action, choices) -> choices, or None: the seat gets no such prompt
    prompt_filter: Callable | None = None
    tie_break: Callable | None = None  # fn(table, tied) -> True when it settled the day's tie
    tie_order: int = 50
    # fn(state, seat) -> a side, or None: moves a seat off its card's side (Cupid's mixed lovers)
    allegiance: Callable | None = None
    # fn(state, seat) -> True: this seat is one of the pack although its card is not (infected)
    turns_wolf: Callable | None = None
    # fn(state, line) -> copies of a chat line for other readers, each with its "to" and
    # "overheard": True (the Little Girl reading the wolves under letters)
    overhears: Callable | None = None
    # fn(rules) -> cards this role adds to the deck beyond the seats (the Thief's extra cards)
    extra_cards: Callable | None = None
    # fn(rules, deck, rng) -> (the seats' cards, the cards set aside): how the shuffled deck
    # holding the extra cards is dealt
    set_aside: Callable | None = None
    joins: tuple = ()  # Join entries
    watch: dict = field(default_factory=dict)  # event kind -> fn(table, event), as it is emitted
    events: tuple = ()  # rules.events.EventKind entries: the kinds this module owns
    settings: tuple = ()  # Setting entries this role owns
    durations: dict = field(default_factory=dict)  # phase duration key -> default seconds
    withdrawable: bool = True  # `missing_role` may draw it (004: never the Fox)
    cards: int = 1  # seats one deal of this role takes (004's Lover is a pair)
    start: Callable | None = None  # fn(table) at the deal, once every seat knows its card
    # fn(table, seat, cause) -> the cause the table is told if this death's card stays hidden
    # until the end (004), else None
    hides: Callable | None = None
    # fn(state, seat) -> True: this living seat is left out of the parity count (004's Fox)
    uncounted: Callable | None = None


class Step:
    """One phase: a night step (`night_order` set), a death reaction (`reaction` set) or a day
    phase. `close` resolves it and moves the game on."""

    phase: str
    duration: str  # key of settings["durations"]
    actions: tuple = ()
    waiting_action: str = ""
    night_order: int | None = None  # set for the steps that wake at night, lowest first
    opens_day: int | None = None  # set for the steps that may open the day, lowest first
    # set for death reactions queued in `state.pending`: "shot" ones run before the win check
    # (they may still change it), "after" ones once the game goes on
    reaction: str | None = None
    names_waiting_seats = True  # False at night: who is awake is secret
    kill_actions: tuple = ()  # those that kill: a lover may not aim them at his lover (O28)
    # The card whose holder this night step wakes. With hidden cards (`concealed`) the step runs
    # its full time whenever it is `scheduled` and the card is in the public deal, its holder
    # alive, dead or missing, so the night's timing tells nothing (roles-spec 5.1, O1).
    holder_role: str | None = None

    def scheduled(self, t) -> bool:
        """Whether tonight is one of this step's nights, whoever holds the card (public)."""
        return True

    def timed(self, t) -> bool:
        """Whether the phase has a deadline (004 may play the discussion without a timer)."""
        return True

    def runs(self, t) -> bool:
        """Whether this night step wakes tonight (e.g. its role is in play and alive)."""
        return True

    def open(self, t) -> None:
        """Open the phase's prompts and tell the players what they learn now."""

    def act(self, t, seat: int, action: str, targets: list) -> None:
        raise NotImplementedError

    def done(self, t) -> bool:
        """Everyone who must act has acted. By default: no prompt left open."""
        return not t.s.prompts

    def close(self, t) -> None:
        """Resolve the phase (its prompts are closed already) and move the game on."""
        t.next_night_step(after=self.night_order)


class ReactionStep(Step):
    """A death reaction: the dying seat queued in `state.pending` answers one prompt."""

    def actor(self, t) -> int:
        return next(p["seat"] for p in t.s.pending if p["kind"] == self.phase)

    def close(self, t) -> None:
        seat = self.actor(t)
        t.s.pending.remove({"kind": self.phase, "seat": seat})
        self.resolve(t, seat)
        t.continue_chain()

    def resolve(self, t, seat: int) -> None:
        raise NotImplementedError


def living(state) -> list:
    return [seat for seat, alive in enumerate(state.alive) if alive]


def holder(state, role: str) -> int | None:
    """The seat dealt `role` (special roles are unique), or None when not in play."""
    try:
        return state.roles.index(role)
    except ValueError:
        return None


def option(state, setting: str):
    """The value of a house rule in this game (a game stored before the rule existed: default)."""
    value = state.settings.get("rules", {}).get(setting)
    return SETTING_DEFAULTS[setting] if value is None else value


SETTING_DEFAULTS: dict = {}  # setting id -> default (filled by rules.registry)
ALLEGIANCES: list = []  # the roles' allegiance overrides (filled by rules.registry)
TURNED: list = []  # the roles' turns_wolf (filled by rules.registry)
KILL_ACTIONS: set = set()  # the actions of steps that kill (filled by rules.registry)
SIDE_WINS: list = []  # the sides' own win conditions (filled by rules.registry)
UNCOUNTED: list = []  # the roles' parity exclusions (filled by rules.registry)


def concealed(state) -> bool:
    """Cards may be unknown to the table: a death hides its card, or a dealt role may be missing
    (004). Then no step's timing may tell whether its holder lives (O1)."""
    return option(state, "reveal_night_deaths") == "no" or option(state, "reveal_exile") == "no" \
        or option(state, "missing_role") == "on"


def side_condition(state) -> bool:
    """A side (the village or the pack) meets its own win condition now."""
    return any(win.check(state) is not None for win in SIDE_WINS)


def counted(state, seat: int) -> bool:
    return not any(left_out(state, seat) for left_out in UNCOUNTED)


def seats_of(state, role: str) -> list:
    return [seat for seat, card in enumerate(state.roles) if card == role]


def allegiance(state, seat: int) -> str:
    for moved in ALLEGIANCES:
        team = moved(state, seat)
        if team is not None:
            return team
    return CARDS[state.roles[seat]].team


def side(state, team: str) -> list:
    """The seats playing for `team`, dead or alive: the winners when it wins."""
    return [seat for seat in range(len(state.roles)) if allegiance(state, seat) == team]


def card_team(state, seat: int) -> str:
    return CARDS[state.roles[seat]].team


def guarded(state, seat: int) -> bool:
    """Whether tonight's Guard's pick holds on `seat` (some cards refuse protection, O3)."""
    return state.memo["night"].get("protect") == seat and CARDS[state.roles[seat]].protectable


def is_wolf(state, seat: int) -> bool:
    """One of the pack: a wolf card, or a seat a role turned (the Infect Father's victim)."""
    return CARDS[state.roles[seat]].wolf or any(turned(state, seat) for turned in TURNED)


def wolves(state) -> list:
    """The pack's seats, dead or alive."""
    return [s for s in range(len(state.roles)) if is_wolf(state, s)]


def living_wolves(state) -> list:
    return [s for s, alive in enumerate(state.alive) if alive and is_wolf(state, s)]


def has_power(state, seat: int) -> bool:
    """A card's power works (the Elder's penalty takes every non-wolf power away)."""
    return not (state.memo.get("powers_lost") and not is_wolf(state, seat))


def powered_holder(state, role: str) -> int | None:
    """The living holder of `role` whose power works, or None."""
    seat = holder(state, role)
    if seat is None or not state.alive[seat] or not has_power(state, seat):
        return None
    return seat
