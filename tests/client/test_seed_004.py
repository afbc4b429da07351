"""Seed 004's table in the browser against the real stack: the host picks the "Web table (004)"
preset first, then the short durations; a table of 20 plays to the end through 6 pages and 14
bots (a table of 4 plays it in tests/client/test_end_story.py).
The cards of the dead stay hidden until the end, and every role's night step runs its full time,
so the role steps are kept short."""
from __future__ import annotations

import asyncio
import random

import pytest

from devstack.players import Bot
from devstack.stack import connect, join_room
from tests.client.table import (
    DOCS, LAPTOP, PHONE, SHORT_004, THE_END, Player, chromium, pick, play_all, seat_table,
    wolves_of,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

FEED = """() => [...document.querySelectorAll("#feed li")].map((li) => li.textContent)"""


class Knowing(Bot):
    """A bot that plays as the pages do (table.pick), to end the game fast: it knows the pack."""
    role: str | None = None
    wolves: set[int] = set()

    async def answer(self, prompt: dict) -> None:
        choices, action = prompt["choices"], prompt["action"]
        n = 0 if action == "vote.request" or action.startswith("witch.") else max(1, prompt["min"])
        me = Player(name="bot", context=None, page=None, role=self.role)  # type: ignore[arg-type]
        await self._send({"type": "act", "action": action,
                          "targets": pick(action, choices, me, self.wolves, n)})


async def play_004(
        url: str, seats: int, pages: int, *, screenshot: bool = False) -> tuple[list, list]:
    """`pages` seats play in browser pages, the rest as protocol bots playing as the pages do."""
    bots: list[Knowing] = []

    async def join_bots(room: str) -> int:
        ws_url = url.replace("http://", "ws://")
        for i in range(pages, seats):
            seat = await join_room(url, room, f"Bot {i}")
            bots.append(Knowing(await connect(ws_url, room, seat["token"]), random.Random(i),
                                chatty=False))
        return len(bots)

    async with chromium() as browser:
        specs = [(f"P{i}", "en-US", PHONE if i % 2 else LAPTOP) for i in range(pages)]

        async def look(players):
            host = players[0]
            # the host sees the size picker with the code's deal for the table seated
            await host.page.wait_for_selector("#host-size-box:not([hidden])")
            assert await host.page.input_value("#host-size") == str(seats)
            if screenshot:
                await host.page.evaluate("() => window.scrollTo(0, 0)")
                form = await host.page.locator("#lobby-host").bounding_box()
                # the whole page, cut to the form: the sticky top bar is not drawn over it
                await host.page.screenshot(path=str(DOCS / "screenshots" / "settings-004.png"),
                                           full_page=True, clip=form)
            for p in players:  # every seat sees the chosen rules
                assert await p.page.locator("#lobby-rules dt[data-key='wolves_win']").count() == 1
                # Pages animating every night and dawn on two cores fell a phase behind; the
                # motion has its own test (test_motion.py), the rules of 004 are tested here.
                await p.page.emulate_media(reduced_motion="reduce")

        _, players = await seat_table(browser, url, specs, SHORT_004, preset="seed_004",
                                      before_start=look, after_join=join_bots)
        for bot in bots:
            bot.role = (await bot.client.recv_until(lambda f: f.get("kind") == "role"))["role"]
        wolves = wolves_of(players) | {bot.client.seat for bot in bots if bot.role == "werewolf"}
        for bot in bots:
            bot.wolves = wolves
        await asyncio.gather(play_all(players, wolves=wolves), *(bot.play() for bot in bots))
        for p in players:
            await p.page.wait_for_selector(THE_END)
            assert not p.errors, (p.name, p.errors)
        # the dead's cards stayed hidden in every seat's news, all game long
        for p in players:
            feed = await p.page.evaluate(FEED)
            assert not [line for line in feed if "Their card:" in line], (p.name, feed)
        assert any("stays hidden" in line for line in await players[0].page.evaluate(FEED))
        return players, bots


# Twenty pages beside the rest of the suite on two cores took ~250 s alone and several times that
# beside it: six pages show the twenty-seat table, fourteen bots fill it.
@pytest.mark.timeout(900)
async def test_a_twenty_seat_seed_004_table_plays_to_the_end_in_six_pages(stack):
    gateway = stack.start_gateway()
    players, bots = await play_004(gateway.url, 20, 6, screenshot=True)
    assert sorted([p.seat for p in players] + [b.client.seat for b in bots]) == list(range(20))
