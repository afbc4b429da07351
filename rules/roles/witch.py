"""Witch: learns the wolves' victim; a life potion and a death potion, each once per game."""

from rules.table import VIEW_FIELDS, Step, Table, holder, living, register


@register
class WitchStep(Step):
    phase = "night.witch"
    duration = "witch"
    actions = ("witch.save", "witch.poison")
    waiting_action = "witch.poison"
    night_order = 40
    names_waiting_seats = False

    def runs(self, t: Table) -> bool:
        witch = holder(t.s, "witch")
        return witch is not None and t.s.alive[witch]

    def open(self, t: Table) -> None:
        witch = holder(t.s, "witch")
        potions = t.s.memo.setdefault("witch", {"life": True, "death": True})
        victim = t.s.memo["night"]["victim"]
        potions["told"] = victim
        t.emit("witch_victim", [witch], victim=victim)
        if potions["life"] and victim is not None:
            t.open_prompt(witch, "witch.save", [victim], 0, 1)
        if potions["death"]:
            t.open_prompt(witch, "witch.poison", [s for s in living(t.s) if s != witch], 0, 1)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        potions = t.s.memo["witch"]
        night = t.s.memo["night"]
        if targets and action == "witch.save":
            potions["life"] = False
            night["deaths"].remove([targets[0], "wolves"])
        elif targets:
            potions["death"] = False
            night["deaths"].append([targets[0], "poison"])
        t.close_prompt(seat, action)

    def done(self, t: Table) -> bool:
        # Only the deadline ends her step, answered or not: if answering ended it early, a step
        # that lasts its full time would tell the table her potions are spent (RULES.md, D9).
        return False

    def close(self, t: Table) -> None:
        t.next_night_step(after=self.night_order)


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "witch":
        return {"witch": None}
    potions = state.memo.get("witch", {"life": True, "death": True})
    return {"witch": {"victim": potions.get("told"), "life": potions["life"],
                      "death": potions["death"]}}


VIEW_FIELDS.append(view_fields)
