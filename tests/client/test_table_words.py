"""The table's words where a newcomer met rough edges (issue 37, part 3), in Debian's headless
Chromium against the static files alone: the rules' declaration is the gateway's own, a room's
socket is played by the test (static.FakeRoom). The home page's range of players, sound off until
asked for, the join page of a started game, the dawn's line, the mayor named only where there is
one, the Witch's poison said once, "Ask to vote" pressed too late, the feed's seating in one
line, the end screen's chat (its badges legible, its lines in time order) and secrets (what
the review shows: readings, links, the true causes), and the chat's reaction emoji drawn in
colour, not as empty boxes."""
from __future__ import annotations

import copy

import pytest

from gateway.routes.pages import DECLARATION
from rules.presets import PRESETS
from rules.settings import Settings, player_range
from tests.client.static import (PLAYERS, ROOM, FakeRoom, a_page, catalogue, prompt,
                                 running, sit)
from tests.client.table import chromium, without_isolates

pytestmark = [pytest.mark.browser]

EN = catalogue("en")
AR = catalogue("ar")
NAMES = [p["name"] for p in PLAYERS]
GAME = "#screen-game:not([hidden])"


def hint_of(page, action: str):
    return page.locator(f'.prompt[data-action="{action}"] .hint')


def test_the_declared_range_is_the_widest_any_preset_plays():
    """The home page tells the declaration's range: it is the presets' own, not a copy."""
    spans = [player_range(Settings.from_json({"preset": p})) for p in PRESETS]
    assert (min(lo for lo, _ in spans), max(hi for _, hi in spans)) == (
        DECLARATION["players"]["min"], DECLARATION["players"]["max"])


@pytest.mark.timeout(300)
async def test_the_home_page_tells_the_players_the_rules_play_and_sound_waits_to_be_asked(
        static_site):
    async with chromium() as browser:
        for locale, cat in (("en-US", EN), ("ar", AR)):
            player = await a_page(browser, locale=locale)
            page = player.page
            await page.goto(f"{static_site}/")
            await page.wait_for_selector("#screen-home:not([hidden]) #home-intro:not(:empty)")
            phone = await page.evaluate(
                "async (base) => { const p = await import(base + '/js/pass.js');"
                " return [p.MIN_NAMES, p.MAX_PLAYERS]; }", static_site)
            assert await page.text_content("#home-intro") == cat["home.intro"].format(
                min=DECLARATION["players"]["min"], max=DECLARATION["players"]["max"],
                phone_min=phone[0], phone_max=phone[1])
            assert await page.get_attribute("#sound", "aria-pressed") == "false"
            await page.click("#sound")
            assert await page.evaluate("() => localStorage.getItem('ww:sound')") == "1"
            await page.reload()
            await page.wait_for_selector("#sound[aria-pressed=true]")
            assert not player.errors, player.errors


@pytest.mark.timeout(300)
async def test_the_join_page_of_a_started_game_offers_to_watch_it(static_site):
    room = FakeRoom(running("day.discussion", []), seat=None)
    async with chromium() as browser:
        player = await a_page(browser, room)
        page = player.page
        await page.goto(f"{static_site}/#/r/{ROOM}")
        await page.wait_for_selector(f'#join-seated:text-is("{EN["error.room_started"]}")')
        assert await page.is_hidden("#form-join button[type=submit]")
        link = page.locator("#join-watch a")
        assert await link.text_content() == EN["tables.watch"]
        await link.click()
        await page.wait_for_selector(f"{GAME} #spectating:not([hidden])")
        assert {"type": "hello", "watch": True, "since": 0}.items() <= room.got[0].items()
        assert not player.errors, player.errors


@pytest.mark.timeout(300)
async def test_the_prompts_say_each_thing_once_and_name_the_mayor_only_where_there_is_one(
        static_site):
    room = FakeRoom(running("day.vote", [prompt("vote")]))
    async with chromium() as browser:
        player = await a_page(browser, room)
        page = player.page
        await sit(player, static_site)
        pick = EN["act.pick_one_or_pass"]
        # 004's tables have no mayor: the day's vote does not speak of one.
        await hint_of(page, "vote").wait_for()
        assert await hint_of(page, "vote").text_content() == f"{EN['action.vote.help']} {pick}"

        room.view = running("day.vote", [prompt("vote")], mayor=1)
        await page.reload()
        mayor = EN["action.vote.mayor"]
        await page.wait_for_selector(f'.prompt[data-action=vote] .hint:has-text("{mayor}")')

        # The election says what the mayor does, and that the mayor breaks ties (000's rule).
        room.view = running("day.election", [prompt("mayor.elect", lo=1)])
        await page.reload()
        await hint_of(page, "mayor.elect").wait_for()
        assert await hint_of(page, "mayor.elect").text_content() == " ".join(
            [EN["action.mayor.elect.help"], EN["action.mayor.elect.tiebreak"],
             EN["act.pick_one"]])

        # The Witch's poison: its sentence, then what to pick, each once.
        room.view = running("night.witch", [prompt("witch.poison")],
                            witch={"victim": None, "guarded": False})
        await page.reload()
        await hint_of(page, "witch.poison").wait_for()
        assert await hint_of(page, "witch.poison").text_content() == " ".join(
            [EN["action.witch.poison.help"], pick])
        assert not player.errors, player.errors


@pytest.mark.timeout(300)
async def test_ask_to_vote_pressed_as_the_vote_begins_says_so(static_site):
    view = running("day.discussion", [], requests={"count": 0, "needed": None, "mine": False})
    room = FakeRoom(view)
    room.refuse["vote.request"] = "not_your_turn"  # the vote began as the press went out
    async with chromium() as browser:
        player = await a_page(browser, room)
        page = player.page
        await sit(player, static_site)
        await page.click('.prompt[data-action="vote.request"] button')
        late = EN["action.vote.request.late"]
        await page.wait_for_selector(f'#toast:not([hidden]) p:text-is("{late}")')
        assert EN["error.not_your_turn"] not in await page.text_content("#toast")
        assert not player.errors, player.errors


@pytest.mark.timeout(300)
async def test_the_feed_seats_the_table_in_one_line_and_the_dawn_says_the_night_once(static_site):
    room = FakeRoom(running("night.witch", []))
    room.replay = [{"kind": "joined", "seat": p["seat"], "name": p["name"],
                    **({"bot": True} if p["seat"] == 3 else {})} for p in PLAYERS]
    async with chromium() as browser:
        for locale, cat in (("en-US", EN), ("ar", AR)):
            player = await a_page(browser, room, locale=locale)
            page = player.page
            await sit(player, static_site)
            await page.wait_for_selector("#feed li[data-kind=joined]")
            seated = without_isolates(await page.eval_on_selector_all(
                "#feed li[data-kind=joined]", "els => els.map((e) => e.textContent)"))
            names = ", ".join([*NAMES[:3], f"{NAMES[3]} ({cat['bot.label']})"])
            assert seated == [cat["event.joined.many"].format(names=names)]

            # A table that hides how its night deaths came (004): the cause is just "night".
            room.push({"kind": "death", "seat": 2, "cause": "night", "role": None})
            room.push({"kind": "phase", "phase": "day.discussion", "day": 2, "deadline": None})
            await page.wait_for_selector("#dawn:not([hidden]) .dawn-death")
            line = without_isolates(await page.text_content("#dawn .dawn-death"))
            assert line == cat["dawn.died_night"].format(name=NAMES[2],
                                                         role=cat["role.unknown"])
            assert line.count(cat["cause.night"]) == 1
            assert not player.errors, player.errors


def finished() -> tuple[dict, dict]:
    """A finished game's view (its chat's channels written in turn) and its review: the Seer's
    reading, the lovers, a death whose cause the table did not hear, a Guard's protection."""
    chat = [{"channel": ch, "seat": seat, "name": NAMES[seat], "text": text, "ts": ts}
            for ch, seat, text, ts in (("wolves", 1, "we take Cy", 1.0), ("day", 0, "morning", 2.0),
                                       ("dead", 2, "I was eaten", 3.0), ("day", 1, "not me", 4.0),
                                       ("wolves", 1, "now Di", 5.0))]
    roles = {"0": "seer", "1": "werewolf", "2": "cupid", "3": "villager"}
    story = [{"night": 1, "seat": 3, "what": "guard.protect", "targets": [0]}]
    over: dict[str, object] = {
        "kind": "game_over", "winners": [0, 3], "reason": "village_wins", "alive": [0, 3],
        "roles": roles, "causes": {"2": "wolves"}, "chat": chat, "story": story}
    log: list[tuple[dict[str, object], list[int] | None]] = [
        ({"kind": "phase", "phase": "night.cupid", "day": 1, "deadline": None}, None),
        ({"kind": "lovers", "lovers": [0, 3]}, [0, 2, 3]),
        ({"kind": "seer_result", "seat": 1, "role": "werewolf"}, [0]),
        ({"kind": "death", "seat": 2, "cause": "night", "role": None}, None),
        ({"kind": "phase", "phase": "day.vote", "day": 1, "deadline": None}, None),
        (over, None)]
    review: dict[str, object] = {
        "room": ROOM, "players": PLAYERS, "settings": {}, "next": None, "truncated": False,
        "events": [{"to": to, "event": {**ev, "seq": i}}
                   for i, (ev, to) in enumerate(log, start=1)]}
    seats = [{"seat": p["seat"], "name": p["name"], "alive": p["seat"] in (0, 3), "mayor": False,
              "role": roles[str(p["seat"])]} for p in PLAYERS]
    view = {**running("over", []), "status": "finished", "seats": seats,
            "outcome": {"winners": [0, 3], "reason": "village_wins"},
            "me": {"seat": 0, "role": "seer", "alive": True},
            "final": {"alive": [0, 3], "roles": roles, "chat": chat, "story": story}}
    return view, review


BADGE = """() => [...document.querySelectorAll('#end-chat .line .channel')].map((b) => {
    const s = getComputedStyle(b);
    return [s.color, s.backgroundColor];
})"""


def luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


@pytest.mark.timeout(300)
async def test_the_end_tells_the_review_s_secrets_and_its_chat_in_time_order(static_site):
    view, review = finished()
    room = FakeRoom(copy.deepcopy(view))
    async with chromium() as browser:
        player = await a_page(browser, room, status="finished", review=review)
        page = player.page
        await sit(player, static_site)
        await page.wait_for_selector(
            "#screen-end:not([hidden]) #end-story li[data-kind=seer_result]")

        # One list, in the order the lines were written; each badge legible (WCAG AA).
        texts = await page.eval_on_selector_all("#end-chat .line .text",
                                                "els => els.map((e) => e.textContent)")
        assert texts == [line["text"] for line in view["final"]["chat"]]
        for color, background in await page.evaluate(BADGE):
            assert "rgba(0, 0, 0, 0)" not in background, background
            hi, lo = sorted((luminance(color), luminance(background)), reverse=True)
            assert (hi + 0.05) / (lo + 0.05) >= 4.5, (color, background)

        # The secrets the review shows: the links, the reading, the true cause, the deeds.
        told = without_isolates(await page.eval_on_selector_all(
            "#end-story li", "els => els.map((e) => [e.dataset.kind, e.textContent])"))
        night = EN["game.night"].format(n=1) + ": "
        assert told == [
            ["lovers", night + EN["event.lovers.review"].format(names=f"{NAMES[0]} ♥ {NAMES[3]}")],
            ["seer_result", night + EN["event.seer_result.review"].format(
                name=NAMES[0], target=NAMES[1], role=EN["role.werewolf"])],
            ["story", night + EN["story.guard.protect"].format(name=NAMES[3], target=NAMES[0])],
            ["death", night + EN["event.death"].format(
                name=NAMES[2], cause=EN["cause.wolves"], role=EN["role.cupid"])]]
        assert not player.errors, player.errors


# The text of `el` drawn as the page draws it (its font stack, at a size to count pixels), in
# black on a clear canvas: the pixels a colour emoji font paints in colour. A font without the
# glyph paints its empty box, a monochrome one its outline: black and grey alone, 0.
COLOURED = """(el) => {
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    ctx.font = `48px ${getComputedStyle(el).fontFamily}`;
    ctx.fillStyle = "#000";
    ctx.textBaseline = "top";
    ctx.fillText(el.textContent.trim(), 4, 4);
    const px = ctx.getImageData(0, 0, 64, 64).data;
    let coloured = 0;
    for (let i = 0; i < px.length; i += 4) {
        const [r, g, b, a] = px.subarray(i, i + 4);
        if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 64) coloured++;
    }
    return coloured;
}"""


@pytest.mark.timeout(300)
async def test_the_reactions_are_drawn_in_colour_on_their_buttons_and_in_the_log(static_site):
    """Each reaction the composer offers, and each sent as a line of the log, shows its emoji
    (scripts/bootstrap installs the colour emoji font; phones ship their own)."""
    room = FakeRoom(running("day.discussion", [], channels=["day"]))
    async with chromium() as browser:
        player = await a_page(browser, room)
        page = player.page
        await sit(player, static_site)
        buttons = page.locator("#chat-reactions button.react:not(.phrase)")
        await buttons.first.wait_for()
        emoji = await buttons.all_text_contents()
        assert emoji
        for ts, text in enumerate(emoji, start=1):
            room.push({"kind": "chat", "channel": "day", "seat": 1, "name": NAMES[1],
                       "text": text, "ts": float(ts)})
        lines = page.locator("#chat-log .line.emoji .text")
        await page.wait_for_function(
            "(n) => document.querySelectorAll('#chat-log .line.emoji').length === n",
            arg=len(emoji))
        assert await lines.all_text_contents() == emoji
        for shown in (*await buttons.all(), *await lines.all()):
            assert await shown.evaluate(COLOURED) > 100, await shown.text_content()
        assert not player.errors, player.errors
