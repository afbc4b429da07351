"""Infect Father of Wolves (001 names him among the later editions' wolves and says nothing
more: the genre's standard rule, RULES.md "Roles the seeds only name"). One of the pack in every
way; once per game, after the pack has chosen, he may infect its victim instead of letting him
die: the victim lives, keeps his card and its power, and from then on is one of the pack (wakes
and talks with it, counts as a wolf, wins with it). Only he and the pack learn it."""

from rules.events import EventKind
from rules.role import Dawn, Role, Step, living_wolves, is_wolf, option, powered_holder


def infected(state) -> int | None:
    return state.memo.get("infect_father", {}).get("infected")


class InfectStep(Step):
    phase = "night.infect_father"
    duration = "infect_father"
    actions = ("infect_father.infect",)
    waiting_action = "infect_father.infect"
    night_order = 32  # after the pack, before the other wolves' own kills and the Witch
    names_waiting_seats = False
    holder_role = "infect_father"

    def scheduled(self, t) -> bool:
        return t.s.day > 1 or option(t.s, "first_night_kill") == "on"

    def runs(self, t) -> bool:
        # every night while he lives, power spent or not: its running must not tell that he used it
        return powered_holder(t.s, "infect_father") is not None and (
            t.s.day > 1 or option(t.s, "first_night_kill") == "on")

    def open(self, t) -> None:
        father = powered_holder(t.s, "infect_father")
        victim = t.s.memo["night"]["victim"]
        if not t.s.memo.get("infect_father", {}).get("used") and victim is not None \
                and not is_wolf(t.s, victim):
            t.open_prompt(father, "infect_father.infect", [victim], 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            t.s.memo["infect_father"] = {"used": True, "target": targets[0], "by": seat}

    def done(self, t) -> bool:
        return False  # always its full time (as the Witch's, D9)


def infect(t, night: dict) -> None:
    """Before the Witch's save: the pack's kill is taken back and the victim joins the pack. A
    victim the kill did not reach (the Guard protected him) is not infected; the power is spent
    all the same (he could not know). An Elder is infected before his spare life is asked."""
    memo = t.s.memo.get("infect_father", {})
    target = memo.pop("target", None)
    father = memo.pop("by", None)
    if target is None or [target, "wolves"] not in night["deaths"]:
        if father is not None:  # the power spent on a victim the kill did not reach
            t.remember(father, "infect_father.infect", [target])
        return
    # told to the infected and the pack only: the end tells the rest of the table
    t.remember(father, "infect_father.infected", [target])
    night["deaths"].remove([target, "wolves"])
    memo["infected"] = target
    pack = living_wolves(t.s)
    t.emit("infected", [target], wolves=pack)
    t.emit("wolves", pack, wolves=pack)


def turned(state, seat: int) -> bool:
    return infected(state) == seat


def moved(state, seat: int) -> str | None:
    return "wolves" if infected(state) == seat else None


ROLE = Role(
    id="infect_father", team="wolves", wolf=True,
    steps=(InfectStep(),),
    dawn=(Dawn(25, infect),),
    turns_wolf=turned,
    allegiance=moved,
    durations={"infect_father": 30},
    events=(
        EventKind("infected", ("wolves",), "the infected seat",
                  "you were infected: one of the pack now (its seats)"),
    ),
)
