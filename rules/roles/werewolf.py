"""Werewolves: know each other, point at a victim each night; unanimity settles it at once where
the table can count the pack (D16), else at the step's deadline."""

from collections import Counter

from rules.events import EventKind
from rules.role import (CARDS, Dawn, Fact, Role, Setting, Step, Win, allegiance, counted, is_wolf,
                        living, living_wolves, option, side, wolves)


def pack_grows_unseen(state) -> bool:
    """A card in the public deal may make a seat a wolf the table does not see: one that turns
    a seat (the Infect Father's victim), or one dealing cards aside (the Thief's: a wolf card
    may lie aside or be taken), so even with every card shown at death nobody counts the pack."""
    rules = state.settings["rules"]
    return any(CARDS[role].turns_wolf or (CARDS[role].extra_cards
                                          and CARDS[role].extra_cards(rules))
               for role in state.memo.get("in_play", ()))


class WolvesStep(Step):
    phase = "night.wolves"
    duration = "wolves"
    actions = ("wolves.point",)
    kill_actions = actions
    waiting_action = "wolves.point"
    night_order = 30
    names_waiting_seats = False

    def runs(self, t) -> bool:
        return t.s.day > 1 or option(t.s, "first_night_kill") == "on"  # 004: nobody leaves

    def open(self, t) -> None:
        t.s.memo["wolves"] = {"pointing": {}}
        # Wolves may only target living non-wolves (RULES.md, D1); 002: anyone but themselves.
        anyone = option(t.s, "wolves_may_target") == "anyone"
        for wolf in living_wolves(t.s):
            choices = [s for s in living(t.s) if s != wolf if anyone or not is_wolf(t.s, s)]
            t.open_prompt(wolf, "wolves.point", choices, 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        pointing = t.s.memo["wolves"]["pointing"]
        target = targets[0] if targets else None
        if target is None:
            pointing.pop(str(seat), None)
        else:
            pointing[str(seat)] = target
        # The prompt stays open: a wolf may change his mind until the pack agrees.
        t.emit("pointed", living_wolves(t.s), seat=seat, target=target)

    def done(self, t) -> bool:
        # Agreeing ends the step only where the table can count the pack: otherwise its length
        # would tell how many wolves point (D16; with hidden cards `Table.holds` waits anyway).
        pointing = t.s.memo["wolves"]["pointing"]
        return not pack_grows_unseen(t.s) and len(pointing) == len(living_wolves(t.s)) \
            and len(set(pointing.values())) == 1

    def close(self, t) -> None:
        tally = Counter(t.s.memo["wolves"]["pointing"].values())
        victim = None
        if tally:
            top = max(tally.values())
            tied = sorted(seat for seat, n in tally.items() if n == top)
            victim = tied[0] if len(tied) == 1 else t.rng().choice(tied)
        t.s.memo["night"]["victim"] = victim
        super().close(t)


def attack(t, night: dict) -> None:
    """The victim dies unless a protection holds on him."""
    victim = night["victim"]
    if victim is not None and victim not in night["protected"]:
        night["deaths"].append([victim, "wolves"])


def view_fields(state, seat: int) -> dict:
    if not is_wolf(state, seat):
        return {"wolves": None, "pointing": None}
    pointing = None
    if state.phase == "night.wolves" and state.alive[seat]:
        pointing = dict(state.memo["wolves"]["pointing"])
    return {"wolves": wolves(state), "pointing": pointing}


def attacker(t, victim: int) -> int:
    """004's "attacking werewolf" (Nekomata, Psycho Killer), when the pack chose together: a
    seeded draw among the living wolves whose last pointing was the victim, all living wolves if
    none was (O4)."""
    pointing = t.s.memo.get("wolves", {}).get("pointing", {})
    pool = sorted(int(w) for w, target in pointing.items()
                  if target == victim and t.s.alive[int(w)]) or living_wolves(t.s)
    return pool[0] if len(pool) == 1 else t.rng().choice(pool)


def only_wolves_alive(state) -> list | None:
    """Every living player plays for the pack, at least one of them a wolf: 004's Traitor (no
    wolf, O44) counts with it; a living White Werewolf, a wolf who plays for himself, keeps the
    game going."""
    alive = living(state)
    if alive and living_wolves(state) and all(allegiance(state, s) == "wolves" for s in alive):
        return side(state, "wolves")
    return None


def no_village_side_left(state) -> list | None:
    """003's 屠边: every dealt plain Villager dead, or every dealt powered village card dead
    (a side dealt empty never counts: O48)."""
    rule = option(state, "wolves_win")
    # a pack that plays for itself must live: a lone White Werewolf wins only alone
    if rule not in ("kill_side", "kill_all") or not any(
            allegiance(state, s) == "wolves" for s in living_wolves(state)):
        return None
    village = [s for s, role in enumerate(state.roles) if CARDS[role].team == "village"
               and not is_wolf(state, s)]
    plain = [s for s in village if CARDS[state.roles[s]].plain]
    powered = [s for s in village if not CARDS[state.roles[s]].plain]
    dead = lambda seats: seats and not any(state.alive[s] for s in seats)  # noqa: E731
    if (rule == "kill_all" and dead(village)) or (
            rule == "kill_side" and (dead(plain) or dead(powered))):
        return side(state, "wolves")
    return None


def at_parity(state) -> list | None:
    """004: the pack wins once the living wolves are at least as many as the others (O47: a
    chain of deaths can jump past equality). The Traitor is no wolf: he counts among the others;
    a Fox counts only with `fox_counted` (1.10). The pack is the wolves who play for it: a White
    Werewolf, or a wolf among mixed lovers, counts among the others."""
    if option(state, "wolves_win") != "parity":
        return None
    pack = [s for s in living_wolves(state) if allegiance(state, s) == "wolves"]
    others = sum(1 for s in living(state) if s not in pack and counted(state, s))
    if pack and len(pack) >= others:
        return side(state, "wolves")
    return None


ROLE = Role(
    id="werewolf", team="wolves", wolf=True, deal="pack",
    steps=(WolvesStep(),),
    dawn=(Dawn(20, attack),),
    wins=(Win("only_wolves_alive", 30, only_wolves_alive, settles=False, side="wolves"),
          Win("village_side_killed", 31, no_village_side_left, side="wolves"),
          # a shot may still kill a wolf and undo it
          Win("wolves_at_parity", 32, at_parity, settles=False, side="wolves")),
    view=view_fields,
    facts=(Fact("wolves", "others", told_by="wolves", told_in="wolves"),),
    settings=(
        Setting("wolf_count", ("table_000", "table_004", 1, 2, 3, 4, 5), "table_000",
                "werewolf", "000"),
        Setting("wolves_win", ("only_wolves", "kill_side", "kill_all", "parity"), "only_wolves",
                "werewolf", "003, 004"),
        Setting("wolves_may_target", ("non_wolves", "anyone"), "non_wolves", "werewolf", "002"),
        Setting("first_night_kill", ("on", "off"), "on", "werewolf", "004"),
    ),
    durations={"wolves": 60},
    events=(
        EventKind("wolves", ("wolves",), "the pack",
                  "the pack's seats, told to the pack (again when it grows)"),
        EventKind("pointed", ("seat", "target"), "the pack", "a wolf points at a victim"),
    ),
)
