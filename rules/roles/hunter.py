"""Hunter: when he dies (of the causes `hunter_trigger` covers) he shoots a living player, who
dies with him."""

from rules.role import ReactionStep, Role, Setting, has_power, living, option

# hunter_trigger value -> the causes of death that make him shoot (None: any). "Attack" is the
# wolves' kill; "exile" the day's vote process: the vote, the mayor's tie-break (O25).
TRIGGERS = {"any": None, "attack_or_exile": ("wolves", "vote"), "exile_only": ("vote",)}


class HunterStep(ReactionStep):
    phase = "hunter"
    duration = "hunter"
    actions = ("hunter.shoot",)
    waiting_action = "hunter.shoot"
    reaction = "shot"

    def open(self, t) -> None:
        t.open_prompt(self.actor(t), "hunter.shoot", living(t.s), 1, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.s.memo["hunter"] = {"target": targets[0]}
        t.close_prompt(seat, action)

    def resolve(self, t, seat: int) -> None:
        target = t.s.memo.pop("hunter", {}).get("target")
        if target is not None:
            t.kill(target, "hunter")


def on_death(t, seat: int, cause: str) -> None:
    causes = TRIGGERS[option(t.s, "hunter_trigger")]
    if t.s.roles[seat] == "hunter" and has_power(t.s, seat) and (causes is None or cause in causes):
        t.s.pending.append({"kind": "hunter", "seat": seat})


ROLE = Role(
    id="hunter",
    steps=(HunterStep(),),
    on_death=on_death, death_order=20,
    settings=(Setting("hunter_trigger", tuple(TRIGGERS), "any", "hunter", "003"),),
    durations={"hunter": 30},
)
