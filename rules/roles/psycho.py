"""Psycho Killer (004): village, no power to use. The werewolf who attacks him dies instead of
him (always: "the essence of the role"); the Seer who inspects him and the Guard who protects
him die at dawn (`psycho_kills_seer`, `psycho_kills_guard`). Nothing on a night without kills
(004's first night). Poison, shots, the vote and grief kill him normally (1.13, O45)."""

from rules.role import Dawn, Role, Setting, holder, option
from rules.roles.werewolf import attacker


def killing_night(t) -> bool:
    return t.s.day > 1 or option(t.s, "first_night_kill") == "on"


def attacked(t, night: dict) -> None:
    """After the attack (20), before the save (30): the attack on him turns on its wolf."""
    victim = night["victim"]
    if (victim is not None and t.s.roles[victim] == "psycho"
            and [victim, "wolves"] in night["deaths"]):
        night["deaths"].remove([victim, "wolves"])
        night["deaths"].append([attacker(t, victim), "psycho"])


def backlash(t, night: dict) -> None:
    """Before the poison (40): the Seer who read him tonight, the Guard who protected him."""
    psycho = holder(t.s, "psycho")
    if psycho is None or not killing_night(t):
        return
    results = t.s.memo.get("seer", {}).get("results", [])
    seer = holder(t.s, "seer")
    if option(t.s, "psycho_kills_seer") == "yes" and seer is not None and results and \
            results[-1] == {**results[-1], "seat": psycho, "night": t.s.day}:
        night["deaths"].append([seer, "psycho"])
    guard = holder(t.s, "guard")
    if option(t.s, "psycho_kills_guard") == "yes" and guard is not None and \
            night.get("protect") == psycho:
        night["deaths"].append([guard, "psycho"])


ROLE = Role(
    id="psycho",
    dawn=(Dawn(25, attacked), Dawn(35, backlash)),
    settings=(Setting("psycho_kills_seer", ("yes", "no"), "yes", "psycho", "004"),
              Setting("psycho_kills_guard", ("yes", "no"), "yes", "psycho", "004")),
)
