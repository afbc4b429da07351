"""Guard: each night names a player the wolves cannot kill that night (the poison still can)."""

from rules.role import Dawn, Role, Setting, Step, guarded, living, option, powered_holder


class GuardStep(Step):
    phase = "night.guard"
    duration = "guard"
    actions = ("guard.protect",)
    waiting_action = "guard.protect"
    night_order = 25  # before the wolves' kill (003) and before the Witch (002)
    names_waiting_seats = False

    holder_role = "guard"

    def scheduled(self, t) -> bool:
        # no Guard on a first night without kills (004, O14)
        return t.s.day > 1 or option(t.s, "first_night_kill") == "on"

    def runs(self, t) -> bool:
        return powered_holder(t.s, "guard") is not None and self.scheduled(t)

    def open(self, t) -> None:
        guard = powered_holder(t.s, "guard")
        last = t.s.memo.get("guard", {})
        choices = living(t.s)
        if option(t.s, "guard_self") == "no":
            choices.remove(guard)
        # "Two nights running" compares with last night's actual pick: a night he protected
        # nobody frees everyone again (O22). Only he sees his menu, so it tells nobody anything.
        if option(t.s, "guard_repeat") == "forbidden" and last.get("night") == t.s.day - 1:
            choices = [s for s in choices if s != last["seat"]]
        t.open_prompt(guard, "guard.protect", choices, 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            t.remember(seat, action, targets)
            t.s.memo["guard"] = {"seat": targets[0], "night": t.s.day}
            t.s.memo["night"]["protect"] = targets[0]


def protect(t, night: dict) -> None:
    """Protection holds on every card but those that refuse it (the Little Girl, 003): silently,
    the Guard is never told (O3)."""
    target = night.get("protect")
    if target is not None and guarded(t.s, target):
        night["protected"].append(target)


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "guard":
        return {"guard": None}
    return {"guard": {"last": state.memo.get("guard", {}).get("seat")}}


ROLE = Role(
    id="guard",
    steps=(GuardStep(),),
    dawn=(Dawn(10, protect),),
    view=view_fields,
    settings=(Setting("guard_self", ("no", "yes"), "no", "guard", "004"),
              Setting("guard_repeat", ("allowed", "forbidden"), "allowed", "guard", "004")),
    durations={"guard": 30},
)
