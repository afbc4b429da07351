"""Cupid: on the first night links two players (himself allowed); lovers die of grief together."""

from rules.table import DEATH_HOOKS, VIEW_FIELDS, Step, Table, holder, living, register


@register
class CupidStep(Step):
    phase = "night.cupid"
    duration = "cupid"
    actions = ("cupid.link",)
    waiting_action = "cupid.link"
    night_order = 10
    names_waiting_seats = False

    def runs(self, t: Table) -> bool:
        cupid = holder(t.s, "cupid")
        return t.s.day == 1 and cupid is not None and t.s.alive[cupid]

    def open(self, t: Table) -> None:
        t.open_prompt(holder(t.s, "cupid"), "cupid.link", living(t.s), 2, 2)

    def act(self, t: Table, seat: int, action: str, targets: list) -> None:
        lovers = sorted(targets)
        t.s.memo["cupid"] = {"lovers": lovers}
        t.close_prompt(seat, action)
        # Each lover learns the other's seat (and name), never the role; Cupid knows his work.
        t.emit("lovers", sorted(set(lovers) | {seat}), lovers=lovers)

    def close(self, t: Table) -> None:
        t.next_night_step(after=self.night_order)


def lovers_of(state) -> list | None:
    return state.memo.get("cupid", {}).get("lovers")


def grief(t: Table, seat: int) -> None:
    lovers = lovers_of(t.s)
    if lovers and seat in lovers:
        other = lovers[1] if lovers[0] == seat else lovers[0]
        t.kill(other, "grief")


def view_fields(state, seat: int) -> dict:
    lovers = lovers_of(state)
    lover = None
    if lovers and seat in lovers:
        lover = lovers[1] if lovers[0] == seat else lovers[0]
    is_cupid = state.roles[seat] == "cupid"
    return {"lover": lover, "linked": lovers if is_cupid and lovers else None}


DEATH_HOOKS.append(grief)
VIEW_FIELDS.append(view_fields)
