"""The browser client against the real stack (gateway, Ray, Redis), in Debian's headless Chromium.

Each test seats six players in six contexts of one browser, through the pages only: the host
creates the table from the home page and sets the phase durations in the lobby, the others join
from the share link.
"""
from __future__ import annotations


import pytest

from devstack.stack import durations, start_gateway
from tests.client.table import (
    DOCS, LAPTOP, PHONE, THE_END, chatty, chromium, play_all, say, seat_table,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

# The host's lobby settings. Every phase but the Witch's ends as soon as everyone has acted, and
# the players here act at once, so a game takes about a minute; the limits only have to be long
# enough for six pages on a busy two-core machine to answer before a phase times out. The Witch's
# step always lasts its full time (RULES.md D9), and a Witch too slow to pass just passes.
SHORT = durations(30, witch=10)
NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom", "Sara"]
DAY = "body[data-phase='day.discussion']"


def specs(locales: list[str], viewports: list[dict]) -> list[tuple[str, str, dict]]:
    return list(zip(NAMES, locales, viewports))


async def no_page_errors(players) -> None:
    for p in players:
        assert not p.errors, f"{p.name}: {p.errors}"


# Waits on a loaded machine: six pages share two cores with the other test processes; its first
# try failed in a passing CI run (3f2ba63) and its rerun passed.
@pytest.mark.flaky(reruns=1)
@pytest.mark.timeout(600)
async def test_six_browsers_play_a_whole_game(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        _, players = await seat_table(
            browser, gateway.url,
            specs(["en-US", "ar", "zh-CN", "vi-VN", "en-GB", "en-US"],
                  [LAPTOP, PHONE, PHONE, PHONE, LAPTOP, LAPTOP]),
            SHORT)
        shot = {}

        async def screenshot_then_chat(player, action):
            # The README's picture: a laptop seat at the day's vote, with the day's chat.
            if action == "vote" and not shot and player.page.viewport_size == LAPTOP:
                shot[player.name] = True
                await player.page.screenshot(path=str(DOCS / "screenshot.png"))
            await chatty(player, action)

        await play_all(players, on_prompt=screenshot_then_chat)

        spoken = {f"{p.name} speaks in {ch}" for p in players for ch in p.said}
        assert any(line.endswith(" in day") for line in spoken)
        for p in players:
            page = p.page
            cards = page.locator("#end-cards li")
            assert await cards.count() == 6
            roles = {int(await cards.nth(i).get_attribute("data-seat")):
                     await cards.nth(i).get_attribute("data-role") for i in range(6)}
            assert roles == {q.seat: q.role for q in players}, p.name
            assert (await page.text_content("#end-winners")).strip()
            end_chat = await page.text_content("#end-chat")
            for line in spoken:
                assert line in end_chat, (p.name, line)
        assert shot, "no laptop seat reached a vote"

        # The end survives a reload: same cards, same chat.
        page = players[0].page
        before = await page.inner_text("#screen-end")
        await page.reload()
        await page.wait_for_selector(f"{THE_END} #end-cards li:nth-child(6)")
        # after a reload the night's story comes by a fetch of the review, after the cards
        await page.wait_for_selector(f"{THE_END} #end-story li")
        assert await page.inner_text("#screen-end") == before
        await no_page_errors(players)



@pytest.mark.timeout(600)
async def test_seven_browsers_play_to_the_end_with_the_seed_003_and_001_roles_dealt(stack):
    """Issue 9: Guard, Little Girl, Thief, Elder, Idiot and Piper dealt (with the one wolf of
    seven seats); the pages know these roles only from the server's declaration and the
    catalogues."""
    gateway = stack.start_gateway()
    roles = ["guard", "little_girl", "thief", "elder", "idiot", "piper"]

    async with chromium() as browser:
        async def offered(players):
            host = players[0].page
            boxes = await host.eval_on_selector_all("#host-roles input",
                                                    "els => els.map(e => e.value)")
            assert set(roles) <= set(boxes)
            assert await host.locator("#host-preset option").count() > 1  # the seeds' presets

        _, players = await seat_table(
            browser, gateway.url,
            list(zip(NAMES, ["en-US", "ar", "zh-CN", "vi-VN", "en-US", "en-US", "en-US"],
                     [LAPTOP] * 7)),
            SHORT, roles=roles, before_start=offered)
        assert sorted(p.role for p in players) == sorted(roles + ["werewolf"])
        await play_all(players)
        for p in players:
            cards = p.page.locator("#end-cards li")
            assert await cards.count() == 7
            assert (await p.page.text_content("#end-winners")).strip()
        await no_page_errors(players)



async def test_reload_or_a_dropped_connection_keeps_the_seat_and_misses_nothing(stack):
    gateway = stack.start_gateway()
    replica = stack.start_gateway()  # the leaver's own gateway, which the test crashes later

    async with chromium() as browser:
        durations = {**SHORT, "discussion": 300}  # the day waits for the test, not the clock
        room, players = await seat_table(browser, gateway.url, specs(["en-US"] * 6, [LAPTOP] * 6),
                                         durations, replicas={5: replica.url})
        await play_all(players, until=DAY)
        leaver = players[5]
        speaker = [p for p in players[:5]
                   if await p.page.locator("#players li.me[data-alive='1']").count()][0]
        page = leaver.page

        # Reload: the page goes away, the table talks, the page comes back from the link.
        before_feed = await page.locator("#feed li").count()
        await page.goto("about:blank")
        line = "said while you were away"
        assert await say(speaker, line)
        await page.goto(f"{replica.url}/#/r/{room}")
        await page.wait_for_selector(f'#chat-log li:has-text("{line}")')
        assert await page.locator("#screen-join").is_hidden()
        assert await page.get_attribute("#players li.me", "data-seat") == str(leaver.seat)
        assert await page.get_attribute("#card", "data-role") == leaver.role
        # The feed is rebuilt from the replayed history: the night and its deaths are there.
        assert await page.locator("#feed li").count() >= before_feed

        # Dropped connection: the leaver's gateway crashes and comes back on the same address;
        # the client retries with backoff and resumes with `since`.
        replica.kill()
        await page.wait_for_selector("#conn[data-state=offline]")
        line2 = "said while your gateway was down"
        assert await say(speaker, line2)
        stack.gateways.append(start_gateway(ray_address=stack.ray_address,
                                            redis_url=stack.redis_url,
                                            prefix=stack.prefix, port=replica.port))
        await page.wait_for_selector(f'#chat-log li:has-text("{line2}")')
        assert await page.get_attribute("#conn", "data-state") == "online"
        for text in (line, line2):
            assert await page.locator(f'#chat-log li:has-text("{text}")').count() == 1
        seqs = await page.eval_on_selector_all("#feed li", "els => els.map(e => e.dataset.seq)")
        assert len(seqs) == len(set(seqs)), "an event shown twice"
        await no_page_errors(players)



LAYOUT = """(selectors) => ({
    dir: document.documentElement.dir,
    lang: document.documentElement.lang,
    scrollWidth: document.documentElement.scrollWidth,
    boxes: Object.fromEntries(selectors.map((sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return [sel, [r.left, r.right, r.width]];
    })),
})"""


async def assert_fits_rtl(page, selectors: list[str], width: int) -> dict:
    layout = await page.evaluate(LAYOUT, selectors)
    assert layout["dir"] == "rtl" and layout["lang"] == "ar", layout
    assert layout["scrollWidth"] <= width, layout
    for sel, (left, right, w) in layout["boxes"].items():
        assert w > 0 and 0 <= left and right <= width, (sel, layout)
    return layout


async def test_arabic_at_360px_is_right_to_left_and_fits(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        async def arabic_lobby(players):
            page = players[1].page
            assert await page.text_content("#lobby-wolves") == "عدد الذئاب على هذه الطاولة: 1."
            await assert_fits_rtl(page, ["#lobby-title", "#share-link", "#copy-link", "#qr svg",
                                         "#lobby-players", "#lobby-roles", "#lang"], PHONE["width"])

        durations = {**SHORT, "discussion": 300}
        _, players = await seat_table(
            browser, gateway.url,
            specs(["en-US", "ar-SA"] + ["en-US"] * 4, [LAPTOP, PHONE] + [LAPTOP] * 4),
            durations, roles=["seer", "witch", "cupid"], before_start=arabic_lobby)
        arab = players[1]
        await play_all(players, until=DAY)
        alive = [p
                 for p in players if await p.page.locator("#players li.me[data-alive='1']").count()]
        for p in alive[:2]:
            assert await say(p, f"مرحبًا من {p.name}")  # the discussion lasts 300 s
        page = arab.page
        if arab not in alive:  # the dead are shown the channel they write to: open the village's
            await page.click("#chat-tabs button[data-channel=day]")
        await page.wait_for_selector(f'#chat-log li:has-text("{alive[1].name}")')

        layout = await assert_fits_rtl(page, ["#phase-name", "#countdown", "#card", "#act",
                                              "#players",
                                              "#chat-log", "#chat-tabs", "#feed", "#lang"],
                                       PHONE["width"])
        assert await page.text_content("#phase-name") == "النهار: الحوار"
        # Right to left: the phase name starts at the right edge, the countdown sits at the left.
        assert layout["boxes"]["#phase-name"][0] > layout["boxes"]["#countdown"][0]
        await page.screenshot(path=str(DOCS / "screenshot-ar-360.png"), full_page=True)

        # Keyboard only: Tab reaches the ask-to-vote button and Enter presses it.
        keys = alive[0].page
        await keys.click("#phase-name")  # a neutral start, before the first focusable element
        ask = '.prompt[data-action="vote.request"] button'
        for _ in range(60):
            await keys.keyboard.press("Tab")
            if await keys.evaluate("(sel) => document.activeElement.matches(sel)", ask):
                break
        else:
            raise AssertionError("Tab never reached the ask-to-vote button")
        await keys.keyboard.press("Enter")
        await keys.wait_for_selector('.prompt[data-action="vote.request"][data-answered]')
        await no_page_errors(players)

