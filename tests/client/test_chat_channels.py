"""Where a chat line goes, in Debian's headless Chromium against the real stack (issue 13).

The server picks a line's channel from the seat's state: the village by day, the pack for a living
wolf at night, nothing for the other sleepers, the dead channel for the dead. The page must name
that channel before the line is written, follow it as phases change, and never let a line reach a
channel its writer was not shown: not a draft typed for the pack before dawn, not a line in flight
as the phase changes; offline, a line waits in the composer (its send waits for the connection).

Six players, no special roles: one wolf, whose pointing ends the night at once.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from tests.client.table import (
    LAPTOP, PAGE_STATE, Player, chromium, play, say, seat_table, until, wolves_of,
)
from tests.client.static import catalogue

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

# The test ends phases by acting; the clock never should.
LONG = {name: 300 for name in ("cupid", "seer", "wolves", "witch", "election", "discussion", "vote",
                               "tiebreak", "hunter", "successor")}
NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
EN = catalogue("en")
ELECTION = "body[data-phase='day.election']"
DISCUSSION = "body[data-phase='day.discussion']"
VOTE = "body[data-phase='day.vote']"
NIGHT_2 = f"body[data-phase='night.wolves'] #phase-day:text-is('{EN['game.night'].format(n=2)}')"

COMPOSER_NAMES = """(want) => {
    const form = document.querySelector("#chat-form");
    const to = document.querySelector("#chat-to").textContent.trim();
    return want === null ? form.hidden : !form.hidden && to === want;
}"""


async def table(browser, url: str) -> list[Player]:
    _, players = await seat_table(browser, url, [(n, "en-US", LAPTOP) for n in NAMES], LONG,
                                  roles=[])
    return players


async def through(relay: Relay, player: Player) -> None:
    """From now on the player's page talks to the gateway through `relay` (a reload reconnects
    it)."""
    await player.page.route_web_socket(lambda url: "/ws/" in url, relay.route)
    await player.page.reload()
    await player.page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")


async def composer_names(player: Player, channel: str | None) -> None:
    """The page offers a composer that names `channel` (None: no composer at all)."""
    want = None if channel is None else EN["chat.write_to"].format(
        channel=EN[f"chat.channel.{channel}"])
    try:
        await player.page.wait_for_function(COMPOSER_NAMES, arg=want)
    except Exception:
        raise AssertionError(f"{player.name} ({player.role}) should be shown "
                             f"{want or 'no composer'}: "
                             f"{await player.page.evaluate(PAGE_STATE)}") from None


async def chat_text(player: Player) -> str:
    return " ".join(await player.page.eval_on_selector_all("#chat-log li",
                                                           "els => els.map(e => e.textContent)"))


async def alive(players: list[Player]) -> list[Player]:
    return [p for p in players if await p.page.locator("#players li.me[data-alive='1']").count()]


def roles(players):
    wolf = next(p for p in players if p.role == "werewolf")
    return wolf, [p for p in players if p is not wolf]


@pytest.mark.timeout(600)
async def test_the_composer_names_the_server_s_channel_and_a_pack_draft_never_reaches_the_village(
        stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        players = await table(browser, gateway.url)
        wolf, villagers = roles(players)
        assert await say(wolf, "a line for the pack")

        # Typed for the pack, not sent; the wolf's pointing ends the night, the wolf hits Send.
        secret = "the pack eats the baker tonight"
        await wolf.page.fill("#chat-input", secret)
        await play(wolf, wolves_of(players), until=ELECTION)
        await wolf.page.click("#chat-form button[type=submit]")
        morning = "good morning, village"
        assert await say(wolf, morning)
        for p in villagers:
            await p.page.wait_for_selector(ELECTION)
        living = await alive(villagers)
        [victim] = [p for p in villagers if p not in living]
        for p in living:
            await p.page.wait_for_selector(f'#chat-log li:has-text("{morning}")')
            assert secret not in await chat_text(p), p.name
        assert secret not in wolf.chat_ids

        # The day's composer; the dead write to the dead, and read the village in its own tab.
        await composer_names(wolf, "day")
        assert await wolf.page.input_value("#chat-input") == ""
        for p in living:
            await composer_names(p, "day")
        await composer_names(victim, "dead")
        await victim.page.click("#chat-tabs button[data-channel=day]")
        await victim.page.wait_for_selector(f'#chat-log li:has-text("{morning}")')
        await composer_names(victim, None)

        # Reading the pack's tab by day, the wolf gets no composer under it, only a way back.
        await wolf.page.click("#chat-tabs button[data-channel=wolves]")
        await composer_names(wolf, None)
        await wolf.page.click("#chat-goto")
        await composer_names(wolf, "day")
        for p in players:
            assert not p.errors, (p.name, p.errors)



@pytest.mark.timeout(600)
async def test_a_sleeping_villager_has_no_composer_at_night(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        players = await table(browser, gateway.url)
        wolf, villagers = roles(players)
        for p in villagers:
            await composer_names(p, None)
            assert await p.page.is_visible("#chat-readonly"), p.name
        await composer_names(wolf, "wolves")

        # A day where nobody is voted out, then the second night.
        await play(wolf, wolves_of(players), until=ELECTION)
        for p in players:
            await p.page.wait_for_selector(ELECTION)
        living = await alive(players)
        await asyncio.gather(*(play(p, wolves_of(players), until=VOTE) for p in living))
        for p in living:
            await composer_names(p, "day")
            await p.page.click('.prompt[data-action="vote"] button.pass')
        for p in living:
            await p.page.wait_for_selector(NIGHT_2)
            await composer_names(p, "wolves" if p is wolf else None)
        for p in players:
            assert not p.errors, (p.name, p.errors)



class Relay:
    """Proxies a page's sockets to the gateway. It can hold the page's chat frames back, and cut
    the link: the open socket closes and the page's next one waits, unanswered, until `restore`.
    It keeps every frame the server got from the page, and the server's answers by id."""

    def __init__(self) -> None:
        self.holding = False
        self.held: list = []  # (server side, message) of chat frames held back
        self.cut = False
        self.parked: list = []  # (page side, what it sent) of sockets opened while cut
        self.live: list = []  # (page side, server side)
        self.to_server: list[dict] = []
        self.answers: dict = {}
        self.news = asyncio.Event()

    def route(self, page_side) -> None:
        if self.cut:
            sent: list = []
            page_side.on_message(lambda message: sent.append(message))
            self.parked.append((page_side, sent))
            self.news.set()
            return
        self._connect(page_side, [])

    def _connect(self, page_side, already: list) -> None:
        server_side = page_side.connect_to_server()

        def from_page(message) -> None:
            frame = json.loads(message)
            if self.holding and frame.get("type") == "chat":
                self.held.append((server_side, message))
            else:
                self.to_server.append(frame)
                server_side.send(message)
            self.news.set()

        def from_server(message) -> None:
            frame = json.loads(message)
            if frame.get("type") in ("ack", "error") and frame.get("id") is not None:
                self.answers[frame["id"]] = frame
            page_side.send(message)
            self.news.set()

        page_side.on_message(from_page)
        server_side.on_message(from_server)
        self.live.append((page_side, server_side))
        for message in already:
            from_page(message)

    def release(self) -> list[str]:
        """Send the held chat frames on; their ids."""
        self.holding = False
        ids = []
        for server_side, message in self.held:
            self.to_server.append(json.loads(message))
            ids.append(json.loads(message)["id"])
            server_side.send(message)
        self.held.clear()
        return ids

    async def drop(self) -> None:
        self.cut = True
        for page_side, server_side in self.live:
            await server_side.close()
            await page_side.close(code=1012)  # "service restart": the page retries
        self.live.clear()

    def restore(self) -> None:
        self.cut = False
        for page_side, sent in self.parked:
            self._connect(page_side, sent)
        self.parked.clear()

    def chat_sent(self, text: str) -> bool:
        return any(f.get("type") == "chat" and f.get("text") == text for f in self.to_server)


@pytest.mark.timeout(600)
async def test_a_pack_line_in_flight_as_day_breaks_is_refused_not_posted_to_the_village(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        players = await table(browser, gateway.url)
        wolf, villagers = roles(players)
        relay = Relay()
        await through(relay, wolf)
        await composer_names(wolf, "wolves")
        line = "quick, before dawn"
        relay.holding = True
        await wolf.page.fill("#chat-input", line)
        await wolf.page.click("#chat-form button[type=submit]")
        await until(relay.news, lambda: relay.held or None)
        await play(wolf, wolves_of(players), until=ELECTION)
        [frame_id] = relay.release()  # it reaches the server by day
        answer = await until(relay.news, lambda: relay.answers.get(frame_id))
        assert answer.get("code") == "not_your_turn", answer
        await wolf.page.wait_for_selector(f'#toast:has-text("{EN["chat.moved_on"]}")')
        for p in villagers:
            assert line not in await chat_text(p), p.name



@pytest.mark.timeout(600)
async def test_offline_a_line_waits_in_the_composer_until_the_page_is_back(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        players = await table(browser, gateway.url)
        wolves = wolves_of(players)
        await asyncio.gather(*(play(p, wolves, until=DISCUSSION) for p in players))
        living = await alive(players)
        writer, others = living[0], living[1:]
        relay = Relay()
        await through(relay, writer)

        # Offline in the discussion, the writer types a line: its send waits for the connection
        # (nothing is queued for a phase that may be over when the page is back).
        await relay.drop()
        await until(relay.news, lambda: relay.parked or None)
        await composer_names(writer, "day")
        await writer.page.wait_for_selector("#chat-form button[type=submit]:disabled")
        queued = "written in the discussion"
        await writer.page.fill("#chat-input", queued)
        await writer.page.press("#chat-input", "Enter")  # no submitting by the keyboard either
        # Meanwhile the others ask to vote: the discussion ends, the vote begins.
        await asyncio.gather(*(play(p, wolves, until=VOTE) for p in others))
        relay.restore()
        await writer.page.wait_for_selector("#conn[data-state=online]")
        await writer.page.wait_for_selector("#chat-form button[type=submit]:enabled")
        # The line never went out; it is still in the composer, the writer's to send now.
        assert not relay.chat_sent(queued)
        assert await writer.page.input_value("#chat-input") == queued
        await writer.page.click("#chat-form button[type=submit]")
        for p in others:
            await p.page.wait_for_selector(f'#chat-log li:has-text("{queued}")')

