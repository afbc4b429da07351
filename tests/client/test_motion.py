"""Issue 22, item 3, in Debian's headless Chromium against the real stack: motion and sound.

From the deal through the first day's vote: without reduced motion, night falls (the veil, the
palette's transition) and the card turns over at the deal, day breaks, the night's death is
marked on its seat and the votes' arrows are drawn; under `prefers-reduced-motion: reduce` none of
it runs. The sounds (your turn, the dawn, a vote) are synthesized: heard once the page has had a
tap, off until the player turns them on (a choice that outlives a reload), and silent on the
page that left them off.
"""
from __future__ import annotations


import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from devstack.stack import durations
from tests.client.first_vote import play_through_first_vote
from tests.client.table import LAPTOP, PHONE, WAIT_MS, chromium, seat_table

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

SPECS = [("Layla", "en-US", LAPTOP), ("Omar", "ar", PHONE), ("Mei", "en-US", LAPTOP),
         ("Linh", "ar", PHONE), ("Ana", "en-US", LAPTOP), ("Tom", "en-US", PHONE)]
REDUCED = {"Omar", "Mei"}
MUTED = "Ana"
DURATIONS = durations(30, witch=10)

# What the page animates, transitions and plays from now on, as the browser reports it: every
# CSS animation and transition that starts, every oscillator started (its frequency).
RECORD = """() => {
    Object.assign(window, { animations: [], transitions: [], tones: [] });
    document.addEventListener("animationstart", (e) => animations.push(e.animationName), true);
    document.addEventListener("transitionrun", (e) => transitions.push(e.propertyName), true);
    const start = OscillatorNode.prototype.start;
    OscillatorNode.prototype.start = function (...args) {
        tones.push(this.frequency.value);
        return start.apply(this, args);
    };
}"""
# Two frames on: whatever a change of style started has sent its events by then.
NEXT_FRAMES = (
    "() => new Promise((done) => "
    "requestAnimationFrame(() => requestAnimationFrame(() => done())))"
)
STILL = """() => ({ animations, transitions,
    running: document.getAnimations().map((a) => a.animationName || a.transitionProperty),
    veil: getComputedStyle(document.querySelector("#veil")).animationName,
    sky: document.querySelector("#veil").dataset.sky || null })"""


@pytest.mark.timeout(900)
async def test_night_day_cards_deaths_and_votes_move_unless_reduced_and_sound_unless_muted(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        async def ready(players):
            for p in players:
                page = p.page
                assert await page.get_attribute("#sound", "aria-pressed") == "false"  # off at first
                if p.name != MUTED:  # turned on (a tap: audio may start), a choice remembered
                    await page.click("#sound")
                    assert await page.get_attribute("#sound", "aria-pressed") == "true"
                    await page.reload()
                    await page.wait_for_selector("#screen-lobby:not([hidden])")
                    assert await page.get_attribute("#sound", "aria-pressed") == "true"
                await page.click("#lobby-title")  # a tap: audio may start (muted: stays silent)
                if p.name in REDUCED:
                    await page.emulate_media(reduced_motion="reduce")
                await page.evaluate(RECORD)

        _, players = await seat_table(browser, gateway.url, SPECS, DURATIONS, roles=[],
                                      before_start=ready)
        moving = [p for p in players if p.name not in REDUCED]
        still = [p for p in players if p.name in REDUCED]

        # The deal: night falls and the card turns over, or nothing moves at all.
        for p in moving:
            try:
                await p.page.wait_for_function(
                    "() => animations.includes('ww-nightfall') && animations.includes('ww-flip')"
                    " && transitions.length",
                    timeout=WAIT_MS)
            except PlaywrightTimeout:
                raise AssertionError(
                    f"{p.name}'s page at the deal: {await p.page.evaluate(STILL)}") from None
        for p in still:
            await p.page.wait_for_selector("body[data-phase^='night'] #veil[data-sky='nightfall']",
                                           state="attached")
            await p.page.evaluate(NEXT_FRAMES)
            shown = await p.page.evaluate(STILL)
            assert shown == {"animations": [], "transitions": [], "running": [], "veil": "none",
                             "sky": "nightfall"}, (p.name, shown)

        await play_through_first_vote(players)

        for p in moving:  # day broke, the night's death was marked, the votes' arrows were drawn
            try:
                await p.page.wait_for_function(
                    "() => ['ww-daybreak', 'ww-strike', 'ww-draw']"
                    ".every((name) => animations.includes(name))",
                    timeout=WAIT_MS)
            except PlaywrightTimeout:
                seen = await p.page.evaluate("() => [...new Set(animations)]")
                raise AssertionError(f"{p.name}'s page animated only {seen}") from None
        for p in still:
            await p.page.evaluate(NEXT_FRAMES)
            shown = await p.page.evaluate(STILL)
            assert (not shown["animations"] and not shown["transitions"]
                    and not shown["running"]), (p.name, shown)

        cues = await players[0].page.evaluate("async () => (await import('/js/sound.js')).CUES")
        for p in players:
            tones = await p.page.evaluate("() => tones")
            if p.name == MUTED:
                assert tones == [], tones
            else:  # the dawn's first note and the vote's, reduced motion or not
                assert {cues["dawn"][0][0], cues["vote"][0][0]} <= set(tones), (p.name, tones)
        for p in players:
            assert not p.errors, (p.name, p.errors)

