"""Hunter: when he dies (of the causes `hunter_trigger` covers) he shoots a living player, who
dies with him."""

from rules.role import Dawn, ReactionStep, Role, Setting, Step, has_power, living, option, \
    powered_holder

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


class NightShotStep(Step):
    """002: from night 2 the Hunter may shoot one person dead at night (`hunter_night_shot`:
    `each_night`, the literal reading, or `once` in the game); he keeps his death shot (O24)."""

    phase = "night.hunter"
    duration = "hunter"
    actions = ("hunter.night_shot",)
    waiting_action = "hunter.night_shot"
    night_order = 45  # 002 calls him last, after the Witch
    names_waiting_seats = False

    holder_role = "hunter"

    def scheduled(self, t) -> bool:
        return option(t.s, "hunter_night_shot") != "off" and t.s.day >= 2

    def runs(self, t) -> bool:
        rule = option(t.s, "hunter_night_shot")
        return self.scheduled(t) and powered_holder(t.s, "hunter") is not None \
            and not (rule == "once" and t.s.memo.get("hunter_night", {}).get("shot"))

    def open(self, t) -> None:
        hunter = powered_holder(t.s, "hunter")
        t.open_prompt(hunter, "hunter.night_shot", [s for s in living(t.s) if s != hunter], 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        t.close_prompt(seat, action)
        if targets:
            t.s.memo["hunter_night"] = {"shot": True}
            t.s.memo["night"]["shot"] = targets[0]


def night_shot(t, night: dict) -> None:
    """Last of the dawn: after the poison (roles-spec 5.2, step 8)."""
    if night.get("shot") is not None:
        night["deaths"].append([night["shot"], "hunter"])


def on_death(t, seat: int, cause: str) -> None:
    causes = TRIGGERS[option(t.s, "hunter_trigger")]
    if t.s.roles[seat] == "hunter" and has_power(t.s, seat) and (causes is None or cause in causes):
        t.s.pending.append({"kind": "hunter", "seat": seat})


ROLE = Role(
    id="hunter",
    steps=(HunterStep(), NightShotStep()),
    dawn=(Dawn(50, night_shot),),
    on_death=on_death, death_order=20,
    settings=(Setting("hunter_trigger", tuple(TRIGGERS), "any", "hunter", "003"),
              Setting("hunter_night_shot", ("off", "each_night", "once"), "off", "hunter", "002")),
    durations={"hunter": 30},
)
