"""`dom.rebuild` in Debian's headless Chromium against the static files alone (a room's socket
played by the test: static.FakeRoom). Another seat's vote redraws the prompt and the table while a
player presses: the press lands on the same button and sends the move, and a kept button runs the
handler of the view it was brought in line with, not the one it was drawn for."""
from __future__ import annotations

import pytest

from contextlib import asynccontextmanager

from tests.client.static import FakeRoom, a_page, prompt, running, sit
from tests.client.table import chromium

pytestmark = [pytest.mark.browser]

VOTE = '.prompt[data-action="vote"]'
ANSWERED = f"{VOTE}[data-answered]"


def votes_sent(room: FakeRoom) -> list[list[int]]:
    return [f["targets"] for f in room.got if f.get("type") == "act" and f.get("action") == "vote"]


@asynccontextmanager
async def at_the_vote(static_site):
    """(room, page): seat 0's page at a day's vote on seats 1-3; no page error by its end."""
    room = FakeRoom(running("day.vote", [prompt("vote", lo=1)]))
    async with chromium() as browser:
        player = await a_page(browser, room)
        await sit(player, static_site)
        yield room, player.page
        assert not player.errors, player.errors


async def press_while(page, selector: str, redraw) -> None:
    """Mouse down on `selector`, `redraw()` (which waits until the page has drawn it), mouse up."""
    box = await page.locator(selector).bounding_box()
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    await page.evaluate("(s) => { window.pressed = document.querySelector(s); }", selector)
    await page.mouse.down()
    await redraw()
    # The same node under the pointer: a replaced one would take the mouse up without the down.
    assert await page.evaluate("(s) => document.querySelector(s) === window.pressed", selector)
    await page.mouse.up()


@pytest.mark.timeout(300)
async def test_a_press_held_while_another_vote_redraws_the_prompt_sends_the_move(static_site):
    async with at_the_vote(static_site) as (room, page):
        # Picked on the table's seat (its button), then on the prompt's: the second pick is what
        # the kept confirm sends.
        await page.click('.seat-pick[data-seat="1"]')
        await page.wait_for_selector(f'{VOTE} button.choice[data-seat="1"][aria-pressed="true"]')

        async def cy_votes_di():
            room.push({"kind": "voted", "seat": 2, "target": 3, "tally": {"3": 1}})
            await page.wait_for_selector(f'{VOTE} button.choice[data-seat="3"] .count')
            await page.wait_for_selector('.seat[data-seat="3"][data-votes="1"]')

        await press_while(page, f'{VOTE} button.choice[data-seat="2"]', cy_votes_di)
        await page.wait_for_selector(f'{VOTE} button.choice[data-seat="2"][aria-pressed="true"]')

        async def ben_votes_di():
            room.push({"kind": "voted", "seat": 1, "target": 3, "tally": {"3": 2}})
            await page.wait_for_selector('.seat[data-seat="3"][data-votes="2"]')

        await press_while(page, f"{VOTE} button.confirm", ben_votes_di)
        await page.wait_for_selector(ANSWERED)
        assert votes_sent(room) == [[2]]


@pytest.mark.timeout(300)
async def test_a_seat_on_the_table_pressed_while_a_vote_lands_is_chosen(static_site):
    async with at_the_vote(static_site) as (room, page):
        await page.wait_for_selector('.seat-pick[data-seat="2"]')

        async def cy_votes_ben():
            room.push({"kind": "voted", "seat": 2, "target": 1, "tally": {"1": 1}})
            await page.wait_for_selector('.seat[data-seat="1"][data-votes="1"]')

        await press_while(page, '.seat-pick[data-seat="2"]', cy_votes_ben)
        await page.wait_for_selector(f'{VOTE} button.choice[data-seat="2"][aria-pressed="true"]')
        await page.click(f"{VOTE} button.confirm")
        await page.wait_for_selector(ANSWERED)
        assert votes_sent(room) == [[2]]
