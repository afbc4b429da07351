"""Witch: learns the wolves' victim; a life potion and a death potion, each once per game."""

from rules.events import EventKind
from rules.role import Dawn, Role, Setting, Step, guarded, living, option, powered_holder


class WitchStep(Step):
    phase = "night.witch"
    duration = "witch"
    actions = ("witch.save", "witch.poison")
    kill_actions = ("witch.poison",)
    waiting_action = "witch.poison"
    night_order = 40
    names_waiting_seats = False

    holder_role = "witch"

    def scheduled(self, t) -> bool:
        # a first night without kills (004) has nothing for her either (O14)
        return t.s.day > 1 or option(t.s, "first_night_kill") == "on"

    def runs(self, t) -> bool:
        return powered_holder(t.s, "witch") is not None and self.scheduled(t)

    def open(self, t) -> None:
        witch = powered_holder(t.s, "witch")
        potions = t.s.memo.setdefault("witch", {"life": True, "death": True})
        night = t.s.memo["night"]
        victim = night["victim"]
        # 001: once the life potion is spent she is no longer shown the victim (she keeps waking)
        told = None if not potions["life"] and option(t.s, "witch_told_after_save") == "no" \
            else victim
        potions["told"] = told
        potions["guarded"] = False
        # 002: the game master signals that a guarded victim will not die; she keeps her potion
        signalled = victim is not None and guarded(t.s, victim) and \
            option(t.s, "witch_told_guarded") == "yes"
        if signalled:
            potions["guarded"] = True
            t.emit("witch_victim", [witch], victim=told, guarded=True)
        else:
            t.emit("witch_victim", [witch], victim=told)
        # A victim the wolves caught peeking cannot be saved (003): she is not offered it.
        if potions["life"] and victim is not None and victim != night.get("unsavable") \
                and not signalled:
            t.open_prompt(witch, "witch.save", [victim], 0, 1)
        if potions["death"]:
            # "whomever she wishes" (من تشاء, seed 000): herself included (D9)
            t.open_prompt(witch, "witch.poison", living(t.s), 0, 1)

    def act(self, t, seat: int, action: str, targets: list) -> None:
        potions = t.s.memo["witch"]
        night = t.s.memo["night"]
        t.close_prompt(seat, action)
        if not targets:
            return
        t.remember(seat, action, targets)
        if action == "witch.save":
            potions["life"] = False
            night["saved"] = targets[0]
        else:
            potions["death"] = False
            night["poisoned"] = targets[0]
        if option(t.s, "witch_potions_per_night") == 1:  # 003: one potion a night
            for other in [p for p in t.s.prompts if p["seat"] == seat]:
                t.close_prompt(seat, other["action"])

    def done(self, t) -> bool:
        # Only the deadline ends her step, answered or not: if answering ended it early, a step
        # that lasts its full time would tell the table her potions are spent (RULES.md, D9).
        return False


def save(t, night: dict) -> None:
    """The life potion takes back the wolves' kill, if there is one (a victim the Guard
    protected is not dying: the potion is spent all the same)."""
    saved = night.get("saved")
    if [saved, "wolves"] in night["deaths"]:
        night["deaths"].remove([saved, "wolves"])


def poison(t, night: dict) -> None:
    if night.get("poisoned") is not None:
        night["deaths"].append([night["poisoned"], "poison"])


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "witch":
        return {"witch": None}
    potions = state.memo.get("witch", {"life": True, "death": True})
    return {"witch": {"victim": potions.get("told"), "life": potions["life"],
                      "death": potions["death"], "guarded": potions.get("guarded", False)}}


ROLE = Role(
    id="witch",
    steps=(WitchStep(),),
    dawn=(Dawn(30, save), Dawn(40, poison)),
    view=view_fields,
    settings=(Setting("witch_potions_per_night", (2, 1), 2, "witch", "003"),
              Setting("witch_told_after_save", ("yes", "no"), "yes", "witch", "001"),
              Setting("witch_told_guarded", ("no", "yes"), "no", "witch", "002")),
    durations={"witch": 45},
    events=(
        EventKind("witch_victim", ("victim",), "the Witch",
                  "tonight's victim, for her potions (null: none, or hidden)",
                  optional=("guarded",)),
    ),
)
