"""Seer: each night looks at one living player's card (as that card shows itself to her)."""

from rules.role import CARDS, Role, Step, living, powered_holder


class SeerStep(Step):
    phase = "night.seer"
    duration = "seer"
    actions = ("seer.inspect",)
    waiting_action = "seer.inspect"
    night_order = 20
    names_waiting_seats = False

    def runs(self, t) -> bool:
        return powered_holder(t.s, "seer") is not None

    def open(self, t) -> None:
        seer = powered_holder(t.s, "seer")
        t.open_prompt(seer, "seer.inspect", [s for s in living(t.s) if s != seer], 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        target = targets[0]
        card = CARDS[t.s.roles[target]]
        role = card.seen_as or card.id
        t.s.memo.setdefault("seer", {"results": []})["results"].append(
            {"seat": target, "role": role, "night": t.s.day})
        t.close_prompt(seat, action)
        t.emit("seer_result", [seat], seat=target, role=role)


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "seer":
        return {"seer_results": None}
    return {"seer_results": list(state.memo.get("seer", {}).get("results", []))}


ROLE = Role(id="seer", steps=(SeerStep(),), view=view_fields, durations={"seer": 30})
