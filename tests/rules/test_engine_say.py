"""Chat: by day the living talk to all; by night the wolves among themselves; the dead among
themselves at any time. The dead read only the dead channel and public events."""

import sys
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from rules import BadFrame, NotYourTurn, text
from tests.rules.driver import EIGHT_SEATS, Game

# seats: 0 wolf, 1 seer, 2 witch, 3 hunter, 4 cupid, 5 villager, 6 wolf, 7 villager
DEAL = EIGHT_SEATS


def first_day_with_7_dead() -> Game:
    game = Game(DEAL)
    game.night(victim=7)
    assert game.phase == "day.election"
    return game


def test_by_day_the_living_talk_to_everybody():
    game = first_day_with_7_dead()
    assert game.say(1, "  hello  ") == [{"kind": "chat", "to": None, "channel": "day", "seat": 1,
                                         "name": "Omar", "text": "hello", "ts": game.now}]
    assert game.view(7)["chat"]["day"][0]["text"] == "hello"


def test_by_night_the_wolves_talk_among_the_living_wolves():
    game = Game(DEAL)
    assert game.say(6, "who?")[0]["to"] == [0, 6]
    assert game.view(0)["chat"] == {"wolves": [{"channel": "wolves", "seat": 6, "name": "Rana",
                                                "text": "who?", "ts": game.now}]}
    assert game.view(1)["chat"] == {}
    assert game.view(0)["channels"] == ["wolves"] and game.view(1)["channels"] == []


def test_by_night_a_living_villager_keeps_quiet():
    game = Game(DEAL)
    with pytest.raises(NotYourTurn) as refused:
        game.say(1, "I am the seer")
    assert "night.cupid" in str(refused.value)


def test_a_line_meant_for_another_channel_than_the_seat_s_is_refused():
    game = Game(DEAL)
    assert game.say(0, "the pack", channel="wolves")[0]["channel"] == "wolves"
    game.night(victim=7)
    assert game.phase == "day.election"
    before = game.state
    with pytest.raises(NotYourTurn) as refused:
        game.say(0, "still the pack?", channel="wolves")
    assert "'day'" in str(refused.value) and game.state is before
    assert game.say(0, "good morning", channel="day")[0]["to"] is None
    with pytest.raises(BadFrame):
        game.say(0, "hi", channel=["day"])


def test_the_dead_talk_among_themselves_by_day_and_by_night():
    game = first_day_with_7_dead()
    assert game.say(7, "it was 0")[0] == {"kind": "chat", "to": [7], "channel": "dead",
                                          "seat": 7, "name": "Tariq", "text": "it was 0",
                                          "ts": game.now}
    assert game.view(7)["channels"] == ["dead"]
    assert "dead" not in game.view(0)["chat"] and "dead" not in game.view(1)["chat"]
    game.elect(None)
    game.vote_out(5)
    assert game.say(5, "hi 7")[0]["to"] == [5, 7]  # at night too


def test_a_dead_wolf_no_longer_reads_the_wolves():
    game = Game(["werewolf", "villager", "villager", "werewolf", "villager", "villager",
                 "villager", "villager"])
    game.say(3, "first night")
    assert game.view(0)["chat"]["wolves"][0]["text"] == "first night"
    game.night(victim=1)
    game.elect(None)
    game.vote_out(0)
    assert game.say(3, "alone now")[0]["to"] == [3]
    # He keeps what he read while alive, nothing written since.
    assert [line["text"] for line in game.view(0)["chat"]["wolves"]] == ["first night"]
    assert game.view(0)["channels"] == ["dead"]


def test_a_dead_player_reads_the_dead_lines_written_since_his_death_only():
    game = first_day_with_7_dead()
    game.say(7, "before")
    game.elect(None)
    game.vote_out(5)
    assert [line["text"] for line in game.view(5)["chat"].get("dead", [])] == []
    game.say(5, "after")
    assert [line["text"] for line in game.view(7)["chat"]["dead"]] == ["before", "after"]


@pytest.mark.parametrize("text", ["", "   ", "x" * 501, None, 42])
def test_a_chat_line_is_one_to_five_hundred_characters(text):
    game = first_day_with_7_dead()
    with pytest.raises(BadFrame):
        game.say(1, text)
    assert game.state.chat == []


def test_five_hundred_characters_is_allowed():
    game = first_day_with_7_dead()
    assert game.say(1, "x" * 500)[0]["text"] == "x" * 500


# The look-alike and blank characters of issue 24 (item 4): a grapheme joiner, variation selectors
# (plain, emoji, Mongolian, supplementary), a Khmer inherent vowel, the three Hangul fillers.
REPRO = ["\u034f", "\ufe00", "\ufe0f", "\u180b", "\U000e0100", "\u17b5", "\u3164", "\uffa0",
         "\u115f"]


def derived_default_ignorables() -> set[int]:
    """Default_Ignorable_Code_Point as DerivedCoreProperties.txt derives it, from `unicodedata`:
    Other_Default_Ignorable_Code_Point + Cf + Variation_Selector - White_Space - FFF9..FFFB -
    13430..1343F - Prepended_Concatenation_Mark."""
    other = ({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2065, 0x3164, 0xFFA0, 0xE0000}
             | set(range(0xFFF0, 0xFFF9)) | set(range(0xE0002, 0xE0020))
             | set(range(0xE0080, 0xE0100)) | set(range(0xE01F0, 0xE1000)))
    selectors = {*range(0x180B, 0x180E), 0x180F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
    visible = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD,
               *range(0xFFF9, 0xFFFC), *range(0x13430, 0x13440)}
    formats = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    return (other | selectors | formats) - visible - {c for c in formats if chr(c).isspace()}


def test_the_default_ignorable_table_is_unicode_s():
    derived = derived_default_ignorables()
    assert len(derived) == 4174  # DerivedCoreProperties.txt, Unicode 15.1: "Total code points"
    table = {c for first, last in text.DEFAULT_IGNORABLE for c in range(first, last + 1)}
    assert table == derived
    edges = {c + step for first, last in text.DEFAULT_IGNORABLE for c in (first, last)
             for step in (-1, 0, 1)}
    assert all(text.is_ignorable(chr(c)) == (c in table) for c in edges)
    assert {ord(c) for c in REPRO} <= table


@pytest.mark.parametrize("line", [
    *REPRO, "".join(REPRO), " \u200b\u2060\ufeff\u00ad ", "\u200d\u200c", "\u2800", "\u0301",
    "\U000e0041\U000e0042"])  # tags spelling "AB": hidden text
def test_a_line_that_shows_nothing_is_refused(line):
    game = first_day_with_7_dead()
    with pytest.raises(BadFrame, match="shows nothing"):
        game.say(1, line)
    assert game.state.chat == []


@pytest.mark.parametrize("line", [
    "\x1b[2J\x1b[31mwolf", "red\x9b31m", "bell\x07", "two\nlines", "tab\tbed", "del\x7f",
    "line\u2028break", "I vote 3\u202e2 etov I", "\u202dforced", "\u2067isolated\u2069",
    "\u2066a\u2069", "\u202a\u202c", "x" + "\u0301" * 499, "Z" + "\u0336\u0335" * 3,
    "a" + "\u0336\u200d" * 6,  # a joiner between marks keeps them on one letter
    "e" + "\u0301" * 4, "\u05e9\u05c1\u05bc\u05b8",  # an é under 3 more; a shin under 3
    "hi\u200d\u200dthere", "\U0001f469\u200d\u200c\U0001f467", "a\u180e\u180e",  # joiner runs
    "a\u200d\u200b\u200db"])  # ...also once the zero width space between is stripped
def test_escapes_line_breaks_overrides_and_piled_marks_are_refused(line):
    game = first_day_with_7_dead()
    with pytest.raises(BadFrame):
        game.say(1, line)
    assert game.state.chat == []


@pytest.mark.parametrize(("line", "shown"), [
    ("hi\u200b there\u00ad", "hi there"), ("\ufeff\u200bhi\u2060", "hi"),
    ("hi" + "".join(REPRO[:6]), "hi" + "".join(REPRO[1:5])),  # a joiner, a Khmer vowel: stripped
    ("\u200f\u0645\u0631\u062d\u0628\u0627\u200e!", "\u0645\u0631\u062d\u0628\u0627!"),  # marks
    ("hi\U000e0041\U000e0042", "hi"),  # tags out of a flag hide text
    ("\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",) * 2,  # England
    ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",) * 2,  # Persian needs its ZWNJ
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f #\ufe0f\u20e3",) * 2,  # emoji
    ("e\u0301\u0301\u0301", "e\u0301\u0301\u0301"),  # counted in NFC: an é under 2 more marks
    ("\u05e9\u05bc\u05b8",) * 2,  # pointed Hebrew: a dagesh and a vowel
    ("\U0001f469\u200d\U0001f469\u200d\U0001f467",) * 2,  # one joiner at a time: a family
])
def test_invisible_characters_without_a_job_are_stripped_and_the_rest_kept(line, shown):
    game = first_day_with_7_dead()
    assert game.say(1, line)[0]["text"] == shown


@settings(max_examples=300, deadline=None)
@given(st.text(st.one_of(st.characters(), st.sampled_from(REPRO + ["\u202e", "\x1b", "\u0301"])),
               min_size=1, max_size=40))
def test_an_accepted_line_shows_something_and_carries_no_escape_or_override(line):
    try:
        shown = text.chat_text(line)
    except BadFrame:
        return
    assert any(text.shows(c) for c in shown)
    assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in shown)
    assert not set(shown) & set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert not text.marks_pile_up(shown)
    assert text.chat_text(shown) == shown  # stored lines pass again as they are
