"""Little Girl (001, 002, 003): peeks while the wolves choose. Online (roles-spec 1.2, proposal A):
during the wolves' step she may peek; from then on, until the step ends, she reads each wolf's
pointing and lines under a letter (never a seat, never a name). Each peek may get her caught: the
pack learns her seat, and if she ends as their victim the Witch may not save her (003); no Guard
ever protects her."""

import string

from rules.events import EventKind
from rules.role import Join, Role, Setting, living_wolves, option, powered_holder


def peeking(state) -> dict | None:
    peek = state.memo.get("little_girl")
    return peek if peek and peek["night"] == state.day else None


def open_peek(t) -> None:
    girl = powered_holder(t.s, "little_girl")
    if girl is not None and t.s.day >= option(t.s, "little_girl_from_night"):
        t.open_prompt(girl, "little_girl.peek", [], 0, 0)


def peek(t, seat: int, action: str, targets: list) -> None:
    t.close_prompt(seat, action)
    wolves = living_wolves(t.s)
    t.rng().shuffle(wolves)  # letters in a drawn order: "wolf A" is no seat
    labels = {str(w): string.ascii_uppercase[i] for i, w in enumerate(wolves)}
    t.s.memo["little_girl"] = {"night": t.s.day, "labels": labels}
    pointing = t.s.memo["wolves"]["pointing"]
    t.emit("peeked", [seat], pointing={labels[w]: target for w, target in pointing.items()})
    if t.rng().random() * 100 < option(t.s, "little_girl_caught_chance"):
        t.s.memo["night"]["unsavable"] = seat
        t.emit("little_girl_caught", living_wolves(t.s), seat=seat)


def spy(t, event: dict) -> None:
    """Each pointing while she peeks reaches her under the wolf's letter."""
    peek = peeking(t.s)
    girl = powered_holder(t.s, "little_girl")
    if peek and girl is not None and t.s.phase == "night.wolves":
        t.emit("peeked", [girl], pointing={peek["labels"][str(event["seat"])]: event["target"]})


def overhear(state, line: dict) -> list:
    """A wolf's line while she peeks reaches her under his letter."""
    peek = peeking(state)
    girl = powered_holder(state, "little_girl")
    if line["channel"] != "wolves" or state.phase != "night.wolves" or not peek \
            or girl is None or girl in line["to"]:  # an infected Little Girl reads it as a wolf
        return []
    label = peek["labels"].get(str(line["seat"]))
    if label is None:
        return []
    return [{"channel": "wolves", "seat": None, "name": label, "text": line["text"],
             "ts": line["ts"], "overheard": True, "to": [girl]}]


def view_fields(state, seat: int) -> dict:
    if state.roles[seat] != "little_girl":
        return {"little_girl": None}
    peek = peeking(state)
    pointing = None
    if peek and state.phase == "night.wolves":
        pointing = {peek["labels"][w]: target
                    for w, target in state.memo["wolves"]["pointing"].items()}
    return {"little_girl": {"peeking": peek is not None, "pointing": pointing}}


ROLE = Role(
    id="little_girl",
    protectable=False,
    joins=(Join("night.wolves", ("little_girl.peek",), open_peek, peek),),
    watch={"pointed": spy},
    overhears=overhear,
    view=view_fields,
    settings=(Setting("little_girl_from_night", (1, 2), 1, "little_girl", "002"),
              Setting("little_girl_caught_chance", (20, 0, 10, 50), 20, "little_girl", "spec")),
    events=(
        EventKind("peeked", ("pointing",), "the Little Girl",
                  "what she sees while peeking: the wolves' letters and whom they point at"),
        EventKind("little_girl_caught", ("seat",), "the pack", "the pack caught her peeking"),
    ),
)
