"""Seer: each night looks at one living player's card."""

from rules.table import VIEW_FIELDS, Step, Table, holder, living, register


@register
class SeerStep(Step):
    phase = "night.seer"
    duration = "seer"
    actions = ("seer.inspect",)
    waiting_action = "seer.inspect"
    night_order = 20
    names_waiting_seats = False

    def runs(self, t: Table) -> bool:
        seer = holder(t.s, "seer")
        return seer is not None and t.s.alive[seer]

    def open(self, t: Table) -> None:
        seer = holder(t.s, "seer")
        t.open_prompt(seer, "seer.inspect", [s for s in living(t.s) if s != seer], 1, 1)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        target = targets[0]
        role = t.s.roles[target]
        t.s.memo.setdefault("seer", {"results": []})["results"].append(
            {"seat": target, "role": role, "night": t.s.day})
        t.close_prompt(seat, action)
        t.emit("seer_result", [seat], seat=target, role=role)

    def close(self, t: Table) -> None:
        t.next_night_step(after=self.night_order)


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "seer":
        return {"seer_results": None}
    return {"seer_results": list(state.memo.get("seer", {}).get("results", []))}


VIEW_FIELDS.append(view_fields)
