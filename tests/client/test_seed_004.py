"""Seed 004's table in the browser against the real stack: the host picks the "Web table (004)"
preset first, then the short durations; 4 and 20 players play to the end through their pages.
The cards of the dead stay hidden until the end, and every role's night step runs its full time,
so the role steps are kept short."""
from __future__ import annotations

import asyncio

import pytest

from tests.client.table import DOCS, LAPTOP, PHONE, THE_END, chromium, play_all, seat_table

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

# The role steps always last their full time with hidden cards (RULES.md O1): a few seconds each.
# A day's vote ran its full time in every round of a 20-seat game (some page always late), so
# the vote is short: 30 s of it made half the game's length.
SHORT_004 = {"seer": 4, "guard": 4, "medium": 2, "wolves": 20, "discussion": 20, "vote": 15}
FEED = """() => [...document.querySelectorAll("#feed li")].map((li) => li.textContent)"""


async def play_004(url: str, n: int, *, screenshot: bool = False) -> list:
    async with chromium() as browser:
        specs = [(f"P{i}", "en-US", PHONE if i % 2 else LAPTOP) for i in range(n)]

        async def look(players):
            host = players[0]
            # the host sees the size picker with the code's deal for the table seated
            await host.page.wait_for_selector("#host-size-box:not([hidden])")
            assert await host.page.input_value("#host-size") == str(n)
            if screenshot:
                await host.page.evaluate("() => window.scrollTo(0, 0)")
                form = await host.page.locator("#lobby-host").bounding_box()
                # the whole page, cut to the form: the sticky top bar is not drawn over it
                await host.page.screenshot(path=str(DOCS / "screenshots" / "settings-004.png"), full_page=True, clip=form)
            for p in players:  # every seat sees the chosen rules
                assert await p.page.locator("#lobby-rules dt[data-key='wolves_win']").count() == 1
                # Twenty pages animating every night and dawn on two cores fell a phase behind;
                # the motion has its own test (test_motion.py), the rules of 004 are tested here.
                await p.page.emulate_media(reduced_motion="reduce")

        _, players = await seat_table(browser, url, specs, SHORT_004, preset="seed_004",
                                      before_start=look)
        await play_all(players)
        for p in players:
            await p.page.wait_for_selector(THE_END)
            assert not p.errors, (p.name, p.errors)
        # the dead's cards stayed hidden in every seat's news, all game long
        for p in players:
            feed = await p.page.evaluate(FEED)
            assert not [line for line in feed if "Their card:" in line], (p.name, feed)
        assert any("stays hidden" in line for line in await players[0].page.evaluate(FEED))
        return players


@pytest.mark.timeout(600)
def test_four_browsers_play_a_seed_004_game_to_the_end(stack):
    gateway = stack.start_gateway()
    players = asyncio.run(play_004(gateway.url, 4, screenshot=True))
    assert len(players) == 4


# Beside the rest of the suite on two cores, twenty pages take several times their ~250 s alone.
@pytest.mark.timeout(1500)
def test_twenty_browsers_play_a_seed_004_game_to_the_end(stack):
    gateway = stack.start_gateway()
    players = asyncio.run(play_004(gateway.url, 20))
    assert sorted(p.seat for p in players) == list(range(20))
