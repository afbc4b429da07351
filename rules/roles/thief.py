"""Thief (001's variant, `thief_mode = steal`): first of all on night 1 he may take the card of any
other player, who plays on as a plain Villager, even a wolf. A Thief who steals nothing keeps a
card with no power: a plain villager (O9). 002's and 003's variants (two set-aside cards) are not
built: choosing among cards no seat holds does not fit prompts whose choices are seats."""

from rules.role import CARDS, Role, Step, living, living_wolves, powered_holder


class ThiefStep(Step):
    phase = "night.thief"
    duration = "thief"
    actions = ("thief.steal",)
    waiting_action = "thief.steal"
    night_order = 5  # before everyone, even Cupid (001, 002, 003)
    names_waiting_seats = False

    holder_role = "thief"

    def scheduled(self, t) -> bool:
        return t.s.day == 1

    def runs(self, t) -> bool:
        return self.scheduled(t) and powered_holder(t.s, "thief") is not None

    def open(self, t) -> None:
        thief = powered_holder(t.s, "thief")
        t.open_prompt(thief, "thief.steal", [s for s in living(t.s) if s != thief], 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        robbed = targets[0]
        roles = t.s.roles[:]  # the state's lists are shared between clones: replace, never mutate
        roles[seat], roles[robbed] = roles[robbed], "villager"
        t.s.roles = roles
        # Each learns his new card at once, privately; neither is told by whom (O10).
        t.emit("role", [seat], role=roles[seat])
        t.emit("role", [robbed], role="villager")
        if CARDS[roles[seat]].wolf:
            # the pack learns its new member (and so its lost one); the robbed is told nothing more
            wolves = living_wolves(t.s)
            t.emit("wolves", wolves, wolves=wolves)


ROLE = Role(id="thief", plain=True, steps=(ThiefStep(),), durations={"thief": 30})
