"""Hunter: whenever and however he dies, he shoots a living player, who dies with him."""

from rules.table import DEATH_HOOKS, Step, Table, living, register


@register
class HunterStep(Step):
    phase = "hunter"
    duration = "hunter"
    actions = ("hunter.shoot",)
    waiting_action = "hunter.shoot"

    def open(self, t: Table) -> None:
        t.open_prompt(_shooter(t), "hunter.shoot", living(t.s), 1, 1)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        t.s.memo["hunter"] = {"target": targets[0]}
        t.close_prompt(seat, action)

    def close(self, t: Table) -> None:
        shooter = _shooter(t)
        t.s.pending = [p for p in t.s.pending if p != {"kind": "hunter", "seat": shooter}]
        target = t.s.memo.pop("hunter", {}).get("target")
        if target is not None:
            t.kill(target, "hunter")
        t.continue_chain()


def _shooter(t: Table) -> int:
    return next(p["seat"] for p in t.s.pending if p["kind"] == "hunter")


def on_death(t: Table, seat: int) -> None:
    if t.s.roles[seat] == "hunter":
        t.s.pending.append({"kind": "hunter", "seat": seat})


DEATH_HOOKS.append(on_death)
