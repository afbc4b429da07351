"""Six players at one table, each in their own Chromium context, driven through the page only.

A player's moves come from what their page shows (the prompts, their card); the strategy below
only makes games end quickly: the village votes for the werewolf it is told about by the test.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[2]
# Where the browser tests put their screenshots: the README's, docs/, only when asked
# (`WW_SCREENSHOTS=1 scripts/test tests/client`), else a folder outside the tree, so that a test
# run leaves the checkout as it found it.
DOCS = ROOT / "docs" if os.environ.get("WW_SCREENSHOTS") == "1" else Path(
    tempfile.gettempdir()) / "ww-screenshots" / "docs"
(DOCS / "screenshots").mkdir(parents=True, exist_ok=True)
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
LAPTOP = {"width": 1280, "height": 800}
_addresses = (f"198.18.{i // 250}.{i % 250 + 1}" for i in itertools.count())
PHONE = {"width": 360, "height": 740}
WAIT_MS = 120_000  # one phase on a two-core machine running the other tests beside the pages
GAME_MS = 600_000  # a whole game on a loaded machine (a seat dead on the first night waits it out)
# Seed 004's durations for a game through the pages. The role steps always last their full time
# with hidden cards (RULES.md O1): a few seconds each. A day's vote ran its full time in every
# round of a 20-seat game (some page always late), so the vote is short: 30 s of it made half the
# game's length.
SHORT_004 = {"seer": 4, "guard": 4, "medium": 2, "wolves": 20, "discussion": 20, "vote": 15}
# The page wraps every name it puts in a sentence in FSI...PDI (bidi isolation, js/i18n.js): text
# read off a page is compared without them (tests/client/test_contrast.py checks they are there).
_ISOLATES = str.maketrans("", "", "\u2068\u2069")


def isolated(name: str) -> str:
    """`name` as the page puts it in a sentence."""
    return f"\u2068{name}\u2069"


def without_isolates(value):
    """`value` (a page's text, or lists and dicts of them, as `page.evaluate` returns) without the
    bidi isolation marks."""
    if isinstance(value, str):
        return value.translate(_ISOLATES)
    if isinstance(value, list):
        return [without_isolates(v) for v in value]
    if isinstance(value, dict):
        return {k: without_isolates(v) for k, v in value.items()}
    return value


@dataclass
class Player:
    name: str
    context: BrowserContext
    page: Page
    seat: int | None = None
    role: str | None = None
    said: set = field(default_factory=set)
    errors: list = field(default_factory=list)  # uncaught page exceptions
    refused: list = field(default_factory=list)  # error frames the server sent this page
    chat_ids: dict = field(default_factory=dict)  # chat text -> id of the frame that sent it
    sent: dict = field(default_factory=dict)  # frame id -> the type of the command it sent
    replies: dict = field(default_factory=dict)  # frame id -> the server's ack or error
    news: asyncio.Event = field(default_factory=asyncio.Event)  # set on every frame either way


async def until(news: asyncio.Event, check, timeout_s: float = WAIT_MS / 1000):
    """The first non-None `check()`, re-checked each time `news` is set (no polling)."""
    async with asyncio.timeout(timeout_s):
        while True:
            news.clear()  # before the check: a frame arriving after it sets `news` again
            result = check()
            if result is not None:
                return result
            await news.wait()


@asynccontextmanager
async def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS,
                                           headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def new_player(
        browser: Browser, name: str, *, locale: str = "en-US", viewport=LAPTOP) -> Player:
    # Each player from an address of its own, as people are (a table bars a voted-out player's
    # address): told apart by X-Forwarded-For, which the gateway believes from 127.0.0.1 (only a
    # header value: no traffic leaves loopback).
    context = await browser.new_context(locale=locale, viewport=viewport,
                                        extra_http_headers={"X-Forwarded-For": next(_addresses)})
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    player = Player(name=name, context=context, page=page)
    page.on("pageerror", lambda exc: player.errors.append(exc))
    # A resource or script the gateway's Content-Security-Policy blocked is an error too.
    page.on("console", lambda message: player.errors.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text else None)
    page.on("websocket", lambda ws: _watch(player, ws))
    return player


def _watch(player: Player, ws) -> None:
    def sent(payload: str | bytes) -> None:
        frame = json.loads(payload)
        if frame.get("type") == "chat":
            player.chat_ids[frame["text"]] = frame["id"]
        if frame.get("id") is not None:
            player.sent[frame["id"]] = frame.get("type")
        player.news.set()

    def received(payload: str | bytes) -> None:
        frame = json.loads(payload)
        if frame.get("type") == "error":
            player.refused.append(frame)
        if frame.get("type") in ("ack", "error") and frame.get("id") is not None:
            player.replies[frame["id"]] = frame
        player.news.set()

    ws.on("framesent", sent)
    ws.on("framereceived", received)


# What a failed wait reports about the page.
PAGE_STATE = """() => ({
    phase: document.body.dataset.phase,
    connection: document.querySelector("#conn")?.dataset.state,
    chatTabs: [...document.querySelectorAll("#chat-tabs button")].map((b) => b.textContent),
    chatLog: [...document.querySelectorAll("#chat-log li")].map((li) => li.textContent),
    chatFormHidden: document.querySelector("#chat-form")?.hidden,
    composer: document.querySelector("#chat-form")?.dataset.channel,
    chatTo: document.querySelector("#chat-to")?.textContent,
})"""


JOIN_STATE = """() => ({
    screen: document.querySelector(".screen:not([hidden])")?.id,
    seated: document.querySelector("#join-seated")?.textContent,
    toast: document.querySelector("#toast:not([hidden])")?.textContent,
})"""
OUTER_HTML = "(s) => document.querySelector(s)?.outerHTML"


LOBBY_SHOWS = """() => ({
    durations: Object.fromEntries([...document.querySelectorAll("#lobby-durations dt")]
        .map((dt) => [dt.dataset.key, Number(dt.nextElementSibling.textContent)])),
    roles: [...document.querySelectorAll("#lobby-roles li")].map((li) => li.dataset.role),
    hostChecked: [...document.querySelectorAll("#host-roles input:checked")]
        .map((box) => box.value),
})"""
SHOWS_SETTINGS = f"""([durations, roles]) => {{
    const shown = ({LOBBY_SHOWS})();
    return Object.entries(durations).every(([k, v]) => shown.durations[k] === v)
        && (roles === null || roles.every((r) => shown.roles.includes(r))
            && shown.roles.every((r) => ["werewolf", "villager", ...roles].includes(r)));
}}"""


async def seat_table(browser: Browser, url: str, specs: list[tuple[str, str, dict]],
                     durations: dict[str, int], *, roles: list[str] | None = None,
                     replicas: dict[int, str] | None = None, before_start=None,
                     preset: str | None = None, after_join=None) -> tuple[str, list[Player]]:
    """The first spec creates the room through the home page; the others join from the share link,
    or from the same link on another gateway replica (`replicas`: player index -> base URL).
    `after_join(room)` may seat more (bots over the protocol) once the pages sit, and returns how
    many. The host sets the durations (and the special roles, if given) in the lobby; every page
    must show them before the host starts. `before_start(players)` may look at the lobby."""
    players = [await new_player(browser, name, locale=locale, viewport=viewport)
               for name, locale, viewport in specs]
    host = players[0]
    await host.page.goto(url + "/")
    await host.page.fill("#form-create input[name=name]", host.name)
    await host.page.click("#form-create button[type=submit]")
    await host.page.wait_for_selector("#screen-lobby:not([hidden])")
    link = await host.page.input_value("#share-link")
    room = link.rsplit("/", 1)[1]
    # first, as on the host's form (and seed 004 seats 19 and 20 only under it)
    if preset is not None:
        await host.page.select_option("#host-preset", preset)
        await host.page.wait_for_selector(f"#lobby-preset[data-preset='{preset}']")
    for i, p in enumerate(players[1:], start=1):
        await p.page.goto(link.replace(url, (replicas or {}).get(i, url)))
        try:  # the form's fields show once the page has read the lobby (main.js showJoin)
            await p.page.wait_for_selector("#form-join input[name=name]", state="visible")
        except PlaywrightTimeout:
            raise AssertionError(f"{p.name}'s join form never showed: "
                                 f"{await p.page.evaluate(JOIN_STATE)}, "
                                 f"errors {p.errors}") from None
        await p.page.fill("#form-join input[name=name]", p.name)
        await p.page.click("#form-join button[type=submit]")
        await p.page.wait_for_selector("#screen-lobby:not([hidden])")
    seated = len(players) + (await after_join(room) if after_join else 0)
    for p in players:
        await p.page.wait_for_selector(f"#lobby-players li:nth-child({seated})")

    if preset is not None:  # a preset keeps the durations
        for p in players:
            await p.page.wait_for_selector(f"#lobby-preset[data-preset='{preset}']")
        # the host's form has taken the server's values again before it is edited
        await host.page.wait_for_function(
            "() => [...document.querySelectorAll('#host-durations input')].every((i) => i.value)")
    if roles is not None:  # first: the form offers the durations of the roles dealt only
        for box in await host.page.locator("#host-roles input").all():
            await box.set_checked(await box.get_attribute("value") in roles)
        await host.page.wait_for_function(SHOWS_SETTINGS, arg=[{}, roles])
    # The phases this table times (no other ever runs, tests/rules/test_properties.py)
    offered = await host.page.eval_on_selector_all("#host-durations input",
                                                   "els => els.map((e) => e.name)")
    durations = {name: seconds for name, seconds in durations.items() if name in offered}
    for name, seconds in durations.items():
        await host.page.fill(f"#host-durations input[name={name}]", str(seconds))
    # One change sends every field: one settings command rather than one per field.
    await host.page.dispatch_event(f"#host-durations input[name={name}]", "change")
    for p in players:
        try:
            await p.page.wait_for_function(SHOWS_SETTINGS, arg=[durations, roles])
        except PlaywrightTimeout:
            shown = await p.page.evaluate(LOBBY_SHOWS)
            raise AssertionError(
                f"{p.name}'s lobby never showed {durations}, {roles}: {shown}") from None
    if before_start:
        await before_start(players)
    await host.page.click("#start:not([disabled])")
    # The click sent the start and the room took it (a click lost in a re-rendered form sends
    # nothing).
    try:
        started = await until(host.news, lambda: next(
            (host.replies[i] for i, kind in host.sent.items() if kind == "start"
             and i in host.replies), None))
    except TimeoutError:
        raise AssertionError(
            f"the host's start was {'sent' if 'start' in host.sent.values() else 'never sent'}"
            " and never answered") from None
    assert started["type"] == "ack", started
    for p in players:
        try:
            await p.page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")
        except PlaywrightTimeout:
            screen = await p.page.evaluate(
                "() => [document.querySelector('.screen:not([hidden])')?.id,"
                " document.querySelector('#card')?.dataset.role, document.body.dataset.phase,"
                " document.querySelector('#lobby-need')?.textContent]")
            raise AssertionError(f"{p.name}'s game never showed a card: {screen}, errors "
                                 f"{p.errors}, refused {p.refused[-3:]}, "
                                 f"replies {list(p.replies.values())[-3:]}") from None
        p.seat = int(await p.page.get_attribute("#players li.me", "data-seat") or "")
        p.role = await p.page.get_attribute("#card", "data-role")
    return room, players


def wolves_of(players: list[Player]) -> set[int]:
    return {p.seat for p in players if p.role == "werewolf" and p.seat is not None}


async def choices(page: Page, key: str) -> list[int]:
    return await page.eval_on_selector_all(
        f'.prompt[data-key="{key}"] button.choice', "els => els.map(e => Number(e.dataset.seat))")


def pick(action: str, options: list[int], me: Player, wolves: set[int], n: int) -> list[int]:
    """Targets that end the game fast, after a whole day: the pack eats a villager, the village
    votes out a wolf."""
    if action == "vote" and me.role != "werewolf":
        preferred = [s for s in options if s in wolves]
    # No wolf in love, nor shot by the hunter at night, nor robbed by the thief (the pack stays
    # the one the test knows): the game must reach the day.
    elif action in ("vote", "wolves.point", "cupid.link", "hunter.shoot", "thief.steal"):
        preferred = [s for s in options if s not in wolves]
    else:
        preferred = []
    ordered = preferred + [s for s in options if s not in preferred]
    return ordered[:n]


# Types a line into the composer and sends it in one go, so the page cannot move the composer to
# another channel in between; false if the composer is not there or names another channel.
WRITE = """([text, channel]) => {
    const form = document.querySelector("#chat-form");
    if (form.hidden || (channel !== null && form.dataset.channel !== channel)) return false;
    document.querySelector("#chat-input").value = text;
    form.querySelector("button[type=submit]").click();
    return true;
}"""


async def say(player: Player, text: str, channel: str | None = None) -> bool:
    """Write one chat line (to `channel`, if given): True once the server has acked it, False if
    the page offers no composer for it now, or if the server refused it because the phase had
    moved on meanwhile (a page slow to type, on a loaded machine)."""
    if not await player.page.evaluate(WRITE, [text, channel]):
        return False
    try:
        reply = await until(player.news, lambda: player.replies.get(player.chat_ids.get(text)))
    except TimeoutError:
        raise AssertionError(f"{player.name}'s line {text!r} was never answered: "
                             f"{await player.page.evaluate(PAGE_STATE)}, "
                             f"refused: {player.refused[-3:]}") from None
    if reply["type"] == "error":
        assert reply["code"] == "not_your_turn", (player.name, text, reply)
        return False
    return True


async def answer(player: Player, key: str, action: str, wolves: set[int]) -> None:
    """Answer one prompt, unless the server closes it first (others may end the phase)."""
    page = player.page
    selector = f'.prompt[data-key="{key}"]'
    prompt = page.locator(selector)

    async def move() -> None:
        if action == "vote.request":
            await prompt.locator("button").click()
        elif action.startswith("witch."):
            await prompt.locator("button.pass").click()
        else:
            n = max(1, int(await prompt.get_attribute("data-min") or 1))
            for seat in pick(action, await choices(page, key), player, wolves, n):
                await prompt.locator(f'button.choice[data-seat="{seat}"]').click()
            await prompt.locator("button.confirm").click()
        # The client marks the prompt answered once the server has acked.
        try:
            await page.wait_for_selector(f"{selector}[data-answered]")
        except PlaywrightTimeout:
            acts = [i for i, kind in player.sent.items() if kind == "act"]
            raise AssertionError(
                f"{player.name}'s {action} ({key}) was never marked answered: "
                f"{await page.evaluate(PAGE_STATE)}, acts sent {acts[-3:]}, "
                f"their replies {[player.replies.get(i) for i in acts[-3:]]}, "
                f"refused {player.refused[-3:]}, errors {player.errors[-3:]}, prompt "
                f"{await page.evaluate(OUTER_HTML, selector)!r:.600}"
            ) from None

    await unless_closed(page, selector, move)


# Shown as Playwright means it (laid out, not visibility:hidden), checked inside the page.
_SHOWN = """([selector, want]) => [...document.querySelectorAll(selector)].some(
    (e) => e.checkVisibility({visibilityProperty: true})
        && e.getClientRects().length > 0) === want"""


async def shown(page: Page, selector: str, want: bool = True, timeout: float = GAME_MS) -> None:
    """Until an element matching `selector` is shown (`want`) or none is. For the game-long
    waits: polled inside the page 4 times a second, where `wait_for_selector` polls from the
    driver (a few protocol round trips every 500 ms per wait; 40 such waits at once in a
    20-seat game)."""
    await page.wait_for_function(_SHOWN, arg=[selector, want], polling=250, timeout=timeout)


async def unless_closed(page: Page, selector: str, move) -> None:
    """`move()`, unless the prompt at `selector` goes first: its phase ended under it, or the game
    did (the end screen hides it). A failed move is a failure only while the prompt stays."""
    moving = asyncio.ensure_future(move())
    closed = asyncio.ensure_future(shown(page, selector, want=False))
    done, pending = await asyncio.wait({moving, closed}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if moving in done and closed not in done:
        moving.result()


OPEN_PROMPT = ".prompt:not([data-answered])"
PROMPT_KEY_ACTION = f"""() => {{
    const prompt = document.querySelector('{OPEN_PROMPT}');
    return [prompt?.getAttribute("data-key") ?? null, prompt?.getAttribute("data-action") ?? null];
}}"""
THE_END = "#screen-end:not([hidden])"


async def play(player: Player, wolves: set[int], *, until: str = THE_END, on_prompt=None,
               move=None) -> None:
    """Answer every prompt this page shows until `until` matches (a selector); `move(player, key,
    action, wolves)` answers one (`answer` unless given)."""
    page = player.page
    while True:
        await shown(page, f"{until}, {OPEN_PROMPT}")
        if await page.locator(until).count():
            return
        # Read at once in the page: a locator would wait for another open prompt if this one
        # closed meanwhile (its phase over), and time out if none comes (a seat dead since).
        key, action = await page.evaluate(PROMPT_KEY_ACTION)
        if key is None or action is None:  # closed or re-rendered since it was shown
            continue
        if on_prompt:
            await on_prompt(player, action)
        await (move or answer)(player, key, action, wolves)


async def play_all(players: list[Player], *, until: str = THE_END, on_prompt=None,
                   wolves: set[int] | None = None, move=None) -> None:
    """Every page plays until `until`; `wolves`: the pack, if not all of it sits in `players`;
    `move`: as `play`'s."""
    wolves = wolves_of(players) if wolves is None else wolves
    await asyncio.gather(*(play(p, wolves, until=until, on_prompt=on_prompt, move=move)
                           for p in players))


# Where a seat may talk, from the rules: the living by day, the pack while it hunts.
CHANNEL_OF_ACTION = {"vote.request": "day", "wolves.point": "wolves"}


async def chatty(player: Player, action: str) -> None:
    """Say one line in each channel the seat reaches, before its move there."""
    channel = CHANNEL_OF_ACTION.get(action)
    if channel and channel not in player.said and \
            await say(player, f"{player.name} speaks in {channel}", channel):
        player.said.add(channel)


async def press_play_now(player: Player, url: str, preset: str = "seed_000",
                         language: str = "en") -> tuple[str, float]:
    """Play now from the home page (the table's language: `language`); the room the page sits at
    (its lobby), and when the button was pressed (time.monotonic)."""
    page = player.page
    await page.goto(url + "/")
    await page.wait_for_selector("#screen-home:not([hidden])")
    await page.fill("#form-quick input[name=name]", player.name)
    await page.select_option("#quick-preset", preset)
    await page.select_option("#quick-language", language)
    pressed = time.monotonic()
    await page.click("#form-quick button[type=submit]")
    await page.wait_for_selector("#screen-lobby:not([hidden])")
    return (await page.input_value("#share-link")).rsplit("/", 1)[1], pressed


def record_events(player: Player) -> list[dict]:
    """The events the page's sockets receive, in order (`player.news` is set after each)."""
    events: list[dict] = []

    def received(payload: str | bytes) -> None:
        frame = json.loads(payload)
        if frame.get("type") == "event":
            events.append(frame)
            player.news.set()

    player.page.on("websocket", lambda ws: ws.on("framereceived", received))
    return events
