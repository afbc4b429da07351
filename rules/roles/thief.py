"""Thief: first of all on night 1 (001, 002, 003), in one of the seeds' two ways (`thief_mode`).

- `steal` (001): he may take the card of any other player, who plays on as a plain Villager, even
  a wolf.
- `extra_cards` (002, 003): two cards more than the seats are dealt (`thief_extra_cards`); the
  Thief's card is always dealt and two cards lie aside. He sees them and may take one; his Thief
  card goes aside in its place (003). When the cards aside are wolves he must take one
  (`thief_forced_wolf`: both wolves, 003; at least one, 002); forced, a timeout takes one by lot.

A Thief who takes nothing keeps a card with no power: a plain villager (O9). The seats' cards
change at once and for good: the card is what the Seer, the dead and the end show, and what wins.
"""

from rules.events import EventKind
from rules.role import CARDS, Role, Setting, Step, living, living_wolves, option, powered_holder

TAKE = ("thief.take_first", "thief.take_second")  # the first or the second card set aside
KEEP = "thief.keep"  # take neither: offered where he is not forced to take a wolf
EXTRA = {"two_villagers": ["villager", "villager"],  # 003; 002's default reading (O12)
         "villager_and_werewolf": ["villager", "werewolf"],  # 002: the host's two cards
         "two_werewolves": ["werewolf", "werewolf"]}


def extra_cards(rules: dict) -> list:
    return list(EXTRA[rules["thief_extra_cards"]]) if rules["thief_mode"] == "extra_cards" else []


def set_aside(rules: dict, deck: list, rng) -> tuple:
    """The shuffled deck holds two cards more than the seats. The two set aside are the last two
    plain cards (Villagers, Werewolves): a special role set aside would be a listed role absent,
    whose step would have to run its full time to stay secret (O1), so none is; the Thief's card
    is always dealt (O8). Shuffled again until a wolf is dealt (O8)."""
    while True:
        plain = [i for i, card in enumerate(deck) if CARDS[card].deal in ("filler", "pack")]
        out = plain[-2:]
        seats = [card for i, card in enumerate(deck) if i not in out]
        if any(CARDS[card].wolf for card in seats):
            return seats, [deck[i] for i in out]
        rng.shuffle(deck)


def forced(state) -> bool:
    wolves = [CARDS[card].wolf for card in state.memo["thief"]["aside"]]
    return all(wolves) if option(state, "thief_forced_wolf") == "if_both_wolves" else any(wolves)


def offered(state) -> list:
    """The cards set aside he may take: only the wolves when he is forced to take one."""
    aside = state.memo["thief"]["aside"]
    return [i for i in (0, 1) if CARDS[aside[i]].wolf or not forced(state)]


class ThiefStep(Step):
    phase = "night.thief"
    duration = "thief"
    actions = ("thief.steal", *TAKE, KEEP)
    waiting_action = "thief.steal"
    night_order = 5  # before everyone, even Cupid (001, 002, 003)
    names_waiting_seats = False

    holder_role = "thief"

    def scheduled(self, t) -> bool:
        return t.s.day == 1

    def runs(self, t) -> bool:
        return self.scheduled(t) and powered_holder(t.s, "thief") is not None

    def open(self, t) -> None:
        thief = powered_holder(t.s, "thief")
        if option(t.s, "thief_mode") == "steal":
            t.open_prompt(thief, "thief.steal", [s for s in living(t.s) if s != thief], 1, 1)
            return
        memo = t.s.memo["thief"]
        memo["seat"] = thief
        t.emit("thief_cards", [thief], cards=list(memo["aside"]))
        for i in offered(t.s):
            t.open_prompt(thief, TAKE[i], [], 0, 0)
        if not forced(t.s):
            t.open_prompt(thief, KEEP, [], 0, 0)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        if action == "thief.steal":
            t.close_prompt(seat, action)
            robbed = targets[0]
            # the state's lists are shared between clones: replace, never mutate
            roles = t.s.roles[:]
            roles[seat], roles[robbed] = roles[robbed], "villager"
            t.s.roles = roles
            # Each learns his new card at once, privately; neither is told by whom (O10).
            t.emit("role", [seat], role=roles[seat])
            t.emit("role", [robbed], role="villager")
            self.tell_pack(t, roles[seat])
            return
        for other in [p["action"] for p in t.s.prompts if p["seat"] == seat]:
            t.close_prompt(seat, other)
        if action != KEEP:
            self.take(t, seat, TAKE.index(action))

    def take(self, t, seat: int, i: int) -> None:
        aside = t.s.memo["thief"]["aside"]
        roles = t.s.roles[:]
        roles[seat], aside[i] = aside[i], roles[seat]
        t.s.roles = roles
        t.emit("role", [seat], role=roles[seat])
        self.tell_pack(t, roles[seat])

    def tell_pack(self, t, card: str) -> None:
        if CARDS[card].wolf:
            # the pack learns its new member (and, robbed, its lost one); the robbed learns nothing
            wolves = living_wolves(t.s)
            t.emit("wolves", wolves, wolves=wolves)

    def close(self, t) -> None:
        memo = t.s.memo.get("thief")
        if memo and "seat" in memo and t.s.roles[memo["seat"]] == "thief" and forced(t.s):
            self.take(t, memo["seat"], t.rng().choice(offered(t.s)))  # forced: by lot
        super().close(t)


def view_fields(state, seat: int) -> dict:
    memo = state.memo.get("thief")
    return {"thief_cards": list(memo["aside"]) if memo and memo.get("seat") == seat else None}


ROLE = Role(
    id="thief", plain=True,
    steps=(ThiefStep(),),
    extra_cards=extra_cards, set_aside=set_aside,
    view=view_fields,
    settings=(
        Setting("thief_mode", ("steal", "extra_cards"), "extra_cards", "thief", "001, 002, 003"),
        Setting("thief_extra_cards", tuple(EXTRA), "two_villagers", "thief", "002, 003"),
        Setting("thief_forced_wolf", ("if_both_wolves", "if_any_wolf"), "if_both_wolves", "thief",
                "002, 003"),
    ),
    durations={"thief": 30},
    events=(
        EventKind("thief_cards", ("cards",), "the Thief", "the cards set aside, to take one"),
    ),
)
