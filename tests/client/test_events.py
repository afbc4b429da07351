"""Every event kind the server declares and every win reason the rules can produce is shown by the
client, by construction (issue 21 items 1 and 3): the one event renderer (js/eventlines.js) words
any kind from its declaration (`GET /api/rules` "events"), the end screen and the review give every
win its banner (js/outcome.js). In Debian's headless Chromium, against the static files alone:
`/api/rules` answers the gateway's own declaration, a room's review and socket are faked.
"""
from __future__ import annotations

import json

import pytest

from tests.client.static import PLAYERS, ROOM, STATIC, fake_api
from tests.client.table import LAPTOP, chromium, new_player

pytestmark = [pytest.mark.browser]

EN = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))

# A value for each field a kind may declare, by the field's name (an unknown field gets 1): a
# sample event of every kind, built from its declaration alone.
SAMPLE = {
    "seat": 1, "target": 2, "victim": 2, "moved": None, "role": "seer", "phase": "day.vote",
    "day": 1,
    "deadline": None, "action": "vote", "choices": [1, 2], "min": 1, "max": 1, "cause": "wolves",
    "seats": [{"seat": p["seat"], "name": p["name"]} for p in PLAYERS],
    "roles_in_play": {"werewolf": 1, "seer": 1, "villager": 2},
    "winners": [0], "alive": [0, 1],
    "roles": {"0": "werewolf", "1": "seer", "2": "villager", "3": "villager"},
    "causes": {}, "chat": [],
    "story": [{"night": 1, "seat": 1, "what": "guard.protect", "targets": [2]}],
    "reason": "left", "channel": "day", "name": "Ann", "text": "hello", "ts": 0,
    "overheard": True, "wolves": [0], "lovers": [1, 2], "tie": [1, 2], "tally": {"2": 2},
    "voters": [1, 2],
    "pointing": {"A": 1}, "charmed": [1], "cards": ["witch", "hunter"], "count": 2, "needed": 3,
    "how": "elected", "connected": True, "settings": {}, "public": True, "language": "en",
    "starts_at": None, "away": True, "votes": 1, "remove_votes": {}, "guarded": False,
}


def declared_events() -> dict:
    from gateway.routes.pages import DECLARATION
    return DECLARATION["events"]


def sample(kind: str, declaration: dict) -> dict:
    return {"kind": kind,
            **{f: SAMPLE.get(f, 1) for f in (*declaration["fields"], *declaration["optional"])}}


def win_owners() -> dict[str, str]:
    """Every win reason the rules can produce, and the role that declares it."""
    from rules.roles import UNITS
    return {win.reason: unit.id for unit in UNITS for win in unit.wins}


def the_review(events: dict, reason: str) -> dict:
    """A finished game's log holding one sample event of every declared kind, then its end."""
    log = [{"to": None,
            "event": {"kind": "phase", "phase": "night.wolves", "day": 1, "deadline": None}}]
    for kind, d in events.items():
        if kind in ("game_over", "phase"):
            continue
        log.append({"to": None if d["audience"] == "everyone" else [1], "event": sample(kind, d)})
    log.append({"to": None,
                "event": {**sample("game_over", events["game_over"]), "reason": reason}})
    for seq, item in enumerate(log, start=1):
        item["event"]["seq"] = seq
    return {"room": ROOM, "players": PLAYERS, "settings": {}, "next": None, "truncated": False,
            "events": log}


RENDER_ALL = """async ([samples, base]) => {
    const events = await import(base + "/js/eventlines.js");
    const names = ["Ann", "Ben", "Cy", "Di"];
    const ctx = { nameOf: (s) => (s == null ? "nobody" : names[Number(s)] ?? `#${s}`),
        roleName: (r) => `<${r}>` };
    const out = {};
    for (const ev of samples) {
        out[ev.kind] = {
            feed: events.eventText(ev, { ...ctx, seat: 1 }),
            review: events.eventText(ev, { ...ctx, seat: 1, review: { cards: {}, causes: {} } }),
        };
    }
    out["not_a_kind"] = { feed: events.eventText({ kind: "not_a_kind", seat: 1 }, ctx),
        review: "" };
    return out;
}"""

# The client's few lists of kinds (what stays out of the feed, the review, the passed phone's news).
LISTS = """async (base) => {
    const events = await import(base + "/js/eventlines.js");
    return [events.SHOWN_ELSEWHERE, events.REVIEW_SKIPS, events.NOT_NEWS, events.LOBBY_NEWS]
        .map((s) => [...s]);
}"""

OUTCOMES = """async ([reasons, base]) => {
    const outcome = await import(base + "/js/outcome.js");
    return Object.fromEntries(reasons.map((r) =>
        [r, [outcome.bannerRole(r), outcome.reasonText(r)]]));
}"""


@pytest.mark.timeout(300)
async def test_the_renderer_words_every_declared_kind_and_the_review_shows_each(static_site):
    events = declared_events()
    declaration = {"events": events, "roles": [], "rules": [], "presets": [], "durations": {}}
    owners = win_owners()

    async with chromium() as browser:
        reader = await new_player(browser, "Reader", viewport=LAPTOP)
        page = reader.page
        await fake_api(page, declaration, the_review(events, "fox_survives"))
        await page.goto(f"{static_site}/review.html#{ROOM}")
        await page.wait_for_selector("#review-timeline .period li")

        # The renderer: a line for every declared kind from a sample of its declared fields,
        # no placeholder left, none the generic line of an unknown kind; an unknown kind too.
        texts = await page.evaluate(RENDER_ALL,
                                    [[sample(k, d) for k, d in events.items()], static_site])
        unknown = EN["event.unknown"].format(kind="not_a_kind")
        for kind, shown in texts.items():
            for where, text in shown.items():
                if kind == "not_a_kind" and where == "review":
                    continue
                assert text.strip() and "{" not in text, (kind, where, text)
                assert (text == unknown) == (kind == "not_a_kind"), (kind, where, text)

        # The few lists of kinds the client keeps name declared kinds only (none gone stale).
        for kinds in await page.evaluate(LISTS, static_site):
            assert sorted(set(kinds) - set(events)) == []

        # The review: every kind it tells, marked secret exactly when the declaration says
        # some seats only heard it; the Fox's win has the Fox's card.
        shown = {li["kind"]: li for li in await page.eval_on_selector_all(
            "#review-timeline .period li",
            "els => els.map((li) => ({kind: li.dataset.kind, text: li.textContent, "
            "secret: li.classList.contains('secret')}))")}
        skipped = set((await page.evaluate(LISTS, static_site))[1])
        assert sorted(set(events) - skipped - set(shown)) == []
        for kind, li in shown.items():
            assert li["text"].strip(), kind
            if kind == "story":  # no kind: a line of game_over's story, secret while it ran
                assert li["secret"], li
            elif kind != "chat":
                assert li["secret"] == (events[kind]["audience"] != "everyone"), (kind, li)
        assert await page.get_attribute("#review-banner img", "data-role") == "fox"
        assert await page.text_content("#review-reason") == EN["end.reason.fox_survives"]

        # Every win reason the rules can produce: its owner's card and its own words.
        outcomes = await page.evaluate(OUTCOMES, [[*owners, "not_a_reason"], static_site])
        for reason, role in owners.items():
            assert outcomes[reason] == [role, EN[f"end.reason.{reason}"]], reason
        assert outcomes["not_a_reason"] == [None, EN["end.reason.unknown"]]
        assert not reader.errors, reader.errors



@pytest.mark.timeout(300)
async def test_the_end_screen_shows_every_win_with_its_banner(static_site):
    """The end screen of a finished game, one welcome per win reason: the owner's card, the
    words."""
    declaration = {"events": declared_events(), "roles": [], "rules": [], "presets": [],
                   "durations": {}}
    owners = win_owners()

    def welcome(reason: str) -> dict:
        seats = [{"seat": p["seat"], "name": p["name"], "alive": p["seat"] < 2, "role": None,
                  "mayor": False}
                 for p in PLAYERS]
        view = {"room": ROOM, "status": "finished", "host": 0, "players": PLAYERS, "seats": seats,
                "phase": "over", "day": 2, "deadline": None, "settings": {"rules": {}},
                "roles_in_play": {},
                "me": {"seat": 0, "role": "fox", "alive": True}, "prompts": [], "chat": {},
                "outcome": {"winners": [0], "reason": reason},
                "final": {"alive": [0, 1],
                          "roles": {"0": "fox", "1": "seer", "2": "werewolf", "3": "villager"},
                          "chat": []}}
        return {"type": "welcome", "seat": 0, "seq": 10, "view": view}

    async with chromium() as browser:
        player = await new_player(browser, "Ann", viewport=LAPTOP)
        page = player.page
        await fake_api(page, declaration)
        reason_now = {}

        def socket(ws):
            ws.on_message(lambda message: ws.send(json.dumps(welcome(reason_now["reason"])))
                          if json.loads(message).get("type") == "hello" else None)

        await page.route_web_socket("**/ws/**", socket)
        await page.goto(f"{static_site}/")
        await page.evaluate("(room) => localStorage.setItem(`ww:token:${room}`, 'tok')", ROOM)
        for reason, role in owners.items():
            reason_now["reason"] = reason
            await page.goto(f"{static_site}/?r={reason}#/r/{ROOM}")
            await page.wait_for_selector("#screen-end:not([hidden]) #end-banner img")
            assert await page.get_attribute("#end-banner img", "data-role") == role, reason
            assert await page.text_content("#end-reason") == EN[f"end.reason.{reason}"], reason
            assert await page.text_content("#end-me") == EN["end.you_won"]
        assert not player.errors, player.errors

