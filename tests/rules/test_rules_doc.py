"""rules/RULES.md cites real tests: every `file.py::test_name` it names exists."""

import pathlib
import re

HERE = pathlib.Path(__file__).parent
RULES = (HERE.parents[1] / "rules" / "RULES.md").read_text()


def cited_tests() -> list:
    """(file, test) pairs; a bare `::name` continues the file cited last in the same cell."""
    cited = []
    for cell in RULES.split("|"):
        current = None
        for path, name in re.findall(r"`(?:([\w/]+\.py))?::(\w+)`", cell):
            current = path or current
            cited.append((current, name))
    return cited


def test_every_test_the_rules_cite_exists():
    cited = cited_tests()
    assert len(cited) > 60
    for path, name in cited:
        assert path is not None, name
        assert re.search(rf"^def {name}\(", (HERE / path).read_text(), re.M), f"{path}::{name}"
