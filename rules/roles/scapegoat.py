"""Scapegoat (003): when the day's vote is tied he dies instead, and names who may vote on the
next day."""

from rules.events import EVERYONE, EventKind
from rules.role import ReactionStep, Role, living, powered_holder


class ScapegoatStep(ReactionStep):
    phase = "scapegoat"
    duration = "scapegoat"
    actions = ("scapegoat.designate",)
    waiting_action = "scapegoat.designate"
    reaction = "after"

    def open(self, t) -> None:
        alive = living(t.s)
        t.open_prompt(self.actor(t), "scapegoat.designate", alive, 0, len(alive))

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.s.memo["scapegoat"] = {"chosen": sorted(targets)}
        t.close_prompt(seat, action)

    def resolve(self, t, seat: int) -> None:
        # [] passes, as a timeout does: naming is optional (可以指定), nobody is restricted
        chosen = t.s.memo.pop("scapegoat", {}).get("chosen")
        if chosen:
            t.s.memo["scapegoat"] = {"voters": chosen, "day": t.s.day + 1}
            t.emit("scapegoat_voters", None, voters=chosen, day=t.s.day + 1)


def tie_break(t, tied: list) -> bool:
    """While he lives with his power every tie kills him, whether or not he is among the tied:
    before the mayor's tie-break (O34)."""
    scapegoat = powered_holder(t.s, "scapegoat")
    if scapegoat is None:
        return False
    t.eliminate(scapegoat, "scapegoat")
    return True


def on_death(t, seat: int, cause: str) -> None:
    if cause == "scapegoat":
        t.s.pending.append({"kind": "scapegoat", "seat": seat})


def designated(state, seat: int, action: str, choices: list) -> list | None:
    chosen = state.memo.get("scapegoat")
    if action == "vote" and chosen and chosen["day"] == state.day and seat not in chosen["voters"]:
        return None
    return choices


ROLE = Role(
    id="scapegoat",
    steps=(ScapegoatStep(),),
    tie_break=tie_break, tie_order=10,
    on_death=on_death,
    prompt_filter=designated,
    durations={"scapegoat": 30},
    events=(
        EventKind("scapegoat_voters", ("voters", "day"), EVERYONE,
                  "the seats the Scapegoat lets vote on that day"),
    ),
)
