"""Issue 35 part 1 in Debian's headless Chromium against the real stack: the phone sets the pace.

Eight players on one phone at 360x740, at the default durations, each turn played at once (the
fastest pace a hand could keep; a slower one only leaves each turn more of the step, which waits
for the phone). Every night turn opens with its own time whole: its cover says it, and the clock
the holder then sees is that turn's, never cut short by the server's step (the step lasts until
the phone has called everyone: `round_done`). Every night round calls all eight in seat order,
night after night, whoever wakes. The day's discussion shows its whole time at first, once the
phone shows the dawn (`dawn_shown` starts its clock). Values read off the screen, not timings.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from rules import DEFAULT_DURATIONS
from rules.table import PHONE_TURN
from tests.client.phone import COVER, HOLDER, NEXT, OPEN, PUT_DOWN, table_turn
from tests.client.table import PHONE, chromium, new_player, pick, unless_closed

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom", "Sara", "Ivan"]
# The page's own record, as it happens: every text the phase bar's clock shows (with the phase,
# and how many dawns were shown by then), and every dawn shown.
WATCH = """(() => {
    window.__clock = [];
    window.__dawns = 0;
    window.__opened = [];  // the holder's clock as each turn opens (after the cover's own handler)
    document.addEventListener("click", (e) => {
        if (e.target.closest?.("#cover-show")) window.__opened.push(
            document.querySelector("#countdown").textContent);
    });
    document.addEventListener("DOMContentLoaded", () => {
        const dawn = document.querySelector("#dawn");
        new MutationObserver(() => { if (!dawn.hidden) window.__dawns += 1; })
            .observe(dawn, { attributes: true, attributeFilter: ["hidden"] });
        const clock = document.querySelector("#countdown");
        new MutationObserver(() => window.__clock.push({ text: clock.textContent,
            phase: document.body.dataset.phase, dawns: window.__dawns, at: Date.now(),
            screen: document.querySelector(".screen:not([hidden])")?.id }))
            .observe(clock, { childList: true, characterData: true, subtree: true });
    });
})()"""


def left(seconds: int) -> str:
    return f"{seconds} s left"


async def answer(page, scope: str, role: str, wolves: set[int], abstain: bool) -> None:
    """The first open prompt under `scope`: the night's move from table.pick; the vote abstains
    (nobody leaves on day 1: the second night calls all eight again)."""
    prompt = page.locator(f"{scope} {OPEN}").first
    key = await prompt.get_attribute("data-key")
    action = await prompt.get_attribute("data-action")
    options = [int(s) for s in await prompt.locator("button.choice").evaluate_all(
        "els => els.map((e) => e.dataset.seat)")]
    n = max(1, int(await prompt.get_attribute("data-min") or 1))
    targets = [] if action == "vote" and abstain else pick(
        action, options, SimpleNamespace(role=role), wolves, n)
    selector = f'{scope} .prompt[data-key="{key}"]'

    async def move() -> None:
        if not targets:
            await page.click(f"{selector} button.pass")
        else:
            for seat in targets:
                await page.click(f'{selector} button.choice[data-seat="{seat}"]')
            await page.click(f"{selector} button.confirm")
        await page.wait_for_selector(f"{selector}[data-answered]")

    await unless_closed(page, selector, move)


@pytest.mark.timeout(900)
async def test_eight_players_on_one_phone_each_night_turn_opens_whole_and_the_day_is_seen_whole(
        stack):
    gateway = stack.start_gateway(durations=dict(DEFAULT_DURATIONS))  # the real ones
    async with chromium() as browser:
        phone = await new_player(browser, "Phone", viewport=PHONE)
        page = phone.page
        await page.add_init_script(WATCH)
        await page.goto(gateway.url + "/")
        await page.click("#pass-open")
        while await page.locator("#pass-names input").count() < len(NAMES):
            await page.click("#pass-add")
        for i, name in enumerate(NAMES):
            await page.fill(f"#pass-names li:nth-child({i + 1}) input", name)
        await page.click("#form-pass button[type=submit]")
        # the lobby: the table is marked as played on one phone; the durations left as they are
        await page.wait_for_selector("#screen-lobby:not([hidden]) #lobby-phone:not([hidden])")
        await page.wait_for_selector("#lobby-preset[data-preset='seed_004']")
        await page.click("#start:not([disabled])")

        cards: dict[int, str] = {}
        turns: list[dict] = []  # each night turn: seat, phase, its cover's and its clock's text
        while True:
            await page.wait_for_function(NEXT)
            dawns = await page.evaluate("() => window.__dawns")
            if dawns >= 2:
                break
            if await page.locator(COVER).count():
                phase = await page.evaluate("() => document.body.dataset.phase")
                cover = await page.text_content("#cover-turn")
                seat = int(await page.get_attribute("#cover-show", "data-seat"))
                await page.click("#cover-show")
                await page.wait_for_selector(HOLDER)
                clock = (await page.evaluate("() => window.__opened")).pop()
                cards[seat] = await page.get_attribute("#card", "data-role")
                if phase.startswith("night."):
                    turns.append({"seat": seat, "phase": phase, "night": dawns + 1,
                                  "cover": cover, "clock": clock})
                wolves = {s for s, r in cards.items() if r == "werewolf"}
                while await page.locator(f"#prompts {OPEN}").count():
                    await answer(page, "#prompts", cards[seat], wolves, True)
                await page.wait_for_function(PUT_DOWN)
                continue
            await table_turn(
                page, lambda scope, voter: answer(page, scope, cards.get(voter, ""), set(), True))

        # Every night turn opened with its own time, whole: the cover said it, and the clock the
        # holder saw first was that turn's (the step's end, had it been nearer, would show).
        assert turns, turns
        assert {t["cover"] for t in turns} == {f"Your turn: {PHONE_TURN} s, from your tap"}
        short = [t for t in turns if t["clock"] != left(PHONE_TURN)]
        assert short == [], short
        # Each night: rounds of all eight in seat order, one round per step.
        for night in (1, 2):
            mine = [(t["seat"], t["phase"]) for t in turns if t["night"] == night]
            assert mine and len(mine) % len(NAMES) == 0, mine
            for i in range(0, len(mine), len(NAMES)):
                one = mine[i:i + len(NAMES)]
                assert [seat for seat, _ in one] == list(range(len(NAMES))), one
                assert len({phase for _, phase in one}) == 1, one

        # The discussion's clock: nothing before the phone's dawn, then its whole time first.
        shown = [c for c in await page.evaluate("() => window.__clock")
                 if c["phase"] == "day.discussion" and c["text"]]
        assert shown, await page.evaluate("() => window.__clock")
        assert shown[0]["dawns"] >= 1, shown[0]
        log = await page.evaluate("() => window.__clock")
        assert shown[0]["text"] == left(DEFAULT_DURATIONS["discussion"]), (
            shown[:3], [c for c in log if c["dawns"] >= 1][:30])
        assert not phone.errors, phone.errors
