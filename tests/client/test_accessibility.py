"""Issue 37 part 1 in Debian's headless Chromium against the real stack: every screen passes
axe-core with no serious or critical violation, in English and in Arabic: home, the help, the
lobby and the host's settings, the table by night and by day, each prompt, the chat, the dawn, the
end, the review, a spectator's pages and one phone passed around. One seat plays the whole game by
the keyboard and the accessibility tree alone: Playwright's role and name locators, Tab and Enter,
no CSS selector and no mouse; it picks players on the table's seats and with its move's buttons;
each control it reaches shows its focus, and the page tells it the phase and its turn through live
regions.

One game for all of it (the suite's time): six seats, three in each language, the keyboard's
seventh, a spectator in each language, then one phone in each language up to its first player's
screen.
"""
from __future__ import annotations

import asyncio
import json
import re
from types import SimpleNamespace

import pytest

from devstack.stack import durations
from tests.client.axe import report, violations
from tests.client.table import (
    GAME_MS, LAPTOP, PHONE, ROOT, THE_END, Player, answer, chatty, chromium, new_player, pick, play,
    seat_table, shown, until,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SPECS = [("Layla", "en-US", LAPTOP), ("عمر", "ar", PHONE), ("Mei", "en-US", PHONE),
         ("سارة", "ar", LAPTOP), ("Linh", "en-US", LAPTOP), ("Ana", "ar", PHONE)]
DURATIONS = durations(30, witch=10)
LANGS = {"en-US": "en", "ar": "ar"}
PASS_NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
PASS_DURATIONS = {"seer": 10, "guard": 10, "wolves": 15, "discussion": 60, "vote": 30}
KEYS = "Kim"  # the seat played by the keyboard and the accessibility tree alone
EN = json.loads((ROOT / "gateway/static/i18n/en.json").read_text(encoding="utf-8"))
ACTIONS = {EN[key]: key[len("action."):-len(".title")] for key in EN
           if key.startswith("action.") and key.endswith(".title")}
TABS = 200  # more than the focusable controls of any screen
# The focus as a keyboard user sees it: on `target`, drawn (the page's :focus-visible ring).
FOCUSED = """(e) => e === document.activeElement && e.matches(":focus-visible")
    && getComputedStyle(e).outlineStyle !== "none"
    && parseFloat(getComputedStyle(e).outlineWidth) > 0"""


class Audit:
    """Where each language was checked, and what axe found there."""

    def __init__(self) -> None:
        self.found: dict[str, list[dict]] = {}
        self.seen: dict[str, set[str]] = {"en": set(), "ar": set()}

    async def check(self, page, lang: str, screen: str, who: str = "") -> None:
        # Settled, as a reader meets it: a fade in flight is no state anyone reads.
        await page.emulate_media(reduced_motion="reduce")
        self.seen[lang].add(screen)
        found = await violations(page)
        if found:
            self.found[f"{who or lang} {screen} ({lang}, {page.viewport_size['width']} px)"] = found


def lang_of(p: Player) -> str:
    return LANGS[next(locale for name, locale, _ in SPECS if name == p.name)]


async def tab_to(page, target) -> None:
    """Tab forwards until `target` (a locator) has the focus, shown."""
    for _ in range(TABS):
        await page.keyboard.press("Tab")
        if await target.evaluate(FOCUSED, timeout=10_000):
            return
    raise AssertionError(f"Tab never reached {target} with a visible focus")


async def press(page, target, key: str = "Enter") -> None:
    await tab_to(page, target)
    await page.keyboard.press(key)


async def keyboard_join(kim: Player, url: str, room: str) -> int:
    """Kim joins from the share link by the keyboard (after_join of seat_table)."""
    page = kim.page
    await page.goto(f"{url}/#/r/{room}")
    await tab_to(page, page.get_by_role("textbox", name=EN["home.name"]))
    await page.keyboard.type(KEYS)
    await page.keyboard.press("Enter")
    await page.get_by_role("heading", name=EN["lobby.title"].format(room=room)).wait_for()
    return 1


def open_moves(page):
    """The moves open to Kim: a named group under "Your move" (the moves' fieldset has no name)
    with a button, not yet "Sent"."""
    return page.get_by_role("region", name=EN["act.title"]).get_by_role(
        "group", name=re.compile(r"\S")).filter(
        has=page.get_by_role("button")).filter(
        has_not=page.get_by_text(EN["act.sent"], exact=True))


async def keyboard_says(kim: Player, said: list[str]) -> None:
    """Kim writes a line to the village once, if its composer is open: kept in `said` once the
    server took it (not if the phase moved on as Kim typed: then at its next move)."""
    page = kim.page
    box = page.get_by_role("textbox", name=EN["chat.write_to"].format(
        channel=EN["chat.channel.day"]))
    if said or not await box.count():
        return
    line = f"{KEYS} types this {len(kim.chat_ids)}"
    await press(page, box)
    await page.keyboard.type(line)
    await page.keyboard.press("Enter")
    reply = await until(kim.news, lambda: kim.replies.get(kim.chat_ids.get(line)))
    if reply["type"] == "ack":  # a new line, told through the chat's live region
        await page.get_by_role("list", name=EN["chat.title"]).get_by_text(line).wait_for()
        said.append(line)


async def keyboard_move(kim: Player, me, wolves: set[int], seats: dict[str, int],
                        picks: list[str]) -> None:
    """Kim's next move as a reader finds it: the open move (a group under "Your move" with a button
    and not yet "Sent"), its title, the players named by its buttons; picked with Space, in turn
    on the table's seat (a button named as the seat is read: "Omar, alive, ...") and with the
    move's own button, each shown pressed in both; sent with Enter. `picks` says where each pick
    was made. Returns once the move is sent or its phase is over."""
    page = kim.page
    moves = page.get_by_role("region", name=EN["act.title"])
    title = await open_moves(page).first.get_by_role("heading").inner_text()
    action = ACTIONS[title]
    # Told through a live region: the turn, and by day the phase.
    assert await page.get_by_role("status").filter(
        has_text=EN["turn.live"].split("{")[0].strip()).count(), title
    this = moves.get_by_role("group", name=title, exact=True)

    async def move() -> None:
        if action == "vote.request":
            assert await page.get_by_role("status").filter(
                has_text=EN["phase.day.discussion"]).count()
            await press(page, this.get_by_role("button"))
        elif action.startswith("witch."):
            await press(page, this.get_by_role("button", name=EN["act.pass"], exact=True))
        else:
            named = [name for name, seat in sorted(seats.items(), key=lambda item: item[1])
                     if await this.get_by_role("button", name=name).count()]
            options = [seats[name] for name in named]
            ring = page.get_by_role("list", name=EN["players.title"], exact=True)
            for seat in pick(action, options, me, wolves, 1):
                name = next(n for n, s in seats.items() if s == seat)
                seat_named = rf"^{re.escape(name)}, "
                where = "table" if len(picks) % 2 == 0 else "move"
                await press(page, ring.get_by_role("button", name=re.compile(seat_named))
                            if where == "table" else this.get_by_role("button", name=name), "Space")
                picks.append(where)
                await ring.get_by_role("button", name=re.compile(seat_named), pressed=True
                                       ).wait_for()
                await this.get_by_role("button", name=name, pressed=True).wait_for()
            await press(page, this.get_by_role("button", name=EN["act.confirm"], exact=True))
        await open_moves(page).filter(has=page.get_by_role("heading", name=title, exact=True)
                                      ).wait_for(state="hidden", timeout=GAME_MS)

    moving = asyncio.ensure_future(move())
    closed = asyncio.ensure_future(this.wait_for(state="hidden", timeout=GAME_MS))
    done, pending = await asyncio.wait({moving, closed}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if moving in done and closed not in done:
        moving.result()


async def keyboard_plays(kim: Player, wolves: set[int], seats: dict[str, int]) -> None:
    """Kim plays every move until the end, by the keyboard and the accessibility tree."""
    page = kim.page
    role = await keyboard_role(page)
    me = SimpleNamespace(role=role)
    end = page.get_by_role("heading", name=EN["end.title"], exact=True)
    said: list[str] = []
    picks: list[str] = []
    # Every seat on the table named for a reader: "Omar, alive, ..." (votes against it by day).
    ring = page.get_by_role("list", name=EN["players.title"], exact=True)
    for name in seats:
        assert await ring.get_by_role("listitem", name=re.compile(
            rf"^{re.escape(name)}, {EN['players.alive']}\b")).count() == 1, name
    while True:
        await end.or_(open_moves(page)).first.wait_for(timeout=GAME_MS)
        if await end.is_visible():
            assert "table" in picks, picks  # a seat on the table pressed by the keyboard
            return
        await keyboard_says(kim, said)
        await keyboard_move(kim, me, wolves, seats, picks)


async def keyboard_role(page) -> str:
    """The card Kim was dealt, as its card's region names it."""
    card = page.get_by_role("region", name=EN["card.title"])
    await card.wait_for()
    for key in EN:
        if key.startswith("role.") and await card.get_by_text(EN[key], exact=True).count():
            return key[len("role."):]
    raise AssertionError(f"no card in {await card.inner_text()!r}")


async def one_phone(browser, url: str, audit: Audit, locale: str) -> None:
    """One phone, from its names to the first player's own screen."""
    lang = LANGS[locale]
    phone = await new_player(browser, "Phone", locale=locale, viewport=PHONE)
    page = phone.page
    await page.goto(url + "/")
    await page.click("#pass-open")
    await page.wait_for_selector("#screen-pass:not([hidden])")
    await audit.check(page, lang, "phone names", "phone")
    for i, name in enumerate(PASS_NAMES):
        await page.fill(f"#pass-names li:nth-child({i + 1}) input", name)
    await page.click("#form-pass button[type=submit]")
    await page.wait_for_selector("#screen-lobby:not([hidden]) #lobby-preset[data-preset]")
    await page.wait_for_function(
        "() => [...document.querySelectorAll('#host-durations input')].every((i) => i.value)")
    await audit.check(page, lang, "settings", "phone")
    for name, seconds in PASS_DURATIONS.items():
        await page.fill(f"#host-durations input[name={name}]", str(seconds))
    await page.dispatch_event(f"#host-durations input[name={name}]", "change")
    await page.click("#start:not([disabled])")
    await page.wait_for_selector("#screen-cover:not([hidden])", timeout=120_000)
    await audit.check(page, lang, "phone cover", "phone")
    await page.click("#cover-show")
    await page.wait_for_selector("#screen-game:not([hidden]) #pass-bar:not([hidden])")
    await audit.check(page, lang, "phone seat", "phone")
    assert not phone.errors, phone.errors
    await phone.context.close()


@pytest.mark.timeout(900)
async def test_every_screen_passes_axe_core_in_english_and_arabic(stack):
    gateway = stack.start_gateway()
    audit = Audit()

    async with chromium() as browser:
        for locale, viewport in (("en-US", LAPTOP), ("ar", PHONE)):
            visitor = await new_player(browser, "Visitor", locale=locale, viewport=viewport)
            await visitor.page.goto(gateway.url + "/")
            await visitor.page.wait_for_selector("#screen-home:not([hidden])")
            await audit.check(visitor.page, LANGS[locale], "home")
            await visitor.page.click("#help-open")
            await visitor.page.wait_for_selector("#help[open]")
            await audit.check(visitor.page, LANGS[locale], "help")
            await visitor.context.close()

        spectators = [await new_player(browser, f"Watcher {lang}", locale=locale)
                      for locale, lang in LANGS.items()]

        async def in_the_lobby(players):
            for p in players:
                await p.page.wait_for_selector("#conn[data-state=online]")
                await audit.check(p.page, lang_of(p), "settings" if p is players[0] else "lobby",
                                  p.name)
            watch = await players[0].page.input_value("#watch-link")
            for s, lang in zip(spectators, LANGS.values()):
                await s.page.goto(watch)
                await s.page.wait_for_selector("#screen-lobby:not([hidden])")
                await audit.check(s.page, lang, "spectator lobby", s.name)

        kim = await new_player(browser, KEYS)
        _, players = await seat_table(browser, gateway.url, SPECS, DURATIONS,
                                      roles=["seer", "witch"], before_start=in_the_lobby,
                                      after_join=lambda room: keyboard_join(kim, gateway.url,
                                                                            room))
        seats = {p.name: p.seat for p in players}
        seats[KEYS] = next(s for s in range(len(players) + 1) if s not in seats.values())
        kim.seat, kim.role = seats[KEYS], await keyboard_role(kim.page)
        wolves = {p.seat for p in [*players, kim] if p.role == "werewolf"}
        for p in players:
            await audit.check(p.page, lang_of(p), "table by night", p.name)

        async def by_day(p: Player) -> None:  # the dawn, then the day's table with its chat
            await shown(p.page, f"body[data-phase^='day.'] #screen-game:not([hidden]), {THE_END}")
            if await p.page.locator(THE_END).count():
                return
            if await p.page.locator("#dawn:not([hidden])").count():
                await audit.check(p.page, lang_of(p), "dawn", p.name)
            # (a seat dead in the night reads the dead's channel: empty, maybe until the end)
            await shown(p.page, f"#chat-log li, {THE_END}")
            if not await p.page.locator(THE_END).count():
                await audit.check(p.page, lang_of(p), "table by day with chat", p.name)

        async def checked(p: Player, key: str, action: str, wolves: set[int]) -> None:
            """Each kind of prompt checked once per page, then answered."""
            await chatty(p, action)
            screen = f"prompt {action}"
            if screen not in audit.seen[lang_of(p)]:
                await audit.check(p.page, lang_of(p), screen, p.name)
            await answer(p, key, action, wolves)

        async def plays(p: Player) -> None:
            await play(p, wolves, move=checked)
            await audit.check(p.page, lang_of(p), "end", p.name)
            await p.page.click("#review-link")
            await p.page.wait_for_selector("#review-timeline-card:not([hidden])")
            await audit.check(p.page, lang_of(p), "review", p.name)

        async def watches(s: Player, lang: str) -> None:
            await shown(s.page, "body[data-phase^='day.'] #table .seat")
            # The dawn's dead said at once, as an alert (on a page that taps nothing: a tap puts
            # the dawn away).
            await s.page.get_by_role("alert").get_by_role("listitem").first.wait_for()
            await audit.check(s.page, lang, "dawn", s.name)
            await audit.check(s.page, lang, "spectator table", s.name)
            await shown(s.page, THE_END)
            await audit.check(s.page, lang, "spectator end", s.name)

        await asyncio.gather(*(by_day(p) for p in players), *(plays(p) for p in players),
                             *(watches(s, lang) for s, lang in zip(spectators, LANGS.values())),
                             keyboard_plays(kim, wolves, seats))
        # Kim moved and talked, and the server took it (a move may come as its phase ends).
        acked = {kind for i, kind in kim.sent.items()
                 if kim.replies.get(i, {}).get("type") == "ack"}
        assert {"act", "chat"} <= acked, (kim.sent, kim.replies)
        assert all(e["code"] == "not_your_turn" for e in kim.refused), kim.refused
        for p in [*players, *spectators, kim]:
            assert not p.errors, (p.name, p.errors)

        for locale in LANGS:
            await one_phone(browser, gateway.url, audit, locale)

    assert not audit.found, "\n" + report(audit.found)
    want = {"home", "help", "settings", "lobby", "table by night", "dawn", "table by day with chat",
            "prompt vote", "end", "review", "spectator lobby", "spectator table", "spectator end",
            "phone names", "phone cover", "phone seat"}
    for lang, seen in audit.seen.items():
        assert want <= seen, (lang, sorted(want - seen))
    # Which language's seats the deal wakes, or the night kills, is the deal's (the Seer, or the
    # only wolf, may be Kim's).
    dealt = {p.role for p in players}
    woken = {f"prompt {action}" for role, action in (("werewolf", "wolves.point"),
                                                     ("seer", "seer.inspect")) if role in dealt}
    assert woken <= set.union(*audit.seen.values())
