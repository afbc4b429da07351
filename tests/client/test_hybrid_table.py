"""One phone + online (issue 35 part 3) in Debian's headless Chromium against the real stack: the
host creates a table on a phone (360x740), adds two seats on this phone in its lobby (the page
becomes the phone's, three seats on it, the link kept for the others), three players join online
from the link, each on a laptop page of their own, and they play seed 004 (hidden cards) to its
end.

Every frame each online page's socket received, and each of the phone's three sockets, is checked
against the room's stored log: only events sent to its seat, as stored, and a welcome with its own
card only (tests/client/phone.py `not_its_own`). On the phone, every screen after a cover is
checked against what the other phone players saw (as in test_pass_and_play.py). The phone calls
its own living seats only, in seat order, once for each night step; it never ends a step
(`round_done`: the online seats must not learn its pace) and the day waits for its dawn
(`dawn_shown`, then the day's `clock`).
"""
from __future__ import annotations

import asyncio
import json

import pytest

from devstack.checks import stored_log
from tests.client.phone import (COVER, END, HOLDER, NEXT, OPEN, PRIVATE_FEED, PUT_DOWN, SCREEN,
                                answer_here, no_trace_of, not_its_own, record_sockets,
                                table_turn)
from rules.table import PHONE_TURN
from tests.client.table import PHONE, THE_END, answer, chromium, new_player, play, unless_closed

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

ON_PHONE = ["Layla", "Omar", "Mei"]
ONLINE = ["Linh", "Ana", "Tom"]
# Seed 004 at six seats times the Seer's, the Guard's and the pack's steps; with seats on the
# phone each lasts at least the phone's round (3 x 15 s), whatever its own duration.
DURATIONS = {"seer": 4, "guard": 4, "wolves": 10, "discussion": 30, "vote": 20}


async def abstain_first(player, key: str, action: str, wolves: set[int]) -> None:
    """An online seat's move: its first vote passes (nobody leaves on the first day: the second
    night calls every seat), the rest as `table.answer`."""
    if action != "vote" or "voted" in player.said:
        await answer(player, key, action, wolves)
        return
    player.said.add("voted")
    selector = f'.prompt[data-key="{key}"]'

    async def move() -> None:
        await player.page.click(f"{selector} button.pass")
        await player.page.wait_for_selector(f"{selector}[data-answered]")

    await unless_closed(player.page, selector, move)


async def play_phone(page, wolves: set[int]) -> dict:
    """The phone's seats play: every cover and its player's screen (checked against the other
    phone players' screens), the table's votes by day (each seat's first vote passes), until the
    end. Returns the covers taken (seat, phase) and how many screens were checked."""
    voted: set[int] = set()
    seen: dict[str, dict] = {}  # name -> what their last screen held
    last = None  # the screen of the player who put the phone down last
    covers: list[tuple[int, str]] = []
    checks = 0
    while True:
        await page.wait_for_function(NEXT, timeout=240_000)
        now = await page.evaluate(SCREEN, PRIVATE_FEED)
        if now["screen"] == "screen-end":
            return {"covers": covers, "checks": checks, "seen": seen}
        if last is not None:  # the first screen after a player put the phone down
            assert now["screen"] in ("screen-cover", "screen-game") and not now["who"], now
            assert not (now["role"] or now["art"] or now["cardText"] or now["explain"]), now
            assert no_trace_of(last, now) == [], (last["name"], now["screen"])
            checks += 1
            last = None
        if await page.locator(COVER).count():
            phase = await page.evaluate("() => document.body.dataset.phase")
            covers.append((int(await page.get_attribute("#cover-show", "data-seat")), phase))
            await page.click("#cover-show")
            await page.wait_for_selector(HOLDER)
            mine = await page.evaluate(SCREEN, PRIVATE_FEED)
            assert mine["role"] and mine["name"] in ON_PHONE, mine
            for other, theirs in seen.items():  # nobody else's screen comes back with it
                if other != mine["name"]:
                    same = theirs["role"] == mine["role"]
                    assert no_trace_of(theirs, mine, same_card=same) == [], (other, mine["name"])
                    checks += 1
            if mine["role"] == "werewolf":
                wolves.add(mine["seat"])
            while await page.locator(f"#prompts {OPEN}").count():
                await answer_here(page, "#prompts", mine["role"], wolves, mine["seat"], False)
            seen[mine["name"]] = last = await page.evaluate(SCREEN, PRIVATE_FEED)
            await page.wait_for_function(PUT_DOWN)
            continue
        # The table's own screen, by day: the phone's seats vote in the open.
        async def vote(scope: str, voter: int) -> None:
            role = next(s["role"] for s in seen.values() if s["seat"] == voter)
            await answer_here(page, scope, role, wolves, voter, voter not in voted)
            voted.add(voter)
        await table_turn(page, vote)


@pytest.mark.timeout(600)
async def test_three_seats_on_one_phone_and_three_online_play_to_the_end_and_learn_nothing_more(
        stack):
    gateway = stack.start_gateway()
    async with chromium() as browser:
        phone = await new_player(browser, ON_PHONE[0], viewport=PHONE)
        page = phone.page
        phone_sockets = record_sockets(page)
        await page.goto(gateway.url + "/")
        assert await page.is_visible("#home-hybrid")  # the home page says how
        await page.fill("#form-create input[name=name]", ON_PHONE[0])
        await page.click("#form-create button[type=submit]")
        await page.wait_for_selector("#screen-lobby:not([hidden])")
        await page.select_option("#host-preset", "seed_004")
        await page.wait_for_selector("#lobby-preset[data-preset='seed_004']")
        for count, name in enumerate(ON_PHONE[1:], start=2):
            # the last add done (its seat can show before its answer comes back)
            await page.wait_for_selector("#phone-seats button[type=submit]:enabled")
            await page.fill("#phone-seats input[name=name]", name)
            await page.click("#phone-seats button[type=submit]")
            await page.wait_for_selector(
                f"#screen-lobby:not([hidden]) #lobby-players li:nth-child({count})")
        assert "#/p/" in page.url  # the page is the phone's now
        link = await page.input_value("#share-link")  # kept for the players online
        assert await page.is_visible("#lobby-share") and await page.is_hidden("#lobby-watch")

        online = []
        for name in ONLINE:
            player = await new_player(browser, name)
            online.append((player, record_sockets(player.page)))
            await player.page.goto(link)
            await player.page.wait_for_selector("#form-join input[name=name]", state="visible")
            await player.page.fill("#form-join input[name=name]", name)
            await player.page.click("#form-join button[type=submit]")
            await player.page.wait_for_selector("#screen-lobby:not([hidden])")
        seated = len(ON_PHONE) + len(ONLINE)
        await page.wait_for_selector(f"#lobby-players li:nth-child({seated})")
        # every lobby tells who is on the phone, and that the others play online
        for p in [phone, *(p for p, _ in online)]:
            await p.page.wait_for_function(
                """(n) => document.querySelectorAll('#lobby-players [data-phone]').length === n
                    && document.querySelector('#lobby-phone').textContent.includes('online')""",
                arg=len(ON_PHONE))

        await page.wait_for_function(
            "() => [...document.querySelectorAll('#host-durations input')].every((i) => i.value)")
        for name, seconds in DURATIONS.items():
            await page.fill(f"#host-durations input[name={name}]", str(seconds))
        await page.dispatch_event(f"#host-durations input[name={name}]", "change")
        for p, _ in online:
            await p.page.wait_for_function(
                """(d) => Object.entries(d).every(([k, v]) =>
                    document.querySelector(`#lobby-durations dt[data-key=${k}]`)
                        ?.nextElementSibling.textContent === String(v))""", arg=DURATIONS)
        await page.click("#start:not([disabled])")

        wolves: set[int] = set()  # filled as each card shows (the test's knowledge, not a page's)
        for p, _ in online:
            await p.page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")
            p.seat = int(await p.page.get_attribute("#players li.me", "data-seat"))
            p.role = await p.page.get_attribute("#card", "data-role")
            if p.role == "werewolf":
                wolves.add(p.seat)
        assert sorted(p.seat for p, _ in online) == [3, 4, 5]

        phone_play, *_ = await asyncio.gather(play_phone(page, wolves),
                                              *(play(p, wolves, move=abstain_first)
                                                for p, _ in online))
        await page.wait_for_selector(END)
        for p, _ in online:
            await p.page.wait_for_selector(THE_END)
        assert await page.locator("#end-cards li").count() == seated

        room = page.url.rsplit("/", 1)[1]
        log = await stored_log(stack.redis_url, stack.prefix, room)
        frames = [json.loads(e["frame"]) for e in log]
        roles = {e["to"][0]: f["role"] for e, f in zip(log, frames) if f["kind"] == "role"}
        assert wolves == {s for s, r in roles.items() if r == "werewolf"}

        # 0 frames to an online seat, or to a phone seat's socket, that tell what it may not know
        received = {}
        for sockets in [phone_sockets, *(s for _, s in online)]:
            for one in sockets:
                welcome = next((f for f in one if f["type"] == "welcome"), None)
                if welcome is None:
                    continue
                assert not_its_own(one, log, roles) == [], welcome["seat"]
                received.setdefault(welcome["seat"], 0)
                received[welcome["seat"]] += sum(f["type"] == "event" for f in one)
        assert sorted(received) == list(range(seated)) and all(received.values()), received
        for p, sockets in online:  # an online page holds its own seat's sockets only
            assert {f["seat"] for one in sockets for f in one if f["type"] == "welcome"} == {p.seat}

        # The phone called its own living seats only, in seat order, once for each night step
        # of the first two nights (nobody dies before the second dawn); every step lasted at
        # least the phone's round: the next step's deadline is at least a round after its own.
        phases = [f for f in frames if f["kind"] == "phase"]
        nights, steps = [], []
        for f in phases:
            if f["phase"].startswith("night."):
                steps.append(f)
            elif steps:
                nights.append(steps)
                steps = []
        # the Seer's, then also the Guard's and the pack's
        assert [len(night) for night in nights[:2]] == [1, 3], nights
        taken = [c for c in phone_play["covers"] if c[1].startswith("night.")][:12]
        assert taken == [(seat, f["phase"]) for night in nights[:2] for f in night
                         for seat in (0, 1, 2)], taken
        assert phone_play["checks"] >= len(taken), phone_play["checks"]
        for step, after in zip(nights[1], nights[1][1:]):
            assert after["deadline"] - step["deadline"] >= 3 * PHONE_TURN * 1000, (step, after)

        # The phone never ended a step, and each day waited for the phone's dawn: its first
        # phase's clock started (`clock`) before it ended.
        assert "round_done" not in phone.sent.values() and "dawn_shown" in phone.sent.values()
        dawns = [i for i, f in enumerate(frames) if f["kind"] == "phase"
                 and f["phase"] == "day.discussion"]
        assert len(dawns) >= 2, dawns
        for i in dawns:
            after = next(f for f in frames[i + 1:] if f["kind"] in ("clock", "phase"))
            assert after["kind"] == "clock", (frames[i], after)

        # Play again: the next game's lobby is a hybrid table too, the same seats on the phone,
        # and the players online follow it there.
        await page.click("#again")
        await page.wait_for_function("(old) => location.hash.startsWith('#/p/') "
                                     "&& !location.hash.endsWith(old)", arg=room)
        for p in [phone, *(p for p, _ in online)]:
            await p.page.wait_for_function(
                """(n) => !document.querySelector('#screen-lobby').hidden
                    && document.querySelectorAll('#lobby-players li').length === 6
                    && document.querySelectorAll('#lobby-players [data-phone]').length === n
                    && document.querySelector('#lobby-phone').textContent.includes('online')""",
                arg=len(ON_PHONE))
        following = page.url.rsplit("/", 1)[1]
        assert following != room and all(following in p.page.url for p, _ in online)
        errors = [(p.name, p.errors) for p in [phone, *(p for p, _ in online)] if p.errors]
        assert errors == []
