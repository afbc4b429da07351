"""Werewolves: know each other, point at a victim each night; unanimity settles it at once."""

from collections import Counter

from rules.settings import WOLF
from rules.table import VIEW_FIELDS, Step, Table, living, register


def living_wolves(state) -> list:
    return [s for s in living(state) if state.roles[s] == WOLF]


@register
class WolvesStep(Step):
    phase = "night.wolves"
    duration = "wolves"
    actions = ("wolves.point",)
    waiting_action = "wolves.point"
    night_order = 30
    names_waiting_seats = False

    def open(self, t: Table) -> None:
        t.s.memo["wolves"] = {"pointing": {}}
        # Wolves may only target living non-wolves (RULES.md, D1).
        choices = [s for s in living(t.s) if t.s.roles[s] != WOLF]
        for wolf in living_wolves(t.s):
            t.open_prompt(wolf, "wolves.point", choices, 0, 1)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        pointing = t.s.memo["wolves"]["pointing"]
        target = targets[0] if targets else None
        if target is None:
            pointing.pop(str(seat), None)
        else:
            pointing[str(seat)] = target
        # The prompt stays open: a wolf may change his mind until the pack agrees.
        t.emit("pointed", living_wolves(t.s), seat=seat, target=target)

    def done(self, t: Table) -> bool:
        pointing = t.s.memo["wolves"]["pointing"]
        wolves = living_wolves(t.s)
        return len(pointing) == len(wolves) and len(set(pointing.values())) == 1

    def close(self, t: Table) -> None:
        tally = Counter(t.s.memo["wolves"]["pointing"].values())
        victim = None
        if tally:
            top = max(tally.values())
            tied = sorted(seat for seat, n in tally.items() if n == top)
            victim = tied[0] if len(tied) == 1 else t.rng().choice(tied)
        night = t.s.memo["night"]
        night["victim"] = victim
        if victim is not None:
            night["deaths"].append([victim, "wolves"])
        t.next_night_step(after=self.night_order)


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != WOLF:
        return {"wolves": None, "pointing": None}
    wolves = [s for s, role in enumerate(state.roles) if role == WOLF]
    pointing = None
    if state.phase == "night.wolves" and state.alive[seat]:
        pointing = dict(state.memo["wolves"]["pointing"])
    return {"wolves": wolves, "pointing": pointing}


VIEW_FIELDS.append(view_fields)
