"""Issue 22, item 2, in Debian's headless Chromium against the real stack: the move in view.

On a laptop (1280x720, 1280x800, 1920x1080) each prompt is on the first screen, beside the table,
without the page scrolling; on a phone (360 px) the page scrolls it into view under its sticky
bars; either way a live region announces it. At every prompt that asks for a player the table's
seats offered are buttons: a tap chooses that player (the prompt's name buttons follow, and the
other way round), and the confirmed move reaches the server with that seat. English and Arabic.
"""
from __future__ import annotations


import pytest

from devstack.stack import durations
from tests.client.first_vote import play_through_first_vote, watch_events
from tests.client.table import (DOCS, PHONE, WAIT_MS, chromium, pick, seat_table, unless_closed,
                                until, wolves_of)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LAPTOP_720 = {"width": 1280, "height": 720}
LAPTOP_800 = {"width": 1280, "height": 800}
WIDE = {"width": 1920, "height": 1080}
SPECS = [("Layla", "en-US", LAPTOP_720), ("Omar", "ar", LAPTOP_720), ("Mei", "en-US", PHONE),
         ("Linh", "ar", PHONE), ("Ana", "en-US", LAPTOP_800), ("Tom", "ar", WIDE)]
DURATIONS = durations(30, witch=10)
# The prompts the table's seats answer in this game, and the event that tells the move taken.
TAPPED = {"vote": "voted", "mayor.elect": "voted", "wolves.point": "pointed"}

# Where the first unanswered prompt is, against the viewport and the sticky bars over the page.
WHERE = """() => {
    const node = document.querySelector("#prompts .prompt:not([data-answered])");
    if (!node) return null;
    const r = node.getBoundingClientRect();
    return { key: node.dataset.key, title: node.querySelector("h3").textContent,
             top: r.top, bottom: r.bottom,
             bars: document.querySelector(".phasebar").getBoundingClientRect().bottom,
             height: innerHeight, scrolled: scrollY,
             live: document.querySelector("#turn-live").textContent,
             dir: document.documentElement.dir };
}"""
# On a phone: the prompt's top under the bars, and the whole of it on the screen if it fits (or
# no prompt: it closed under the test).
SCROLLED_IN = f"""() => {{
    const at = ({WHERE})();
    return !at || at.top >= at.bars - 1 && at.top < at.height
        && (at.bottom <= at.height + 1 || at.bottom - at.top > at.height - at.bars);
}}"""


@pytest.mark.timeout(900)
async def test_the_move_is_in_view_and_a_seat_on_the_table_chooses(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        events = {}

        async def watched(players):
            for p in players:
                events[p.name] = await watch_events(p)

        _, players = await seat_table(browser, gateway.url, SPECS, DURATIONS, roles=[],
                                      before_start=watched)
        wolves = wolves_of(players)
        seen_in_view = set()  # (phone?, dir) of the pages that checked a prompt
        tapped = {p.name: [] for p in players}

        async def in_view(player, action):
            page = player.page
            phone = page.viewport_size == PHONE
            if phone:
                await page.wait_for_function(SCROLLED_IN, timeout=WAIT_MS)
            at = await page.evaluate(WHERE)
            if at is None:  # the prompt closed under the test (its phase ended)
                return
            assert at["dir"] == ("rtl" if player.name in ("Omar", "Linh", "Tom") else "ltr"), at
            if not phone:  # on the first screen as laid out: nothing scrolled it there
                assert (at["scrolled"] == 0 and at["bars"] <= at["top"]
                        and at["bottom"] <= at["height"]), (player.name, at)
            assert at["title"] and at["title"] in at["live"], (player.name, at)
            if (phone, at["dir"]) not in seen_in_view:  # the first screen as the player sees it
                shot = f"move-{'phone' if phone else page.viewport_size['width']}-{at['dir']}.png"
                await page.screenshot(path=str(DOCS / "screenshots" / shot))
            seen_in_view.add((phone, at["dir"]))
            if action in TAPPED:
                await tap_a_seat(player, at["key"], action)

        async def tap_a_seat(player, key, action):
            page = player.page
            prompt = f'.prompt[data-key="{key}"]'
            choices = await page.eval_on_selector_all(f"{prompt} button.choice",
                                                      "els => els.map(e => Number(e.dataset.seat))")
            target = pick(action, choices, player, wolves, 1)[0]
            other = next((s for s in choices if s != target), None)

            async def move():
                # Only the seats the prompt offers are buttons on the table.
                offered = await page.eval_on_selector_all(
                    "#table .seat-pick", "els => els.map(e => Number(e.dataset.seat))")
                assert sorted(offered) == sorted(choices), (player.name, offered, choices)
                if other is not None:  # a name button moves the table's choice too
                    await page.click(f'{prompt} button.choice[data-seat="{other}"]')
                    await page.wait_for_selector(
                        f'#table .seat.picked[data-seat="{other}"]'
                        ' .seat-pick[aria-pressed="true"]', state="attached")
                await page.click(f'#table .seat[data-seat="{target}"] .seat-pick')
                await page.wait_for_selector(
                    f'{prompt} button.choice[data-seat="{target}"][aria-pressed="true"]')
                assert await page.locator(
                    f"{prompt} button.choice[aria-pressed='true']").count() == 1
                assert await page.locator("#table .seat.picked").count() == 1
                before = len(events[player.name])
                await page.click(f"{prompt} button.confirm")
                kind = TAPPED[action]
                # The server took the move: its event names this seat and the one tapped.
                taken = await until(player.news, lambda: next(
                    (e for e in events[player.name][before:] if e["kind"] == kind
                     and e["seat"] == player.seat), None))
                assert taken["target"] == target, (player.name, taken, target)
                tapped[player.name].append(action)

            await unless_closed(page, prompt, move)

        await play_through_first_vote(players, on_prompt=in_view)

        # The pack eats the first seat that is not its own (tests/client/table.py's pick): a
        # laptop's, so both phones and a laptop in each language live to the vote.
        assert seen_in_view == {
            (False, "ltr"), (False, "rtl"), (True, "ltr"), (True, "rtl")}, seen_in_view
        votes = {p.name for p in players if "vote" in tapped[p.name]}
        phones = {p.name for p in players if p.page.viewport_size == PHONE}
        assert votes - phones and votes & phones, tapped  # a laptop and a phone voted by a tap
        for p in players:
            assert not p.errors, (p.name, p.errors)

