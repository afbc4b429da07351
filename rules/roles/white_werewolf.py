"""White Werewolf (001 names him among the later editions' wolves and says nothing more: this is
the genre's standard rule, RULES.md "Roles the seeds only name"). He hunts with the pack and is
one of it for every count, but plays for himself: every second night (2, 4, ...), after the pack,
he may devour one other wolf, and he wins alone as the last player alive."""

from rules.role import Dawn, Role, Step, Win, living, living_wolves, powered_holder


class WhiteWerewolfStep(Step):
    phase = "night.white_werewolf"
    duration = "white_werewolf"
    actions = ("white_werewolf.devour",)
    kill_actions = actions
    waiting_action = "white_werewolf.devour"
    night_order = 36  # after the pack and its other wolves, before the Witch
    names_waiting_seats = False
    holder_role = "white_werewolf"

    def scheduled(self, t) -> bool:
        return t.s.day % 2 == 0

    def runs(self, t) -> bool:
        return self.scheduled(t) and powered_holder(t.s, "white_werewolf") is not None

    def open(self, t) -> None:
        # The prompt opens even when no other wolf lives (empty menu): whether the step ends
        # early must not tell the table how many wolves are left (an infected one counts).
        white = powered_holder(t.s, "white_werewolf")
        others = [s for s in living_wolves(t.s) if s != white]
        t.open_prompt(white, "white_werewolf.devour", others, 0, min(1, len(others)))

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            t.s.memo["night"]["devoured"] = targets[0]

    def done(self, t) -> bool:
        return False  # always its full time, answered or not (as the Witch's, D9)


def devour(t, night: dict) -> None:
    """His victim dies unless the Guard protects him: the Guard's protection holds against every
    wolf's attack. The Witch is not shown this victim (she learns the pack's)."""
    target = night.get("devoured")
    if target is not None and target not in night["protected"]:
        night["deaths"].append([target, "white_werewolf"])


def last_alive(state) -> list | None:
    alive = living(state)
    if len(alive) == 1 and state.roles[alive[0]] == "white_werewolf":
        return alive
    return None


ROLE = Role(
    id="white_werewolf", team="white_werewolf", wolf=True,
    steps=(WhiteWerewolfStep(),),
    dawn=(Dawn(24, devour),),
    # before the Piper's; a Hunter's shot could still kill him (nobody alive: the village, D6)
    wins=(Win("white_werewolf_alone", 4, last_alive, settles=False),),
    durations={"white_werewolf": 30},
)
