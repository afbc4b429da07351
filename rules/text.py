"""Text one player writes for the others to read: what it shows, not what code points it sends.

A chat line (`engine.say`) and a name (actors/names.py `clean_name`) are checked against the same
facts: which characters render as nothing, which reorder the text around them, and how many marks
may pile up on one letter. Python's `unicodedata` has no Default_Ignorable_Code_Point property and
no package in the environment gives it, hence the small table below.
"""
from __future__ import annotations

import re
import unicodedata

from rules.errors import BadFrame

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt (15.1: 4,174 code points,
# derived there as Other_Default_Ignorable_Code_Point + Cf + Variation_Selector - White_Space -
# FFF9..FFFB - 13430..1343F - Prepended_Concatenation_Mark; tests/rules/test_engine_say.py derives
# it again from `unicodedata` and compares). A renderer shows these as nothing at all.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),    # soft hyphen
    (0x034F, 0x034F),    # combining grapheme joiner
    (0x061C, 0x061C),    # Arabic letter mark
    (0x115F, 0x1160),    # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),    # Khmer inherent vowels
    (0x180B, 0x180F),    # Mongolian free variation selectors, vowel separator
    (0x200B, 0x200F),    # zero width space, non-joiner, joiner; left-to-right, right-to-left marks
    (0x202A, 0x202E),    # bidi embeddings and overrides
    (0x2060, 0x206F),    # word joiner, invisible operators, bidi isolates, deprecated formats
    (0x3164, 0x3164),    # Hangul filler
    (0xFE00, 0xFE0F),    # variation selectors 1-16
    (0xFEFF, 0xFEFF),    # zero width no-break space (byte order mark)
    (0xFFA0, 0xFFA0),    # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),    # reserved
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical beam, tie, slur and phrase controls
    (0xE0000, 0xE0FFF),  # tags, variation selectors 17-256, reserved
)
# Not default-ignorable, yet drawn as empty space by every font and not White_Space either.
BLANKS = "\u2800\U0001D159\U00016FE4"  # braille blank, musical null notehead, Khitan filler
# Variation selectors (Mongolian ones too) only pick a glyph for the character before them.
VARIATION_SELECTORS = "\u180B-\u180D\u180F\uFE00-\uFE0F\U000E0100-\U000E01EF"
# Embeddings, overrides and isolates reorder everything after them up to the end of the line
# ("Trojan Source"); the marks LRM, RLM and ALM move only the neutral characters beside them.
BIDI_CONTROLS = "\u202A-\u202E\u2066-\u2069"
# A base character carries at most this many nonspacing/enclosing marks (counted in NFC, where
# "é" and "ệ" are one character): pointed Hebrew (a vowel and a dagesh), a keycap emoji have 2;
# piled up, marks spill over the lines above and below ("Zalgo"). Issue 34 set 2: a Hebrew letter
# under a vowel, a dagesh and a shin dot, or a cantillation mark on top, is refused.
MAX_MARKS = 2

_IGNORABLE = "".join(f"\\U{a:08X}-\\U{b:08X}" for a, b in DEFAULT_IGNORABLE)
_IGNORABLE_RE = re.compile(f"[{_IGNORABLE}]")
_INVISIBLE_RE = re.compile(f"[{_IGNORABLE}{BLANKS}]")  # nothing on screen, in a name or a line
_VARIATION_RE = re.compile(f"[{VARIATION_SELECTORS}]")
# C0 and C1 controls (ESC and CSI U+009B start terminal escapes; tab and line feed too: a chat line
# is one line), the line and paragraph separators, and lone surrogates (nothing can encode them).
_CONTROLS_RE = re.compile("[\x00-\x1F\x7F-\x9F\u2028\u2029\uD800-\uDFFF]")
_BIDI_RE = re.compile(f"[{BIDI_CONTROLS}]")
# What chat strips: the default-ignorables but those with a job in a visible line: ZWJ (emoji
# sequences), ZWNJ (Persian, Indic shaping), variation selectors (emoji presentation), the
# Mongolian vowel separator, and the tags of a subdivision flag (England's: a black flag, tags,
# a cancel tag). Anything else invisible only hides text (tags can spell out a hidden message).
_FLAG_RE = "\U0001F3F4[\U000E0020-\U000E007E]+\U000E007F"
_CHAT_STRIP_RE = re.compile(
    f"({_FLAG_RE})|(?![\u200C\u200D\u180E{VARIATION_SELECTORS}])[{_IGNORABLE}]")
# Those kept joiners join two characters: one between emoji or letters has a job, two in a row
# none but padding a line with invisible code points.
_JOINER_RUN_RE = re.compile("[\u200C\u200D\u180E]{2,}")


def is_ignorable(char: str) -> bool:
    """Default_Ignorable_Code_Point (DerivedCoreProperties.txt)."""
    return _IGNORABLE_RE.match(char) is not None


def is_invisible(char: str) -> bool:
    """Default-ignorable, or blank in every font: shows nothing."""
    return _INVISIBLE_RE.match(char) is not None


def shows(char: str) -> bool:
    """Draws something of its own: neither space, control, format character, a mark (which needs
    a base), nor invisible. Unassigned code points count: Python 3.11 knows Unicode 14, and a
    newer emoji is unassigned to it."""
    category = unicodedata.category(char)
    return category[0] not in "MZ" and category not in ("Cc", "Cf", "Cs") and not is_invisible(char)


def strip_variation_selectors(text: str) -> str:
    return _VARIATION_RE.sub("", text)


def marks_pile_up(text: str) -> bool:
    """Whether a base character carries more than MAX_MARKS nonspacing or enclosing marks."""
    run = 0
    for char in unicodedata.normalize("NFC", text):
        if is_ignorable(char):  # a ZWJ between marks keeps the pile; a variation selector draws
            continue            # nothing to pile up
        category = unicodedata.category(char)
        if category in ("Mn", "Me"):
            run += 1
            if run > MAX_MARKS:
                return True
        elif category != "Mc":
            run = 0
    return False


def chat_text(text: str) -> str:
    """The line as stored and sent, or BadFrame. Refused: what acts on the reader's screen beyond
    the line (terminal escapes, line breaks, bidi overrides, piled-up marks, runs of joiners) and
    a line showing nothing. Stripped: invisible characters that do nothing but hide (zero width
    space, soft hyphen, fillers, stray tags, the bidi marks, which only nudge punctuation): a phone
    keyboard or a paste may carry them, and dropping them changes nothing a reader sees."""
    text = text.strip()
    if _CONTROLS_RE.search(text):
        raise BadFrame("chat: a line may not hold control characters (escapes, line breaks)")
    if _BIDI_RE.search(text):
        raise BadFrame("chat: a line may not hold direction overrides, embeddings or isolates")
    text = _CHAT_STRIP_RE.sub(lambda m: m.group(1) or "", text).strip()
    if marks_pile_up(text):
        raise BadFrame(f"chat: at most {MAX_MARKS} combining marks on one character")
    if not any(shows(c) for c in text):
        raise BadFrame("chat: the line shows nothing")
    if _JOINER_RUN_RE.search(text):
        raise BadFrame("chat: at most one joiner (ZWJ, ZWNJ, U+180E) in a row")
    return text
