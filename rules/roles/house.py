"""Table-wide rules no card owns (004): the seats a table plays, the missing role, and whether a
death shows its card. Every card shows at the end whatever these say."""

from rules.role import Role, Setting, option

EXILE = ("vote", "scapegoat")  # the day's vote process; every other cause is a "night" death


def hides(t, seat: int, cause: str) -> str | None:
    """004: "the role of whoever left is never revealed": an exile by `reveal_exile`, every
    other death (the night's, and the shots, grief and backlash they bring) by
    `reveal_night_deaths`. A hidden death tells the table only what it watched happen: the night,
    the day's vote, some other moment of the day; its true cause would name a card (`psycho` the
    Seer or Guard, `nekomata` a wolf, `grief` a Lover: RULES.md, seed 004's hidden cards)."""
    rule = "reveal_exile" if cause in EXILE else "reveal_night_deaths"
    if option(t.s, rule) != "no":
        return None
    if t.dawning:
        return "night"
    return "vote" if cause in EXILE else "day"


UNIT = Role(
    id="house", deal=None,
    hides=hides,
    settings=(
        Setting("player_range", ("6-18", "4-20"), "6-18", "house", "004"),
        Setting("missing_role", ("off", "on"), "off", "house", "004"),
        Setting("reveal_night_deaths", ("yes", "no"), "yes", "house", "004"),
        Setting("reveal_exile", ("yes", "no"), "yes", "house", "004"),
    ),
)
