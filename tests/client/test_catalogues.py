"""Every visible string of the client comes from one catalogue per language, and the four agree."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from tests.client.static import STATIC, catalogue

LANGS = ["en", "ar", "zh", "vi"]
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def test_every_language_has_every_key_with_the_same_placeholders():
    english = catalogue("en")
    for lang in LANGS[1:]:
        other = catalogue(lang)
        assert other.keys() == english.keys(), (lang, other.keys() ^ english.keys())
        for key, text in english.items():
            assert set(PLACEHOLDER.findall(other[key])) == set(PLACEHOLDER.findall(text)), \
                (lang, key)
            assert other[key].strip(), (lang, key)


class TextFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.texts: list[str] = []
        self.keys: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.keys += [v for k, v in attrs if k.startswith("data-i18n")]
        if tag not in ("meta", "link", "input", "br"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_data(self, data):
        if data.strip() and not (self.stack and self.stack[-1] in ("script", "style")):
            self.texts.append(data.strip())


def test_the_markup_holds_no_text_and_names_only_known_keys():
    finder = TextFinder()
    finder.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert finder.texts == []
    english = catalogue("en")
    assert [k for k in finder.keys if k not in english] == []


def test_every_literal_key_in_the_scripts_exists():
    english = catalogue("en")
    used = set()
    for script in (STATIC / "js").rglob("*.js"):
        used |= set(re.findall(r'\bt\("([a-z_.]+)"', script.read_text(encoding="utf-8")))
    assert used and not used - english.keys()


def test_every_role_rule_preset_action_and_phase_the_rules_declare_has_its_keys():
    """A new role needs only catalogue keys on the client: what it shows comes as data."""
    from rules import ACTIONS, declaration
    from rules.registry import CARDS, STEPS, WINS

    english = catalogue("en")
    declared = declaration()
    needed = {f"role.{r}" for r in CARDS} | {f"explain.{r}" for r in CARDS}
    # the help's entry of every card it explains: how it plays, a tip (issue 37, part 2)
    explained = {k.removeprefix("explain.") for k in english if k.startswith("explain.")}
    needed |= {f"{part}.{r}" for r in explained | set(CARDS) for part in ("howto", "tip")}
    needed |= {f"preset.{p['id']}" for p in declared["presets"]}
    needed |= {f"duration.{d}" for d in declared["durations"]}
    needed |= {f"phase.{phase}" for phase in STEPS} | {f"end.reason.{w.reason}" for w in WINS}
    needed |= {f"action.{a}.title" for a in ACTIONS} | {f"action.{a}.help" for a in ACTIONS}
    for rule in declared["rules"]:
        needed.add(f"rule.{rule['id']}")
        needed |= {f"rule.{rule['id']}.{v}" for v in rule["values"] if isinstance(v, str)}
    assert sorted(needed - english.keys()) == []


def test_every_event_kind_and_win_reason_has_its_words_in_every_catalogue():
    """Each kind the server declares (`/api/rules` "events": the rules' and the room's) has its
    line, `event.<kind>` or a variant `event.<kind>.<x>`, and each win reason the rules can
    produce its `end.reason.<reason>`, in every language; the generic lines exist for the others."""
    from gateway.routes.pages import DECLARATION
    from rules.registry import WINS

    assert DECLARATION["events"] and WINS
    for lang in LANGS:
        keys = catalogue(lang).keys()
        missing = [kind for kind in DECLARATION["events"]
                   if f"event.{kind}" not in keys
                   and not any(k.startswith(f"event.{kind}.") for k in keys)]
        missing += [f"end.reason.{w.reason}" for w in WINS if f"end.reason.{w.reason}" not in keys]
        missing += [k for k in ("event.unknown", "end.reason.unknown") if k not in keys]
        assert missing == [], lang


def test_every_fact_a_card_shows_has_its_words_in_every_catalogue():
    """The card's facts are drawn from the declaration (`/api/rules` "facts", js/facts.js) in the
    words of `fact.<field>`: each declared fact has them, with the placeholders its shape fills."""
    from rules import declaration

    fills = {"seat": {"name"}, "seats": {"names"}, "couple": {"names"}, "others": {"names"},
             "results": {"name", "role", "n"}}
    facts = declaration()["facts"]
    assert "sisters" in {f["field"] for f in facts}
    for lang in LANGS:
        words = catalogue(lang)
        for fact in facts:
            key = f"fact.{fact['field']}"
            assert set(PLACEHOLDER.findall(words.get(key, ""))) == fills[fact["shape"]], (lang, key)


def test_the_quick_claims_are_served_in_the_bots_own_words():
    """The client renders a quick claim from `/api/rules` "claims" (js/quickclaims.js keeps no
    words of its own): the bots' catalogue itself, every kind in every language the client has."""
    from bots.claims import CATALOGUE, KINDS, ROLE_NAMES
    from gateway.routes.pages import DECLARATION

    served = json.loads(json.dumps(DECLARATION["claims"]))
    assert served == json.loads(json.dumps(
        {"kinds": KINDS, "catalogue": CATALOGUE, "role_names": ROLE_NAMES}))
    assert set(served["catalogue"]) == set(LANGS)
    for lang in LANGS:
        assert set(served["catalogue"][lang]) >= set(KINDS), lang
    script = (STATIC / "js" / "quickclaims.js").read_text(encoding="utf-8")
    assert not any(text in script for words in CATALOGUE.values() for text in words.values())


def test_the_bots_name_every_card_as_the_client_does():
    """A claim names a card in the words the page shows it with (bots/claims.py ROLE_NAMES)."""
    from bots.claims import ROLE_NAMES

    for lang in LANGS:
        words = catalogue(lang)
        assert {role: words[f"role.{role}"] for role in ROLE_NAMES[lang]} == ROLE_NAMES[lang], lang
