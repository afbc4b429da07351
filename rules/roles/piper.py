"""Pied Piper (003): plays alone. Each night after the Witch he charms two players; every charmed
player learns who is charmed (not who the Piper is). He wins alone when he is alive and every
other living player is charmed, before any side's win."""

from rules.events import EventKind
from rules.role import Role, Step, Win, living, powered_holder


def charmed(state) -> list:
    return state.memo.get("piper", {}).get("charmed", [])


class PiperStep(Step):
    phase = "night.piper"
    duration = "piper"
    actions = ("piper.charm",)
    waiting_action = "piper.charm"
    night_order = 50  # after the Witch (003)
    names_waiting_seats = False

    holder_role = "piper"

    def runs(self, t) -> bool:
        return powered_holder(t.s, "piper") is not None

    def open(self, t) -> None:
        piper = powered_holder(t.s, "piper")
        # never himself, never one already charmed; all that are left if fewer than two (O42)
        choices = [s for s in living(t.s) if s != piper and s not in charmed(t.s)]
        if choices:
            t.open_prompt(piper, "piper.charm", choices, 0, min(2, len(choices)))

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            now = sorted(charmed(t.s) + targets)
            t.s.memo["piper"] = {"charmed": now}
            # one event to the Piper and every living charmed player: each sees the whole list
            # (not who the Piper is); two copies of it would be told twice at the end
            t.emit("charmed", sorted({seat, *(s for s in now if t.s.alive[s])}), charmed=now)


def all_charmed(state) -> list | None:
    piper = next((s for s, r in enumerate(state.roles) if r == "piper"), None)
    if piper is None or not state.alive[piper]:
        return None
    others = [s for s in living(state) if s != piper]
    if others and all(s in charmed(state) for s in others):
        return [piper]
    return None


def view_fields(state, seat: int) -> dict:
    now = charmed(state)
    return {"charmed": list(now) if state.roles[seat] == "piper" or seat in now else None}


ROLE = Role(
    id="piper", team="piper",
    steps=(PiperStep(),),
    # first of all (5): a shot may still kill him, so it does not settle before the shots
    wins=(Win("piper_charmed_all", 5, all_charmed, settles=False),),
    view=view_fields,
    durations={"piper": 30},
    events=(
        EventKind("charmed", ("charmed",), "the charmed",
                  "the charmed seats, told to them (and the Piper's new ones to him)"),
    ),
)
