"""A first game that teaches (issue 37, part 2), in Debian's headless Chromium against the static
files alone (a room's socket played by the test, static.FakeRoom): the help opens at its top, and
gives every card how it plays and a tip in the page's language; the guide of a browser's first game
says at each phase what is happening and what this seat can do, can be turned off (remembered) and
on again from the help, and goes once that game is over; a spectator never sees it."""
from __future__ import annotations

import pytest

from tests.client.static import FakeRoom, a_page, catalogue, prompt, running, sit
from tests.client.table import DOCS, PHONE, chromium, without_isolates

pytestmark = [pytest.mark.browser]

EN = catalogue("en")
GAME = "#screen-game:not([hidden])"
GUIDE = "#guide:not([hidden])"
HELP = """() => [...document.querySelectorAll('#help-roles section')].map((s) =>
    [s.dataset.role, s.querySelector('.howto').textContent, s.querySelector('.tip').textContent])"""
ROLES = [key.removeprefix("explain.") for key in EN if key.startswith("explain.")]


async def guide_says(page, now: str, do: str) -> None:
    await page.wait_for_selector(f"{GUIDE}[data-stage]")
    await page.wait_for_function(
        "([now, doing]) => document.querySelector('#guide-now').textContent === now"
        " && document.querySelector('#guide-do').textContent === doing", arg=[now, do])


@pytest.mark.timeout(300)
async def test_the_help_opens_at_its_top_and_tells_every_card_how_it_plays(static_site):
    room = FakeRoom(running("night.witch", []))
    async with chromium() as browser:
        for locale in ("en-US", "ar", "zh-CN", "vi-VN"):
            cat = catalogue(locale[:2])
            player = await a_page(browser, room, locale=locale, viewport=PHONE)
            page = player.page
            await sit(player, static_site)
            await page.wait_for_selector(GAME)
            await page.click("#help-open")
            await page.wait_for_selector("#help[open]")
            assert await page.evaluate("() => document.activeElement.id") == "help-title"
            assert await page.evaluate("() => document.querySelector('#help').scrollTop") == 0
            assert await page.locator("#help-title").is_visible()
            shown = await page.evaluate(HELP)
            assert shown == [[r, cat["help.howto"].format(how=cat[f"howto.{r}"]),
                              cat["help.tip"].format(tip=cat[f"tip.{r}"])] for r in ROLES]
            if locale == "en-US":
                await page.screenshot(path=str(DOCS / "screenshots" / "help-cards.png"))
            await page.keyboard.press("Escape")
            await page.wait_for_selector("#help", state="hidden")

            # From the card: the help opens at the card's own entry.
            await page.click("#card-help")
            await page.wait_for_selector("#help[open]")
            box = await page.locator("#help-witch").bounding_box()
            dialog = await page.locator("#help").bounding_box()
            assert await page.evaluate("() => document.querySelector('#help').scrollTop") > 0
            assert dialog["y"] - 1 <= box["y"] <= dialog["y"] + dialog["height"] / 2
            if locale == "en-US":
                await page.screenshot(path=str(DOCS / "screenshots" / "help-card-witch.png"))
            assert not player.errors, player.errors
            await player.context.close()


@pytest.mark.timeout(300)
async def test_the_first_game_is_guided_phase_by_phase_until_it_ends_or_is_turned_off(
        static_site):
    room = FakeRoom(running("night.seer", []))
    async with chromium() as browser:
        player = await a_page(browser, room, viewport=PHONE)
        page = player.page
        await sit(player, static_site)

        # The night: nothing to do, then the Witch's move; named as the move's card names it.
        await guide_says(page, EN["guide.now.night"], EN["guide.do.night"])
        room.push({"kind": "phase", "phase": "night.witch", "day": 1, "deadline": None})
        room.push({"kind": "prompt", **prompt("witch.poison")})
        await guide_says(page, EN["guide.now.night"], EN["guide.do.move"].format(
            action=EN["action.witch.poison.title"]))
        await page.evaluate("() => document.querySelector('#act').scrollIntoView()")
        await page.screenshot(path=str(DOCS / "screenshots" / "first-game-guide.png"))

        # The day: talk; the vote, answered (changeable); dead, reading along.
        room.view = running("day.discussion", [])
        await page.reload()
        await guide_says(page, EN["guide.now.discussion"], EN["guide.do.discussion"])
        room.view = running("day.vote", [prompt("vote")], votes={"0": 2})
        await page.reload()
        await page.click('.prompt[data-action="vote"] button.choice[data-seat="2"]')
        await page.click('.prompt[data-action="vote"] button.confirm')
        await guide_says(page, EN["guide.now.vote"], EN["guide.do.sent"])
        room.view = running("day.vote", [], me={"seat": 0, "role": "witch", "alive": False})
        await page.reload()
        await guide_says(page, EN["guide.now.vote"], EN["guide.do.dead"])

        # Turned off: gone, and still gone after a reload; the help turns it on again.
        await page.click("#guide-off")
        await page.wait_for_selector("#guide", state="hidden")
        await page.reload()
        await page.wait_for_selector(GAME)
        assert await page.is_hidden("#guide")
        await page.click("#help-open")
        assert not await page.is_checked("#help-guide")
        await page.check("#help-guide")
        await page.keyboard.press("Escape")
        await page.wait_for_selector(GUIDE)

        # The first game over, the guide has done its work.
        room.push({"kind": "game_over", "winners": [1], "reason": "wolves_win", "alive": [1],
                   "roles": {"0": "witch", "1": "werewolf", "2": "villager", "3": "villager"},
                   "causes": {}, "chat": [], "story": []})
        await page.wait_for_selector("#screen-end:not([hidden])")
        assert await page.evaluate("() => localStorage.getItem('ww:guide')") == "off"
        assert not player.errors, player.errors


@pytest.mark.timeout(300)
async def test_a_spectator_is_not_guided(static_site):
    room = FakeRoom(running("night.witch", []), seat=None)
    async with chromium() as browser:
        player = await a_page(browser, room)
        page = player.page
        await page.goto(f"{static_site}/#/w/ABCD")
        await page.wait_for_selector(f"{GAME} #spectating:not([hidden])")
        assert await page.is_hidden("#guide")
        assert without_isolates(await page.text_content("#phase-name")) == EN["phase.night.witch"]
        assert not player.errors, player.errors
