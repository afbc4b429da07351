"""Every card the engine deals has its picture, in the cards' one style (gateway/static/roles/)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from rules.registry import CARDS

ROLES = Path(__file__).resolve().parents[2] / "gateway" / "static" / "roles"
SVG = "{http://www.w3.org/2000/svg}"


def test_every_card_has_a_picture_and_there_is_a_generic_one():
    assert sorted(set(CARDS) - {p.stem for p in ROLES.glob("*.svg")}) == []
    assert (ROLES / "_generic.svg").exists()


def test_every_picture_is_an_svg_card_of_the_same_frame():
    for path in ROLES.glob("*.svg"):
        root = ET.parse(path).getroot()
        assert root.tag == f"{SVG}svg" and root.get("viewBox") == "0 0 120 160", path.name
        frame = root.find(f"{SVG}rect")
        assert frame is not None and frame.get("rx") == "12" and frame.get("stroke") == "#c9a24a", \
            path.name
