"""Driving one phone passed around through its page, and what a phone player's screen may not
keep (tests/client/test_pass_and_play.py, tests/client/test_hybrid_table.py): the screens in
turn, the covers, the table's votes, each player's private things as the page shows them; and
every frame a page's sockets receive, to be checked against what its seat may know."""
from __future__ import annotations

import json
from types import SimpleNamespace

from devstack.checks import assert_view_is_own
from tests.client.table import pick, unless_closed

COVER = "#screen-cover:not([hidden])"
HOLDER = "#screen-game:not([hidden]) #pass-bar:not([hidden])"
# an open prompt (asking to vote is the table's button, not a prompt)
OPEN = ".prompt:not([data-answered]):not([data-action='vote.request'])"
TABLE_TODO = f"#pass-table:not([hidden]) #pass-vote-now, #pass-table:not([hidden]) {OPEN}"
END = "#screen-end:not([hidden])"
# Resolves with the first of these shown: a list of selectors that Playwright's own wait would
# settle on its first match in the page's order, shown or not.
NEXT = f"""() => [{", ".join(repr(sel) for sel in (COVER, HOLDER, TABLE_TODO, END))}]
    .some((sel) => [...document.querySelectorAll(sel)].some((e) => e.checkVisibility()))"""
# Feed lines only their seat is told.
PRIVATE_FEED = ["seer_result", "medium_result", "traitor_pack", "lover_pair", "lovers", "infected",
                "thief_cards",
                "peeked", "little_girl_caught", "charmed"]

# What the page shows now: the screen, whose it is, and every private thing a seat's screen holds.
SCREEN = """(privateFeed) => {
    const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent)
        .filter(Boolean);
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
        phase: document.body.dataset.phase,
        idle: !!document.querySelector("#prompts #pass-idle"),
        alive: document.querySelectorAll("#players li[data-alive='1']").length,
        private: [...texts("#card-facts li, #prompts .info, #prompts .pointing li"),
                  ...[...document.querySelectorAll("#feed li")]
                      .filter((li) => privateFeed.includes(li.dataset.kind))
                      .map((li) => li.textContent)],
        cardsOnTable: Object.fromEntries([...document.querySelectorAll("#table .seat[data-role]")]
            .map((s) => [s.dataset.seat, s.dataset.role])),
        // every screen's text, shown or hidden, but the lobby's (every card's rules, for all)
        page: [...document.querySelectorAll("#main > .screen:not(#screen-lobby)")]
            .map((e) => e.textContent).join(" "),
        shown: document.body.innerText,
    };
}"""

# Puts the phone down: a turn with nothing to do says so first (whenever it shows: a prompt may
# close under the player), then "Done". True once "Done" was tapped.
PUT_DOWN = """() => {
    const idle = document.querySelector("#pass-nothing[aria-pressed='false']");
    if (idle) { idle.click(); return false; }
    const done = document.querySelector("#pass-done");
    if (done.disabled) return false;
    done.click();
    return true;
}"""
def no_trace_of(previous: dict, now: dict, *, same_card: bool = False) -> list[str]:
    """What of `previous` (a seat's screen) is still in the page `now` (another screen)."""
    found = [text for text in previous["private"] if text in now["page"] or text in now["shown"]]
    if str(previous["seat"]) in now["cardsOnTable"] and now["seat"] != previous["seat"]:
        found.append(f"{previous['name']}'s card on the table")
    if previous["explain"] and not same_card and previous["explain"] in now["page"]:
        found.append(f"{previous['name']}'s card text")
    return found


async def answer_here(
        page, scope: str, role: str, wolves: set[int], voter: int, abstain: bool) -> None:
    """Answer the first open prompt under `scope`: the night's move from table.pick; by day the
    village abstains on the first day (nobody leaves: the next night has every seat), then votes
    out the wolf."""
    prompt = page.locator(f"{scope} {OPEN}").first
    key = await prompt.get_attribute("data-key")
    action = await prompt.get_attribute("data-action")
    options = [int(s) for s in await prompt.locator("button.choice").evaluate_all(
        "els => els.map((e) => e.dataset.seat)")]
    if action == "vote" and abstain:
        targets = []
    else:
        n = max(1, int(await prompt.get_attribute("data-min") or 1))
        targets = pick(action, options, SimpleNamespace(role=role), wolves, n)
    selector = f'{scope} .prompt[data-key="{key}"]'

    async def move() -> None:
        if not targets:
            await page.click(f"{selector} button.pass")
        else:
            for seat in targets:
                await page.click(f'{selector} button.choice[data-seat="{seat}"]')
            if scope == "#prompts":  # picked is not made: the phone cannot be put down yet
                assert await page.is_disabled("#pass-done"), (action, targets)
            await page.click(f"{selector} button.confirm")
        await page.wait_for_selector(f"{selector}[data-answered]")

    await unless_closed(page, selector, move)




async def table_turn(page, answer_voter) -> None:
    """The table's own screen by day, one step: start the vote if the table is asked to, else the
    next phone seat with an open prompt answers it (`answer_voter(scope, seat)`)."""
    if await page.locator("#pass-vote-now").count():
        await page.click("#pass-vote-now")
        await page.wait_for_selector("#pass-vote-now", state="detached")
        return
    voter = int(await page.locator(f"#pass-prompts .pass-seat:has({OPEN})").first
                .get_attribute("data-seat"))
    await answer_voter(f'#pass-prompts .pass-seat[data-seat="{voter}"]', voter)


def record_sockets(page) -> list[list[dict]]:
    """Every frame each of the page's sockets receives, a list per socket, in order (a page
    passed around holds one socket per seat; a reload or a move opens new ones)."""
    sockets: list[list[dict]] = []

    def opened(ws) -> None:
        frames: list[dict] = []
        sockets.append(frames)
        ws.on("framereceived", lambda payload: frames.append(json.loads(payload)))

    page.on("websocket", opened)
    return sockets


def not_its_own(frames: list[dict], log: list[dict], roles: dict[int, str]) -> list[dict]:
    """What one socket received that its seat may not know: any event not sent to that seat in
    the room's stored log (its audience, `to`), or not as stored; its welcome's view checked
    against its card (`devstack.checks.assert_view_is_own`)."""
    seat, wrong = None, []
    for frame in frames:
        if frame["type"] == "welcome":
            seat = frame["seat"]
            assert_view_is_own(frame["view"], seat, roles[seat])
        elif frame["type"] == "event":
            stored = log[frame["seq"] - 1]
            if stored["to"] is not None and seat not in stored["to"] \
                    or json.loads(stored["frame"]) != frame:
                wrong.append(frame)
    return wrong
