"""The whole story at the end (issue 22 item 7): once the game is over the review and the end
screen tell every night's deed exactly once (the Witch's save and poison, the Guard's protection,
the Big Bad Wolf's own victim, the infection, the Medium's reading, the Baker's bread, the Elder's
spare life, the Piper's charm), show every card (seed 004's hidden ones too) and the infected
player's card as infected.

The review of a game where every deed happens is the engine's own scripted game
(tests/rules/story_game.py), its log laid out as the review endpoint lays out a room's stored log
(gateway/routes/rooms.py), shown by the real review page in English and Arabic at 360 px and
1280x720. The games played through the pages against the real stack check the end screen and the
real endpoint's review."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from devstack.stack import durations
from gateway.routes.pages import DECLARATION
from tests.client.table import (PHONE, SHORT_004, Player, answer, chromium, new_player, play_all,
                                seat_table, unless_closed, without_isolates)
from tests.client.table import play as play_in_page
from tests.client.static import STATIC, fake_api
from tests.rules.driver import NAMES
from tests.rules.story_game import BAKER, DEAL, play

pytestmark = [pytest.mark.browser]

ROOM = "TALE"
DESKTOP = {"width": 1280, "height": 720}
CATALOGUES = {lang: json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
              for lang in ("en", "ar")}
LOCALES = {"en": "en-US", "ar": "ar"}


def review_of(log: list) -> dict:
    """The engine's events as GET /api/rooms/{room}/review answers a room's stored log: each
    event's frame (its seq, no `to`) with its audience beside it."""
    events = []
    for seq, event in enumerate(log, start=1):
        to = event["to"]
        frame = {"type": "event", "seq": seq, **{k: v for k, v in event.items() if k != "to"}}
        events.append({"to": None if to is None else sorted(to), "event": frame})
    players = [{"seat": s, "name": NAMES[s], "connected": True} for s in range(len(DEAL))]
    return {"room": ROOM, "players": players, "settings": {}, "next": None, "truncated": False,
            "events": events}


TIMELINE = """() => [...document.querySelectorAll("#review-timeline li")].map((li) => ({
    kind: li.dataset.kind, what: li.dataset.what ?? null, text: li.textContent,
    night: li.closest(".period").dataset.night === "1",
    day: Number(li.closest(".period").dataset.day)}))"""
DEAL_SHOWN = """() => [...document.querySelectorAll("#review-deal li")].map((li) => ({
    seat: Number(li.dataset.seat), role: li.dataset.role, infected: li.dataset.infected === "1",
    text: li.textContent}))"""
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


def story_line(cat: dict, entry: dict) -> str:
    return cat[f"story.{entry['what']}"].format(
        name=NAMES[entry["seat"]], target=", ".join(NAMES[s] for s in entry["targets"]))


# seed 004's hidden cards: the dead's cards and true causes are told at the end only
HIDDEN = {"reveal_night_deaths": "no", "reveal_exile": "no"}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("rules", [None, HIDDEN], ids=["cards_shown", "cards_hidden"])
async def test_the_review_tells_every_night_deed_once_and_every_card(static_site, rules):
    game = play(rules)
    if rules:
        assert all(e["role"] is None for e in game.events("death"))
    review = review_of(game.log)
    over = game.events("game_over")[0]
    story = over["story"]
    assert {e["what"] for e in story} == {"guard.protect", "big_bad_wolf.devour", "witch.save",
                                         "witch.poison", "infect_father.infected", "elder.spared"}

    async with chromium() as browser:
        for lang in ("en", "ar"):
            cat = CATALOGUES[lang]
            for viewport in (PHONE, DESKTOP):
                reader = await new_player(browser, "Reader", locale=LOCALES[lang],
                                          viewport=viewport)
                page = reader.page
                await fake_api(page, json.loads(json.dumps(DECLARATION)), review)
                await page.goto(f"{static_site}/review.html#{ROOM}")
                await page.wait_for_selector("#review-timeline .period li")
                assert await page.get_attribute("html", "lang") == lang
                assert await page.get_attribute("html", "dir") == ("rtl" if lang == "ar" else "ltr")
                lines = without_isolates(await page.evaluate(TIMELINE))
                where = (lang, viewport["width"])

                # Each secret deed once, in its own night, in this language's words.
                told = [li for li in lines if li["kind"] == "story"]
                assert [li["text"] for li in told] == [story_line(cat, e) for e in story], where
                assert [(li["night"], li["day"]) for li in told] == [
                    (True, e["night"]) for e in story]
                # What events told already, once each: the reading, the bread, the charm;
                # the infection once (the story's line, not the infected's own event too).
                kinds = [li["kind"] for li in lines]
                assert kinds.count("medium_result") == 1 and kinds.count("bread") == 2, where
                assert kinds.count("charmed") == 2 and "infected" not in kinds, where
                reading = next(li["text"] for li in lines if li["kind"] == "medium_result")
                assert reading == cat["event.medium_result.review"].format(
                    name=NAMES[5], target=NAMES[8], role=cat["role.villager"]), where
                assert len({li["text"] for li in lines if li["kind"] == "charmed"}) == 2, where

                # Every card, every death with its card; the infected Baker as infected.
                shown = without_isolates(await page.evaluate(DEAL_SHOWN))
                assert [(li["seat"], li["role"]) for li in shown] == list(enumerate(DEAL)), where
                assert [li["seat"] for li in shown if li["infected"]] == [BAKER], where
                baker = next(li for li in shown if li["seat"] == BAKER)
                assert cat["end.infected"].format(role=cat["role.baker"]) in baker["text"], where
                deaths = [li["text"] for li in lines if li["kind"] == "death"]
                assert deaths == [cat["event.death"].format(
                    name=NAMES[e["seat"]], role=cat[f"role.{DEAL[e['seat']]}"],
                    cause=cat[f"cause.{over['causes'].get(str(e['seat']), e['cause'])}"])
                    for e in game.events("death")], where
                body = await page.text_content("body")
                assert cat["role.unknown"] not in body, where

                # Laid out in the width it has: nothing runs off the side of a phone.
                assert await page.evaluate(OVERFLOW) <= 0, where
                assert not reader.errors, (where, reader.errors)
                await reader.context.close()



# The game played through the pages: the steps that always run their full time are short, the
# others end once answered.
DEEDS = ["guard", "witch", "elder", "medium", "baker", "infect_father", "big_bad_wolf"]
SHORT = durations(20, wolves=40, witch=12, infect_father=8, big_bad_wolf=8, medium=4)
PACK = {"werewolf", "big_bad_wolf", "infect_father"}
END_CARDS = """() => [...document.querySelectorAll("#end-cards li")].map((li) => ({
    seat: Number(li.dataset.seat), role: li.dataset.role, infected: li.dataset.infected === "1",
    card: li.querySelector(".role").textContent}))"""
END_STORY = """() => [...document.querySelectorAll("#end-story li[data-what]")]
    .map((li) => li.textContent)"""


async def witch_answers(player: Player, key: str, action: str, wolves: set[int]) -> None:
    """The Witch saves whoever she is shown and poisons a wolf when one is offered; her yes-or-no
    names the victim it asks about."""
    page = player.page
    prompt = page.locator(f'.prompt[data-key="{key}"]')

    async def move() -> None:
        seats = await prompt.locator("button.choice").evaluate_all(
            "els => els.map((e) => Number(e.dataset.seat))")
        if action == "witch.save":
            hint = await prompt.locator(".hint").text_content()
            victim = await prompt.locator("button.choice .name").text_content()
            assert victim in hint, (hint, victim)  # not "Pick one player, or pass"
            target = seats[0]
        else:
            target = next((s for s in seats if s in wolves), None)
        if target is None:
            await prompt.locator("button.pass").click()
        else:
            await prompt.locator(f'button.choice[data-seat="{target}"]').click()
            await prompt.locator("button.confirm").click()
        await page.wait_for_selector(f'.prompt[data-key="{key}"][data-answered]')

    await unless_closed(page, f'.prompt[data-key="{key}"]', move)


async def deed(player: Player, key: str, action: str, wolves: set[int]) -> None:
    """table.answer, with the Witch using her potions (table.answer has her pass)."""
    move = witch_answers if action.startswith("witch.") else answer
    await move(player, key, action, wolves)


async def the_story_told(players: list[Player], log: list, review_url: str) -> None:
    """Every end screen and the review (English and Arabic, phone and laptop) tell `log`'s end."""
    over = next(e["event"] for e in log if e["event"]["kind"] == "game_over")
    names = {p.seat: p.name for p in players}
    infected = {s for e in over["story"] if e["what"] == "infect_father.infected"
                for s in e["targets"]}
    for p in players:
        cat = CATALOGUES[await p.page.get_attribute("html", "lang")]
        cards = without_isolates(await p.page.evaluate(END_CARDS))
        assert {c["seat"]: c["role"] for c in cards} == {int(s): r
                                                         for s, r in over["roles"].items()}, p.name
        for c in cards:
            card = cat[f"role.{c['role']}"]
            assert c["card"] == (cat["end.infected"].format(role=card)
                                 if c["seat"] in infected else card), (p.name, c)
        told = without_isolates(await p.page.evaluate(END_STORY))
        assert told == [
            cat["game.night"].format(n=e["night"]) + ": " + cat[f"story.{e['what']}"].format(
                name=names[e["seat"]], target=", ".join(names[s] for s in e["targets"]))
            for e in over["story"]], p.name
    counts = {kind: sum(1 for e in log if e["event"]["kind"] == kind)
              for kind in ("medium_result", "bread", "charmed", "death")}
    for lang, viewport in (("en", PHONE), ("en", DESKTOP), ("ar", PHONE), ("ar", DESKTOP)):
        cat = CATALOGUES[lang]
        reader = await new_player(players[0].context.browser, "Reader", locale=LOCALES[lang],
                                  viewport=viewport)
        await reader.page.goto(review_url)
        await reader.page.wait_for_selector("#review-timeline .period li")
        lines = without_isolates(await reader.page.evaluate(TIMELINE))
        kinds = [li["kind"] for li in lines]
        where = (lang, viewport["width"])
        assert [li["what"] for li in lines if li["kind"] == "story"] == [
            e["what"] for e in over["story"]], where
        assert {k: kinds.count(k) for k in counts} == counts and "infected" not in kinds, \
            (where, counts)
        deaths = [li["text"] for li in lines if li["kind"] == "death"]
        assert all(cat["role.unknown"] not in text
                   and cat["event.death.hidden"].rsplit("}", 1)[1] not in text
                   for text in deaths), (where, deaths)
        shown_deal = without_isolates(await reader.page.evaluate(DEAL_SHOWN))
        assert {li["seat"]: li["role"] for li in shown_deal} == {
            int(s): r for s, r in over["roles"].items()}, where
        assert {li["seat"] for li in shown_deal if li["infected"]} == infected, where
        assert cat["role.unknown"] not in await reader.page.text_content("body"), where
        assert await reader.page.evaluate(OVERFLOW) <= 0, where
        assert not reader.errors, (where, reader.errors)
        await reader.context.close()


async def review_log(url: str, room: str) -> list:
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        answer = await http.get(f"/api/rooms/{room}/review")
        assert answer.status_code == 200, answer.text
        return answer.json()["events"]


@pytest.mark.e2e
@pytest.mark.timeout(900)
async def test_a_game_played_in_the_pages_tells_its_night_deeds_at_the_end(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        specs = [(f"P{i}", "ar" if i % 2 else "en-US", PHONE if i % 4 < 2 else DESKTOP)
                 for i in range(8)]
        room, players = await seat_table(browser, gateway.url, specs, SHORT, roles=DEEDS)
        wolves = {p.seat for p in players if p.role in PACK}
        await asyncio.gather(*(play_in_page(p, wolves, move=deed) for p in players))
        log = await review_log(gateway.url, room)
        over = next(e["event"] for e in log if e["event"]["kind"] == "game_over")
        # the deeds every night 1 has: the Guard's and the Big Bad Wolf's (the pages always pick)
        assert {"guard.protect", "big_bad_wolf.devour"} <= {e["what"] for e in over["story"]}, \
            over["story"]
        await the_story_told(players, log, f"{gateway.url}/review.html#{room}")
        for p in players:
            assert not p.errors, (p.name, p.errors)



@pytest.mark.e2e
@pytest.mark.timeout(900)
async def test_after_a_seed_004_game_every_hidden_card_shows(stack):
    """reveal_night_deaths = no keeps the cards of the dead hidden while the game runs; once it is
    over the deal is public: the end screen and the review show every card."""
    gateway = stack.start_gateway()

    async with chromium() as browser:
        specs = [("P0", "en-US", PHONE), ("P1", "ar", DESKTOP), ("P2", "en-US", DESKTOP),
                 ("P3", "ar", PHONE)]
        room, players = await seat_table(browser, gateway.url, specs, SHORT_004, preset="seed_004")
        await play_all(players)
        log = await review_log(gateway.url, room)
        hidden = [e["event"] for e in log if e["event"]["kind"] == "death"
                  and e["event"]["role"] is None]
        assert hidden, "no card was hidden while the game ran"
        await the_story_told(players, log, f"{gateway.url}/review.html#{room}")
        for p in players:
            assert not p.errors, (p.name, p.errors)

