"""Play again with the same table, in Debian's headless Chromium against the real stack (issue 13).

At the end the host clicks once: a new game starts with the same players in the same seats, and
every page follows it by itself, keeping its seat.
"""
from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.client.table import LAPTOP, chromium, play_all, seat_table

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
# Players act at once, so phases end early; a Witch-free table has no step that waits its time out.
DURATIONS = {"cupid": 30, "seer": 30, "wolves": 30, "witch": 30, "election": 30,
             "discussion": 30, "vote": 30, "tiebreak": 30, "hunter": 30, "successor": 30}


@pytest.mark.timeout(600)
def test_the_host_plays_again_with_the_same_table_in_one_click(stack):
    gateway = stack.start_gateway()

    async def main():
        async with chromium() as browser, httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
            room, players = await seat_table(browser, gateway.url, [(n, "en-US", LAPTOP) for n in NAMES],
                                             DURATIONS, roles=["seer"])
            await play_all(players)
            host, others = players[0], players[1:]
            for p in others:
                assert await p.page.is_hidden("#again") and await p.page.is_visible("#again-wait"), p.name
            await host.page.click("#again")
            await host.page.wait_for_function("(room) => !location.hash.includes(room)", arg=room)
            following = (await http.get(f"/api/rooms/{room}")).json()["next"]
            assert following and following != room
            for p in players:
                await p.page.wait_for_url(f"**/#/r/{following}")
                await p.page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")
                assert await p.page.get_attribute("#players li.me", "data-seat") == str(p.seat), p.name
                assert await p.page.is_hidden("#screen-join"), p.name
            facts = (await http.get(f"/api/rooms/{following}")).json()
            assert [q["name"] for q in facts["players"]] == NAMES
            assert facts["status"] == "running" and facts["settings"]["roles"] == ["seer"]
            for p in players:
                assert not p.errors, (p.name, p.errors)

    asyncio.run(main())
