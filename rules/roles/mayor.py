"""The mayor (elected, not dealt): a dying mayor names a successor among the living."""

from rules.table import DEATH_HOOKS, Step, Table, living, register


@register
class SuccessorStep(Step):
    phase = "successor"
    duration = "successor"
    actions = ("mayor.successor",)
    waiting_action = "mayor.successor"

    def open(self, t: Table) -> None:
        t.open_prompt(_dying_mayor(t), "mayor.successor", living(t.s), 1, 1)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        t.s.mayor = targets[0]
        t.close_prompt(seat, action)
        t.emit("mayor", None, seat=targets[0], how="successor")

    def close(self, t: Table) -> None:
        dying = _dying_mayor(t)
        t.s.pending = [p for p in t.s.pending if p != {"kind": "successor", "seat": dying}]
        if t.s.mayor == dying:
            # Named nobody in time: the village has no mayor any more.
            t.s.mayor = None
            t.emit("mayor", None, seat=None, how="none")
        t.continue_chain()


def _dying_mayor(t: Table) -> int:
    return next(p["seat"] for p in t.s.pending if p["kind"] == "successor")


def on_death(t: Table, seat: int) -> None:
    if t.s.mayor == seat:
        t.s.pending.append({"kind": "successor", "seat": seat})


DEATH_HOOKS.append(on_death)
