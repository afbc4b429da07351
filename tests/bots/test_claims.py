import json
from pathlib import Path

import pytest

from bots.claims import CATALOGUE, KINDS, LANGUAGES, ROLE_NAMES, Claim, Reader, render
from rules import ROLES

NAMES = ["Layla", "Omar", "Zoe", "Omar Jr", "Lê Văn", "王伟", "ليلى"]
I18N = Path(__file__).resolve().parents[2] / "gateway" / "static" / "i18n"


def every_claim():
    for role in ROLES:
        yield Claim("role", role=role)
    for seat in range(len(NAMES)):
        for kind in ("wolf", "innocent"):
            yield Claim(kind, seat=seat)
            yield Claim(kind, seat=seat, role="seer")
            yield Claim(kind, seat=seat, role="medium")
        yield Claim("vote", seat=seat)
        yield Claim("trust", seat=seat)
        yield Claim("attack", seat=seat)
        yield Claim("why_vote", seat=seat, target=(seat + 3) % len(NAMES))


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_line_reads_back_as_its_claim(language):
    reader = Reader(NAMES)
    for claim in every_claim():
        text = render(claim, language, NAMES)
        assert reader.parse(text) == claim, text


def test_the_lines_and_the_card_names_cover_every_language_kind_and_card():
    assert set(CATALOGUE) == set(ROLE_NAMES) == set(LANGUAGES)
    keys = set(KINDS) | {"seer_wolf", "seer_innocent"}
    for language in LANGUAGES:
        assert set(CATALOGUE[language]) == keys
        assert set(ROLE_NAMES[language]) == set(ROLES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_card_names_are_the_clients(language):
    shown = json.loads((I18N / f"{language}.json").read_text())
    assert ROLE_NAMES[language] == {role: shown[f"role.{role}"] for role in ROLES}


def test_free_text_is_no_claim():
    reader = Reader(NAMES)
    for text in ("hello", "I vote", "I vote Bob", "Omar is a werewolf!!", "I am the King"):
        assert reader.parse(text) is None


def test_a_claim_round_trips_as_a_chat_payload_and_a_bad_one_is_refused():
    for claim in every_claim():
        assert Claim.from_json(json.loads(json.dumps(claim.to_json()))) == claim
    for bad in ({"kind": "vote"}, {"kind": "vote", "seat": "1"}, {"kind": "shout", "seat": 1},
                {"kind": "role", "role": "king"}, {"kind": "vote", "seat": 1, "extra": 2}, []):
        with pytest.raises(ValueError):
            Claim.from_json(bad)
