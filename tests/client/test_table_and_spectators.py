"""Issue 13 parts 2-4 in Debian's headless Chromium against the real stack: the table of seats
(marks, votes, role art, night and day), the dawn, the turn announced, the phone layout, a
spectator watching a whole game, and the review page. One game for all of it (the suite's time),
taking the README's screenshots as it goes.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from devstack.checks import PRIVATE_KINDS
from devstack.stack import durations
from tests.client.recording import Recording, record
from tests.client.table import (DOCS, LAPTOP, PHONE, THE_END, chatty, chromium, new_player,
                                play_all, seat_table)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
# No Witch: hers is the one step that always lasts its full time.
DURATIONS = durations(30, witch=10)
SHOTS = DOCS / "screenshots"

# Screenshots from the top of the page, the dawn put away where it is not the picture's subject.
TOP = "() => { document.querySelector('#dawn-close')?.click(); window.scrollTo(0, 0); }"
BUZZ = (
    "() => { window.buzzed = 0; "
    "navigator.vibrate = () => { window.buzzed += 1; return true; }; }"
)
# The page's colour once the palette's fade (motion.css: 1.2 s) has ended: read as the phase
# changes, it would still be the last palette's.
BACKGROUND = """() => {
    document.getAnimations().filter((a) => a.effect?.target === document.body)
        .forEach((a) => a.finish());
    return getComputedStyle(document.body).backgroundColor;
}"""
# The phone's promises: the phase and the timer in view wherever the page is scrolled, and the
# chat less than two screens down.
PHONE_LAYOUT = """() => {
    window.scrollTo(0, document.body.scrollHeight);
    const inView = (sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight && r.width > 0; };
    const chatTop = document.querySelector("#chat-title").getBoundingClientRect().top + scrollY;
    const result = { phase: inView("#phase-name"), timer: inView("#countdown"), chatTop,
                     screen: innerHeight, width: document.documentElement.scrollWidth };
    window.scrollTo(0, 0);
    return result;
}"""


def a_night_and_a_day(phases: list[str]) -> bool:
    """Recorded through a day's vote and out of it (the next night, or the end)."""
    return any(p.startswith("day.vote") for p in phases) and not phases[-1].startswith("day.")


def watch_frames(page, frames: list) -> None:
    page.on("websocket",
            lambda ws: ws.on("framereceived", lambda payload: frames.append(json.loads(payload))))


@pytest.mark.timeout(600)
async def test_the_table_the_dawn_a_spectator_and_the_review_of_one_whole_game(stack):
    gateway = stack.start_gateway()
    SHOTS.mkdir(exist_ok=True)

    async with chromium() as browser:
        spectator = await new_player(browser, "Watcher", viewport=LAPTOP)
        seen: list[dict] = []
        watch_frames(spectator.page, seen)

        async def a_spectator_in_the_lobby(players):
            host = players[0].page
            assert await host.get_attribute("#sound", "aria-pressed") == "false"  # off by default
            await host.click("#sound")  # one toggle, remembered
            assert await host.get_attribute("#sound", "aria-pressed") == "true"
            assert await host.evaluate("() => localStorage.getItem('ww:sound')") == "1"
            await host.click("#sound")
            assert await host.get_attribute("#sound", "aria-pressed") == "false"
            watch = await host.input_value("#watch-link")
            assert "#/w/" in watch
            await spectator.page.goto(watch)
            await spectator.page.wait_for_selector("#screen-lobby:not([hidden])")
            assert await spectator.page.is_hidden("#lobby-host")
            for p in players:
                await p.page.wait_for_function(
                    "() => document.querySelector('#lobby-spectators').textContent.includes('1')")

        specs = [(n, "ar" if i == 1 else "en-US", PHONE if i == 1 else LAPTOP)
                 for i, n in enumerate(NAMES)]
        room, players = await seat_table(browser, gateway.url, specs, DURATIONS, roles=["cupid"],
                                         before_start=a_spectator_in_the_lobby)
        for p in players:  # count the page's vibrations from now on
            await p.page.evaluate(BUZZ)
        wolves = {p.seat for p in players if p.role == "werewolf"}
        host, phone = players[0], players[1]
        looks, titles = {}, []

        async def night_table(page):  # the pack's seat, as it wakes to choose
            await page.wait_for_selector("body[data-phase='night.wolves'] #table .seat[data-wolf]")
            looks["night"] = await page.evaluate(BACKGROUND)
            await page.evaluate(TOP)
            await page.screenshot(path=str(SHOTS / "table-night.png"))

        async def the_dawn():
            page = host.page
            await page.wait_for_selector("#dawn:not([hidden]) #dawn-dead li", timeout=240_000)
            looks["day"] = await page.evaluate(BACKGROUND)
            looks["dawn"] = await page.inner_text("#dawn-dead")
            await page.screenshot(path=str(SHOTS / "dawn.png"))
            for p in players:  # what each seat's table marks, as the day begins
                looks[p.name] = {
                    "seats": await p.page.locator("#table .seat").count(),
                    "wolf": await p.page.locator("#table .seat[data-wolf]").count(),
                    "lover": await p.page.locator("#table .seat[data-lover]").count(),
                    "knows_love": await p.page.locator(
                        "#card-facts [data-fact=lover], #card-facts [data-fact=linked]").count(),
                    "art": await p.page.locator("#card-art img[src$='.svg']").count()}

        async def votes_by_day(page):  # a voter's table once others have voted, before its own vote
            await page.wait_for_selector("body[data-phase='day.vote'] #table line.arrow.vote",
                                         state="attached")
            looks["votes"] = await page.locator("#table .seat[data-votes]").count()
            await page.evaluate(TOP)
            await page.screenshot(path=str(SHOTS / "table-day-votes.png"))

        async def the_spectator_by_day():
            page = spectator.page
            await page.wait_for_selector("body[data-phase^='day.'] #table .seat", timeout=240_000)
            looks["spectator"] = {
                "banner": await page.is_visible("#spectating"),
                "card": await page.is_visible("#card"),
                "composer": await page.is_visible("#chat-form"),
                "cards": await page.locator("#table .seat[data-alive='1'][data-role]").count(),
                "marks": await page.locator(
                    "#table .seat[data-wolf], #table .seat[data-lover]").count()}
            await page.evaluate(TOP)
            await page.screenshot(path=str(SHOTS / "spectator.png"))

        async def the_phone_by_day():
            page = phone.page
            await page.wait_for_selector("body[data-phase^='day.'] #table .seat", timeout=240_000)
            looks["phone"] = await page.evaluate(PHONE_LAYOUT)
            await page.evaluate(TOP)
            await page.screenshot(path=str(SHOTS / "phone-360-ar.png"))

        async def turn_in_the_title(player, action):
            titles.append(await player.page.title())
            if action == "wolves.point" and "night" not in looks:
                await night_table(player.page)
            if action == "vote" and "votes" not in looks and player.page.viewport_size == LAPTOP:
                looks["votes"] = 0
                await votes_by_day(player.page)
            await chatty(player, action)  # a line in each channel it reaches, for the review

        # The README's time-lapse: the spectator's table (nobody's card, never dead) through
        # the first night and day.
        recording = Recording()
        watchers = [asyncio.create_task(task()) for task in
                    (the_dawn, the_spectator_by_day, the_phone_by_day)]
        watchers.append(asyncio.create_task(
            record(spectator.page, recording, start="night.", stop=a_night_and_a_day, every_s=0.5)))
        await play_all(players, on_prompt=turn_in_the_title)
        await spectator.page.wait_for_selector(THE_END)
        done, pending = await asyncio.wait(watchers, timeout=30)
        assert not pending, [w.get_coro().__name__ for w in pending]
        for w in done:
            w.result()

        # The spectator saw no card and no private event before game_over: 0 frames.
        welcome = next(f for f in seen if f["type"] == "welcome")
        assert welcome["seat"] is None
        before_end = []
        for frame in seen:
            if frame.get("kind") == "game_over":
                break
            before_end.append(frame)
        leaks = [f for f in before_end if f.get("kind") in PRIVATE_KINDS
                 or (f.get("kind") == "chat" and f["channel"] != "day")]
        assert leaks == []
        assert any(f.get("kind") == "game_over" for f in seen)
        assert looks["spectator"] == {"banner": True, "card": False, "composer": False, "cards": 0,
                                      "marks": 0}

        # The table: every seat, the pack marked for the pack only, the lovers for the lovers
        # and Cupid only; night and day look different; the dawn named the night's dead.
        assert looks["night"] != looks["day"]
        assert looks["votes"] >= 1
        assert looks["dawn"].strip()
        for p in players:
            marks = looks[p.name]
            assert marks["seats"] == 6 and marks["art"] == 1, (p.name, marks)
            assert marks["wolf"] == (len(wolves) if p.seat in wolves else 0), (p.name, marks)
            assert marks["lover"] == (2 if marks["knows_love"] else 0), (p.name, marks)
        assert sum(looks[p.name]["knows_love"] for p in players) == 3  # the two lovers and Cupid
        assert all(title.startswith("●") for title in titles), titles
        assert sum([await p.page.evaluate("() => window.buzzed") for p in players]) >= 1
        for p in players:
            page = p.page
            assert await page.locator("#end-cards li").count() == 6

        # The time-lapse holds the night, the dawn and the day's vote.
        kinds = {phase.split(".")[0] for phase in recording.phases}
        assert {"night", "day"} <= kinds and any(p == "day.vote"
                                                 for p in recording.phases), recording.phases
        recording.save(SHOTS / "night-and-day.gif", width=800, frame_ms=400)

        # The phone: phase and timer stay in view, the chat is less than two screens down.
        layout = looks["phone"]
        assert layout["phase"] and layout["timer"], layout
        assert (layout["chatTop"] < 2 * layout["screen"]
                and layout["width"] <= PHONE["width"]), layout

        # The end screen links to the review of this game.
        await host.page.evaluate(TOP)
        await host.page.screenshot(path=str(SHOTS / "end.png"))
        href = await host.page.get_attribute("#review-link", "href")
        assert href == f"review.html#{room}"
        for locale, viewport, shot in (("en-US", LAPTOP, "review.png"),
                                       ("ar", PHONE, "review-ar-360.png")):
            reader = await new_player(browser, "Reader", locale=locale, viewport=viewport)
            await reader.page.goto(f"{gateway.url}/{href}")
            await reader.page.wait_for_selector("#review-timeline .period li[data-kind='death']")
            deal = {int(await li.get_attribute("data-seat")): await li.get_attribute("data-role")
                    for li in await reader.page.locator("#review-deal li").all()}
            assert deal == {p.seat: p.role for p in players}
            assert await reader.page.locator(".period[data-night='1']").count() >= 1
            assert await reader.page.locator(".period li[data-kind='pointed'].secret").count() >= 1
            for p in players:  # the chat of every channel, each line where it was said
                for channel in p.said:
                    line = reader.page.locator(
                        f".period li[data-kind='chat'][data-channel='{channel}']",
                        has_text=f"{p.name} speaks in {channel}")
                    assert await line.count() == 1, (p.name, channel)
            assert any("wolves" in p.said for p in players)
            assert (await reader.page.text_content("#review-winners")).strip()
            await reader.page.screenshot(path=str(SHOTS / shot), full_page=True)
            assert not reader.errors, reader.errors
        assert wolves
        for p in [*players, spectator]:
            assert not p.errors, (p.name, p.errors)

