"""One phone passed around (issue 10 part 5) in Debian's headless Chromium against the real stack:
six players on one page at 360 px, from the names to the end. Each player's screen comes after a
cover naming them; the test checks every screen shown after a player put the phone down (the
next cover, or the table's own screen) and every screen shown after a cover against what the
previous player saw: no card, night result or private line of theirs may be in the page.
Takes the README's pictures of the cover and of a card shown.
"""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from tests.client.table import DOCS, PHONE, chromium, new_player, pick, unless_closed

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
# Seed 004 (the pass page's preset): with hidden cards every role's night step runs its full
# time, so they are kept short; long enough for a cover, a tap and a choice on a loaded machine.
DURATIONS = {"seer": 10, "guard": 10, "medium": 3, "wolves": 15, "discussion": 60, "vote": 30}
SHOTS = DOCS / "screenshots"
# The vote's picture: the dawn put away, the table's votes under the pinned phase bar.
VOTE_IN_VIEW = """() => {
    document.querySelector('#dawn-close')?.click();
    const top = document.querySelector('#pass-table').getBoundingClientRect().top + scrollY;
    window.scrollTo(0, top - document.querySelector('.phasebar').getBoundingClientRect().bottom - 8);
}"""

COVER = "#screen-cover:not([hidden])"
HOLDER = "#screen-game:not([hidden]) #pass-bar:not([hidden])"
TABLE_TODO = ("#pass-table:not([hidden]) #pass-vote-now, "
              "#pass-table:not([hidden]) .prompt:not([data-answered]):not([data-action='vote.request'])")
END = "#screen-end:not([hidden])"
OPEN = ".prompt:not([data-answered]):not([data-action='vote.request'])"  # asking to vote: the table's button
# Resolves with the first of these shown: a list of selectors that Playwright's own wait would
# settle on its first match in the page's order, shown or not.
NEXT = f"""() => [{", ".join(repr(sel) for sel in (COVER, HOLDER, TABLE_TODO, END))}]
    .some((sel) => [...document.querySelectorAll(sel)].some((e) => e.checkVisibility()))"""
# Feed lines only their seat is told.
PRIVATE_FEED = ["seer_result", "medium_result", "traitor_pack", "lover_pair", "lovers", "infected", "thief_cards",
                "peeked", "little_girl_caught", "charmed"]

# What the page shows now: the screen, whose it is, and every private thing a seat's screen holds.
SCREEN = """(privateFeed) => {
    const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent).filter(Boolean);
    const me = document.querySelector("#table .seat.me");
    return {
        screen: document.querySelector(".screen:not([hidden])")?.id,
        who: document.querySelector("#pass-who").textContent,
        seat: me ? Number(me.dataset.seat) : null,
        name: document.querySelector("#players li.me .name")?.textContent ?? null,
        role: document.querySelector("#card").dataset.role,
        cardText: document.querySelector("#card-role").textContent,
        art: document.querySelector("#card-art img")?.dataset.role ?? "",
        explain: document.querySelector("#card-explain").textContent,
        private: [...texts("#card-facts li, #prompts .info, #prompts .pointing li"),
                  ...[...document.querySelectorAll("#feed li")].filter((li) => privateFeed.includes(li.dataset.kind))
                      .map((li) => li.textContent)],
        cardsOnTable: Object.fromEntries([...document.querySelectorAll("#table .seat[data-role]")]
            .map((s) => [s.dataset.seat, s.dataset.role])),
        // every screen's text, shown or hidden, but the lobby's (every card's rules, for all)
        page: [...document.querySelectorAll("#main > .screen:not(#screen-lobby)")].map((e) => e.textContent).join(" "),
        shown: document.body.innerText,
    };
}"""


def no_trace_of(previous: dict, now: dict, *, same_card: bool = False) -> list[str]:
    """What of `previous` (a seat's screen) is still in the page `now` (another screen)."""
    found = [text for text in previous["private"] if text in now["page"] or text in now["shown"]]
    if str(previous["seat"]) in now["cardsOnTable"] and now["seat"] != previous["seat"]:
        found.append(f"{previous['name']}'s card on the table")
    if previous["explain"] and not same_card and previous["explain"] in now["page"]:
        found.append(f"{previous['name']}'s card text")
    return found


async def answer_here(page, scope: str, role: str, wolves: set[int], voter: int, cards: dict[int, str]) -> None:
    """Answer the first open prompt under `scope`: the night's move from table.pick; by day the
    village votes out a villager first (the game gets a second night), then the wolf."""
    prompt = page.locator(f"{scope} {OPEN}").first
    key = await prompt.get_attribute("data-key")
    action = await prompt.get_attribute("data-action")
    options = [int(s) for s in await prompt.locator("button.choice").evaluate_all(
        "els => els.map((e) => e.dataset.seat)")]
    dead = await page.locator("#table .seat[data-alive='0']").count()
    if action == "vote" and not dead:
        villagers = [s for s in options if cards.get(s) == "villager" and s != voter]
        targets = villagers[:1] or options[:1]
    else:
        n = max(1, int(await prompt.get_attribute("data-min") or 1))
        targets = pick(action, options, SimpleNamespace(role=role), wolves, n)
    selector = f'{scope} .prompt[data-key="{key}"]'

    async def move() -> None:
        for seat in targets:
            await page.click(f'{selector} button.choice[data-seat="{seat}"]')
        await page.click(f"{selector} button.confirm")
        await page.wait_for_selector(f"{selector}[data-answered]")

    await unless_closed(page, selector, move)


@pytest.mark.timeout(600)
def test_six_players_on_one_phone_play_to_the_end_and_no_screen_shows_the_last_player_s(stack):
    gateway = stack.start_gateway()
    SHOTS.mkdir(exist_ok=True)

    async def main():
        async with chromium() as browser:
            phone = await new_player(browser, "Phone", viewport=PHONE)
            page = phone.page
            await page.goto(gateway.url + "/")
            await page.click("#pass-open")
            await page.wait_for_selector("#screen-pass:not([hidden])")
            assert await page.locator("#pass-names input").count() == len(NAMES)
            for i, name in enumerate(NAMES):
                await page.fill(f"#pass-names li:nth-child({i + 1}) input", name)
            await page.click("#form-pass button[type=submit]")

            # The preparation: seed 004's preset, the players, the rules for all, the durations.
            await page.wait_for_selector("#screen-lobby:not([hidden]) #lobby-preset[data-preset='seed_004']")
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
                    document.querySelector(`#lobby-durations dt[data-key=${k}]`)?.nextElementSibling.textContent === String(v))""",
                arg=DURATIONS)
            await page.click("#start:not([disabled])")

            cards: dict[int, str] = {}  # seat -> card, as each player's own screen showed it
            seen: dict[str, dict] = {}  # name -> what their last screen held
            last: dict | None = None  # the screen of the player who put the phone down last
            covers = checks = 0
            shots = set()  # the README's pictures: the first cover, the first special card, the first vote
            while True:
                await page.wait_for_function(NEXT, timeout=240_000)
                now = await page.evaluate(SCREEN, PRIVATE_FEED)
                if now["screen"] == "screen-end":
                    break
                if last is not None:  # the first screen after a player put the phone down (or a reload)
                    assert now["screen"] in ("screen-cover", "screen-game") and not now["who"], now["screen"]
                    assert not (now["role"] or now["art"] or now["cardText"] or now["explain"]), now
                    assert no_trace_of(last, now) == [], (last["name"], now["screen"])
                    checks += 1
                    last = None
                if await page.locator(COVER).count():
                    covers += 1
                    name = (await page.text_content("#cover-title")).removeprefix("Pass the phone to ")
                    assert name in NAMES
                    if "cover" not in shots:
                        shots.add("cover")
                        await page.screenshot(path=str(SHOTS / "pass-cover.png"))
                    await page.click("#cover-show")
                    await page.wait_for_selector(HOLDER)
                    mine = await page.evaluate(SCREEN, PRIVATE_FEED)
                    assert mine["name"] == name and name in mine["who"], (name, mine["who"])
                    assert mine["role"] and mine["art"], mine
                    cards[mine["seat"]] = mine["role"]
                    if "reload" not in shots:  # a reload puts the phone down: a cover comes back
                        shots.add("reload")
                        await page.reload()
                        last = mine
                        continue
                    for other, theirs in seen.items():  # nobody else's screen comes back with it
                        if other != name:
                            same = theirs["role"] == mine["role"]
                            assert no_trace_of(theirs, mine, same_card=same) == [], (other, name)
                            checks += 1
                    if mine["role"] != "villager" and "card" not in shots:
                        shots.add("card")
                        await page.screenshot(path=str(SHOTS / "pass-card.png"))
                    wolves = {s for s, r in cards.items() if r == "werewolf"}
                    while await page.locator(f"#prompts {OPEN}").count():
                        await answer_here(page, "#prompts", mine["role"], wolves, mine["seat"], cards)
                    seen[name] = last = await page.evaluate(SCREEN, PRIVATE_FEED)
                    await page.click("#pass-done")
                    continue
                # The table's own screen, by day: the vote, seat by seat, in the open.
                assert await page.is_hidden("#card") and await page.is_hidden("#act")
                wolves = {s for s, r in cards.items() if r == "werewolf"}
                if await page.locator("#pass-vote-now").count():
                    await page.click("#pass-vote-now")
                    await page.wait_for_selector("#pass-vote-now", state="detached")
                    continue
                if "vote" not in shots:
                    shots.add("vote")
                    await page.evaluate(VOTE_IN_VIEW)
                    await page.screenshot(path=str(SHOTS / "pass-vote.png"))
                scope = page.locator(f"#pass-prompts .pass-seat:has({OPEN})").first
                voter = int(await scope.get_attribute("data-seat"))
                await answer_here(page, f'#pass-prompts .pass-seat[data-seat="{voter}"]', cards[voter],
                                  wolves, voter, cards)

            assert sorted(cards) == list(range(len(NAMES)))  # every player saw their card
            # the checks had something to find: a reading, the pack, a prompt's facts
            assert any(screen["private"] for screen in seen.values()), seen
            assert covers >= len(NAMES) + 2 and checks >= covers, (covers, checks)
            assert shots == {"cover", "reload", "card", "vote"}
            assert await page.locator("#end-cards li").count() == len(NAMES)
            assert (await page.text_content("#end-winners")).strip()

            # Again at the same table: the same seats on this phone, the next game's cards behind covers.
            await page.click("#again")
            await page.wait_for_selector(COVER)
            room = (await page.evaluate("() => location.hash")).removeprefix("#/p/")
            seats = await page.evaluate(f"() => JSON.parse(localStorage.getItem('ww:pass:{room}'))")
            assert [s["name"] for s in seats] == NAMES and not any("seen" in s for s in seats)
            assert not phone.errors, phone.errors

    asyncio.run(main())
