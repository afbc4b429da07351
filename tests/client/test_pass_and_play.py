"""One phone passed around (issue 10 part 5, issue 22 item 1) in Debian's headless Chromium
against the real stack: six players on one page at 360 px, from the names to the end. Each
player's screen comes after a cover naming them; the test checks every screen shown after a player
put the phone down (the next cover, or the table's own screen) and every screen shown after a cover
against what the previous player saw: no card, night result or private line of theirs may be in
the page.

The nights go round the table: every living seat, in seat order, once for each night step, whether
it wakes then or not; so a second table of the same size, with another deal, played at the same
time, must see the very same covers night by night. The dawn shows only once the phone is down
again, never over a player's screen. Takes the README's pictures of the cover and of a card shown.

Issue 35 part 2: each player's move (a prompt, or "nothing to do" for a turn without one) is the
first thing on the screen the cover lifts to, whole, at 360x740, with nothing scrolled; "Done" stays
disabled until the move is made (a seat picked but not confirmed is not made).
"""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from tests.client.phone import (COVER, HOLDER, NEXT, OPEN, PRIVATE_FEED, PUT_DOWN, SCREEN,
                                answer_here, no_trace_of)
from tests.client.table import DOCS, PHONE, chromium, new_player

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
# Seed 004 (the pass page's preset). The night steps follow the phone (each waits for its round:
# tests/client/test_phone_pace.py), so theirs matter only if the phone is put aside; the day's
# are kept short. seed 004 at six seats: the form offers only the phases it times (no Medium
# before 7 seats)
DURATIONS = {"seer": 10, "guard": 10, "wolves": 15, "discussion": 60, "vote": 30}
SHOTS = DOCS / "screenshots"
# The vote's picture: the dawn put away, the table's votes under the pinned phase bar.
VOTE_IN_VIEW = """() => {
    document.querySelector('#dawn-close')?.click();
    const top = document.querySelector('#pass-table').getBoundingClientRect().top + scrollY;
    window.scrollTo(0,
        top - document.querySelector('.phasebar').getBoundingClientRect().bottom - 8);
}"""

# The page's own record of the phone, kept across a reload (sessionStorage): each cover tapped
# (the seat, and the phase its cover showed), each "Done", each dawn shown (on which screen, and
# whether a player's screen was up), each page load. Written as it happens, in the page.
LOG_KEY = "ww:test:passlog"
PHONE_LOG = """(() => {
    const log = (entry) => {
        const all = JSON.parse(sessionStorage.getItem("%(key)s") || "[]");
        all.push(entry);
        sessionStorage.setItem("%(key)s", JSON.stringify(all));
    };
    log({ kind: "load" });
    document.addEventListener("click", (e) => {
        const button = e.target.closest?.("#cover-show, #pass-done");
        if (button?.id === "cover-show") log({ kind: "take", seat: Number(button.dataset.seat),
                                               phase: document.body.dataset.phase });
        else if (button) log({ kind: "done" });
    }, true);
    document.addEventListener("DOMContentLoaded", () => {
        const dawn = document.querySelector("#dawn");
        let up = !dawn.hidden;
        new MutationObserver(() => {
            if (up === !dawn.hidden) return;
            up = !dawn.hidden;
            if (up) log({ kind: "dawn", screen: document.querySelector(".screen:not([hidden])")?.id,
                          holder: !document.querySelector("#pass-bar").hidden
                              && !document.querySelector("#screen-game").hidden });
        }).observe(dawn, { attributes: true, attributeFilter: ["hidden"] });
    });
})()""" % {"key": LOG_KEY}
READ_LOG = f"() => JSON.parse(sessionStorage.getItem('{LOG_KEY}') || '[]')"
# The move as the cover lifts: the first open prompt (or the "nothing to do"), against the screen
# and the sticky bars over it; whether "Done" may be tapped.
MOVE = """() => {
    const node = document.querySelector(
        "#prompts .prompt:not([data-answered]), #prompts #pass-idle:not([data-picked])");
    const r = node?.getBoundingClientRect();
    return { move: node ? node.dataset.action ?? "idle" : null, top: r?.top, bottom: r?.bottom,
             bars: document.querySelector(".phasebar").getBoundingClientRect().bottom,
             height: innerHeight, scrolled: scrollY,
             done: !document.querySelector("#pass-done").disabled };
}"""


def in_view(at: dict) -> bool:
    """The move whole on the first screen, under the bars, nothing scrolled."""
    return at["scrolled"] == 0 and at["bars"] <= at["top"] and at["bottom"] <= at["height"]


def nights_of(log: list[dict]) -> list[list[tuple[int, str]]]:
    """The night's turns (seat, the phase its cover showed) of each night that dawned, from the
    page's record. Each dawn must have shown with no player's screen up, right after a "Done" (the
    phone back on a cover or the table's screen). A reload starts the night's round again."""
    nights, turns, previous = [], [], None
    for entry in log:
        if entry["kind"] == "load":
            turns = []
        elif entry["kind"] == "take" and entry["phase"].startswith("night."):
            turns.append((entry["seat"], entry["phase"]))
        elif entry["kind"] == "dawn":
            assert not entry["holder"] and entry["screen"] in ("screen-cover", "screen-game"), entry
            assert previous is not None and previous["kind"] == "done", (previous, entry)
            nights.append(turns)
            turns = []
        previous = entry
    return nights


def rounds_of(turns: list[tuple[int, str]], living: list[int]) -> list[str]:
    """The night's rounds: every living seat in seat order, once per step, each round under one
    step; returns the steps in order."""
    names = [NAMES[seat] for seat, _ in turns]
    n = len(living)
    assert turns and len(turns) % n == 0, names
    rounds = [turns[i:i + n] for i in range(0, len(turns), n)]
    for one in rounds:
        assert [seat for seat, _ in one] == living, names
        assert len({phase for _, phase in one}) == 1, one
    steps = [one[0][1] for one in rounds]
    assert len(set(steps)) == len(steps), steps
    return steps


async def play_table(browser, url: str, *, shots: set | None = None, dawns: int | None = None,
                     dealt=None):
    """Seat NAMES on one phone (a page of its own) and play: every cover, every seat's turn, the
    table's votes, until the end or until `dawns` dawns have shown. `shots`: take the README's
    pictures and reload once at the first turn. `dealt(cards)`, once the first night is over:
    false gives this table up (returns None)."""
    phone = await new_player(browser, "Phone", viewport=PHONE)
    page = phone.page
    await page.add_init_script(PHONE_LOG)
    await page.goto(url + "/")
    await page.click("#pass-open")
    await page.wait_for_selector("#screen-pass:not([hidden])")
    assert await page.locator("#pass-names input").count() == len(NAMES)
    for i, name in enumerate(NAMES):
        await page.fill(f"#pass-names li:nth-child({i + 1}) input", name)
    await page.click("#form-pass button[type=submit]")

    # The preparation: seed 004's preset, the players, the rules for all, the durations.
    await page.wait_for_selector(
        "#screen-lobby:not([hidden]) #lobby-preset[data-preset='seed_004']")
    assert await page.is_hidden("#lobby-share") and await page.is_hidden("#lobby-watch")
    assert await page.locator("#lobby-players li").count() == len(NAMES)
    assert await page.input_value("#host-size") == str(len(NAMES))
    await page.wait_for_function(
        "() => [...document.querySelectorAll('#host-durations input')].every((i) => i.value)")
    for name, seconds in DURATIONS.items():
        await page.fill(f"#host-durations input[name={name}]", str(seconds))
    await page.dispatch_event(f"#host-durations input[name={name}]", "change")
    await page.wait_for_function(
        """(d) => Object.entries(d).every(([k, v]) =>
            document.querySelector(`#lobby-durations dt[data-key=${k}]`)?.nextElementSibling
                .textContent === String(v))""",
        arg=DURATIONS)
    await page.click("#start:not([disabled])")

    cards: dict[int, str] = {}  # seat -> card, as each player's own screen showed it
    seen: dict[str, dict] = {}  # name -> what their last screen held
    last: dict | None = None  # the screen of the player who put the phone down last
    covers = checks = idle = 0
    moves: list[dict] = []  # each turn's move as its cover lifted (MOVE)
    asked = False  # `dealt` was asked
    while True:
        await page.wait_for_function(NEXT, timeout=240_000)
        dawned = sum(entry["kind"] == "dawn" for entry in await page.evaluate(READ_LOG))
        if dealt and dawned and not asked:
            asked = True
            if not await dealt(dict(cards)):
                await phone.context.close()
                return None
        if dawns is not None and dawned >= dawns:
            break
        now = await page.evaluate(SCREEN, PRIVATE_FEED)
        if now["screen"] == "screen-end":
            break
        if last is not None:  # the first screen after a player put the phone down (or a reload)
            assert now["screen"] in ("screen-cover",
                                     "screen-game") and not now["who"], now["screen"]
            assert not (now["role"] or now["art"] or now["cardText"] or now["explain"]), now
            assert no_trace_of(last, now) == [], (last["name"], now["screen"])
            checks += 1
            last = None
        if await page.locator(COVER).count():
            covers += 1
            name = (await page.text_content("#cover-title")).removeprefix(
                "Pass the phone to ").strip("\u2068\u2069")
            assert name in NAMES
            if shots is not None and "cover" not in shots:
                shots.add("cover")
                await page.screenshot(path=str(SHOTS / "pass-cover.png"))
            phase = await page.evaluate("() => document.body.dataset.phase")
            await page.click("#cover-show")
            await page.wait_for_selector(HOLDER)
            mine = await page.evaluate(SCREEN, PRIVATE_FEED)
            assert mine["name"] == name and name in mine["who"], (name, mine["who"])
            assert mine["role"] and mine["art"], mine
            # the turn shows its round's step, whatever the server is at (a lone wolf who pointed
            # ended his: the seats after him still see the night, and its victim alive); never
            # under the dawn
            assert mine["phase"] == phase, (name, phase, mine["phase"])
            if phase.startswith("night.") and dawned < 2:  # nobody has left before the second dawn
                assert mine["alive"] == len(NAMES), (name, phase, mine["alive"])
            assert await page.is_hidden("#dawn"), name
            # the move first, whole on the screen the cover lifts to; "Done" waits for it
            move = await page.evaluate(MOVE)
            if move["move"] is not None:
                moves.append(move)
                assert not move["done"], (name, move)
            cards[mine["seat"]] = mine["role"]
            # a reload puts the phone down: a cover comes back
            if shots is not None and "reload" not in shots:
                shots.add("reload")
                await page.reload()
                last = mine
                continue
            for other, theirs in seen.items():  # nobody else's screen comes back with it
                if other != name:
                    same = theirs["role"] == mine["role"]
                    assert no_trace_of(theirs, mine, same_card=same) == [], (other, name)
                    checks += 1
            if shots is not None and mine["role"] != "villager" and "card" not in shots:
                shots.add("card")
                await page.screenshot(path=str(SHOTS / "pass-card.png"))
            wolves = {s for s, r in cards.items() if r == "werewolf"}
            while await page.locator(f"#prompts {OPEN}").count():
                await answer_here(page, "#prompts", mine["role"], wolves, mine["seat"], dawned < 2)
            seen[name] = last = await page.evaluate(SCREEN, PRIVATE_FEED)
            idle += last["idle"]
            assert await page.is_hidden("#dawn"), name
            await page.wait_for_function(PUT_DOWN)
            continue
        # The table's own screen, by day: the vote, seat by seat, in the open.
        assert await page.is_hidden("#card") and await page.is_hidden("#act")
        wolves = {s for s, r in cards.items() if r == "werewolf"}
        if await page.locator("#pass-vote-now").count():
            await page.click("#pass-vote-now")
            await page.wait_for_selector("#pass-vote-now", state="detached")
            continue
        if shots is not None and "vote" not in shots:
            shots.add("vote")
            await page.evaluate(VOTE_IN_VIEW)
            await page.screenshot(path=str(SHOTS / "pass-vote.png"))
        scope = page.locator(f"#pass-prompts .pass-seat:has({OPEN})").first
        voter = int(await scope.get_attribute("data-seat"))
        await answer_here(page, f'#pass-prompts .pass-seat[data-seat="{voter}"]', cards[voter],
                          wolves, voter, dawned < 2)
    return SimpleNamespace(phone=phone, page=page, cards=cards, seen=seen, covers=covers,
                           checks=checks, moves=moves,
                           idle=idle, nights=nights_of(await page.evaluate(READ_LOG)))


@pytest.mark.timeout(600)
async def test_six_players_on_one_phone_play_to_the_end_nights_going_round_whatever_the_deal(stack):
    gateway = stack.start_gateway(games_per_actor=4)
    SHOTS.mkdir(exist_ok=True)

    async with chromium() as browser:
        first_deal: asyncio.Future = asyncio.get_running_loop().create_future()

        async def first(cards):
            first_deal.set_result(cards)
            return True

        async def other(cards):  # the second table plays on only with another deal
            return cards != await first_deal

        async def second():
            for _ in range(3):  # the same deal twice: one in 120
                played = await play_table(browser, gateway.url, dawns=2, dealt=other)
                if played:
                    return played
            raise AssertionError("three tables dealt like the first")

        # the README's pictures: the first cover, the first special card, the first vote
        shots = set()
        one, two = await asyncio.gather(play_table(browser, gateway.url, shots=shots, dealt=first),
                                        second())
        page = one.page

        assert sorted(one.cards) == list(range(len(NAMES)))  # every player saw their card
        # the checks had something to find: a reading, the pack, a prompt's facts
        assert any(screen["private"] for screen in one.seen.values()), one.seen
        assert one.covers >= 2 * len(NAMES) and one.checks >= one.covers, (one.covers, one.checks)
        # the villagers' turns: nothing to do, said by a button of its own
        assert one.idle and two.idle
        # Every turn's move (a prompt, or "nothing to do") was whole on the first screen at
        # 360x740, and "Done" waited for it (MOVE, answer_here).
        moves = one.moves + two.moves
        assert {m["move"] for m in moves} >= {"idle", "seer.inspect", "wolves.point"}, moves
        assert [m for m in moves if not in_view(m)] == [], moves
        assert shots == {"cover", "reload", "card", "vote"}
        assert await page.locator("#end-cards li").count() == len(NAMES)
        assert (await page.text_content("#end-winners")).strip()

        # Night by night, both tables saw the same covers: every seat (nobody left on night 1
        # nor on day 1), in seat order, once for each step of the night; the second night has
        # several steps (the Seer's, the Guard's, the pack's).
        assert one.cards != two.cards
        assert len(one.nights) >= 2 and len(two.nights) == 2, (one.nights, two.nights)
        everyone = list(range(len(NAMES)))
        steps = [rounds_of(turns, everyone) for turns in one.nights[:2]]
        assert steps == [rounds_of(turns, everyone) for turns in two.nights], (
            one.nights, two.nights)
        assert one.nights[:2] == two.nights
        assert len(steps[1]) >= 2, steps

        # Again at the same table: the same seats on this phone, the next game's cards behind
        # covers.
        # The same seats land in the next game's lobby; the phone (the host) starts it.
        await page.click("#again")
        await page.wait_for_selector("#screen-lobby:not([hidden]) #start:not([disabled])")
        assert await page.locator("#lobby-players li").count() == len(NAMES)
        await page.click("#start")
        await page.wait_for_selector(COVER)
        room = (await page.evaluate("() => location.hash")).removeprefix("#/p/")
        seats = await page.evaluate(f"() => JSON.parse(localStorage.getItem('ww:pass:{room}'))")
        assert [s["name"] for s in seats] == NAMES and not any("seen" in s for s in seats)
        assert not one.phone.errors and not two.phone.errors, (one.phone.errors, two.phone.errors)

