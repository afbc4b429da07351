"""Fox (004): plays alone and wins alone if he is alive at the moment the village or the pack
meets its condition. Killable by anything; a reading shows "not a werewolf" (or the Fox under
`seer_result = role`). Never withdrawn by `missing_role` (1.10)."""

from rules.role import Role, Setting, Win, holder, option, side_condition


def alive(state) -> int | None:
    fox = holder(state, "fox")
    return fox if fox is not None and state.alive[fox] else None


def survives(state) -> list | None:
    fox = alive(state)
    return [fox] if fox is not None and side_condition(state) else None


def uncounted(state, seat: int) -> bool:
    """The seed's default leaves him out of the parity count: the pack reaches parity sooner
    (its settings line and the arithmetic, against its win section's sentence: 1.10)."""
    return state.roles[seat] == "fox" and option(state, "fox_counted") == "no"


ROLE = Role(
    id="fox", team="fox", withdrawable=False, uncounted=uncounted,
    # after Cupid's mixed lovers (10) and the dealt pair (14), before any side (20...); a shot
    # may still kill him, so it does not settle before the shots (O6)
    wins=(Win("fox_survives", 15, survives, settles=False),),
    settings=(Setting("fox_counted", ("no", "yes"), "no", "fox", "004"),
              Setting("fox_lover_priority", ("fox", "lover"), "fox", "fox", "004")),
)
