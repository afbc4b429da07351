"""Baker (004 names it and nothing more; jinrou's パン屋, the genre's only reading): village, no
action. Every morning while the Baker lives with his power the table is told that bread was
baked; the first morning without bread tells that he is gone. So `missing_role` never withdraws
him: his first morning would tell it."""

from rules.events import EVERYONE, EventKind
from rules.role import Dawn, Role, has_power, holder


def bake(t, night: dict) -> None:
    """Last of the dawn: a Baker who dies this night bakes no bread this morning."""
    baker = holder(t.s, "baker")
    dying = [seat for seat, _ in night["deaths"]]
    if baker is not None and t.s.alive[baker] and baker not in dying and has_power(t.s, baker):
        t.emit("bread", None)


ROLE = Role(id="baker", withdrawable=False, dawn=(Dawn(60, bake),),
            events=(
                EventKind("bread", (), EVERYONE, "the Baker's bread at dawn"),
            ))
