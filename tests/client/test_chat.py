"""A chat people use (issue 22, item 4), in Debian's headless Chromium against the real stack.

Each line shows its speaker (the name isolated, the seat's colour as on the table) and its
channel's badge; this seat's own lines are set apart; a line naming this seat (any case, a whole
word, with or without @) is marked for that seat only, and cued on its tab and on the jump to the
chat while unread; a reaction is one tap and reaches the table as an ordinary line; where a seat
may not write, the composer is closed and says why (night and not a wolf, dead, a spectator, the
pack by day, too fast).

One table of six per language, English and Arabic, half of its seats on 360 px phones and half
on 1280x720 laptops, and two spectators (one of each). No special roles: one wolf, whose
pointing ends the night at once.
"""
from __future__ import annotations


import pytest

from tests.client.table import (
    DOCS, PAGE_STATE, PHONE, Player, chromium, new_player, play, say, seat_table, until, wolves_of,
)
from tests.client.static import catalogue

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LAPTOP_720 = {"width": 1280, "height": 720}
NAMES = {"en": ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"],
         "ar": ["ليلى", "عمر", "مي", "لين", "آنا", "توم"]}
LOCALE = {"en": "en-US", "ar": "ar"}
# The test ends phases by acting; the clock never should.
LONG = {name: 900 for name in ("cupid", "seer", "wolves", "witch", "election", "discussion", "vote",
                               "tiebreak", "hunter", "successor")}
ELECTION = "body[data-phase='day.election']"
SHOTS = DOCS / "screenshots"

# Every line of the log as the page shows it.
LINES = """() => [...document.querySelectorAll("#chat-log li.line")].map((li) => {
    const speaker = li.querySelector(".speaker");
    const seat = li.dataset.seat === undefined ? null : Number(li.dataset.seat);
    const onTable = seat === null ? null
        : document.querySelector(`#table .seat[data-seat="${seat}"]`);
    return {
        seat, channel: li.dataset.channel,
        badge: li.querySelector(".channel")?.textContent.trim(),
        badgeChannel: li.querySelector(".channel")?.dataset.channel,
        who: speaker?.querySelector("bdi.who")?.textContent,
        hue: speaker?.style.getPropertyValue("--hue").trim(),
        tableHue: onTable?.style.getPropertyValue("--hue").trim() ?? null,
        text: li.querySelector("bdi.text")?.textContent,
        mine: li.classList.contains("mine"), mention: li.classList.contains("mention"),
        marks: [...li.querySelectorAll("mark")].map((m) => m.textContent),
    };
})"""
HAS_LINE = """([text, n]) => [...document.querySelectorAll("#chat-log li.line bdi.text")]
    .filter((e) => e.textContent === text).length >= n"""
# Where the seat may not write: the composer shown closed, its reason said.
CLOSED = """() => ({
    form: !document.querySelector("#chat-form").hidden,
    closed: !document.querySelector("#chat-closed").hidden,
    disabled: document.querySelector("#chat-closed-input").disabled,
    why: document.querySelector("#chat-readonly").hidden ? null
        : document.querySelector("#chat-readonly").textContent,
    goto: !document.querySelector("#chat-goto").hidden,
})"""
CLOSED_IS = (
    f"(want) => {{ const got = ({CLOSED})(); "
    "return Object.keys(want).every((k) => got[k] === want[k]); }"
)
# Six taps on a reaction inside one task: the page's copy of the room's limit (5 at once) holds
# the sixth back, and says so before anything else runs.
SIX_TAPS = """() => {
    const button = () => document.querySelector("#chat-reactions button[data-react='👍']");
    for (let i = 0; i < 6; i++) button().click();
    const why = document.querySelector("#chat-readonly");
    return { why: why.hidden ? null : why.textContent, kind: why.dataset.why,
             send: document.querySelector("#chat-form button[type=submit]").disabled,
             react: button().disabled, form: !document.querySelector("#chat-form").hidden };
}"""


async def wait_line(player: Player, text: str, n: int = 1) -> None:
    try:
        await player.page.wait_for_function(HAS_LINE, arg=[text, n])
    except Exception:
        raise AssertionError(f"{player.name} never showed {n}x {text!r}: "
                             f"{await player.page.evaluate(PAGE_STATE)}") from None


async def closed_with(player: Player, why: str, *, goto: bool = False) -> None:
    """The page shows the composer closed, the reason `why` in words, its input disabled."""
    want = {"form": False, "closed": True, "disabled": True, "why": why, "goto": goto}
    try:
        await player.page.wait_for_function(CLOSED_IS, arg=want)
    except Exception:
        raise AssertionError(
            f"{player.name} should show {want}: {await player.page.evaluate(CLOSED)}") from None


async def put_away_dawn(player: Player) -> None:
    """The dawn's banner lies over the top of a phone's page: put away, as a player would."""
    if await player.page.is_visible("#dawn-close"):
        await player.page.click("#dawn-close")


async def lines(player: Player) -> list[dict]:
    return await player.page.evaluate(LINES)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("lang", ["en", "ar"])
async def test_speakers_channels_mentions_reactions_and_why_the_composer_is_closed(stack, lang):
    gateway = stack.start_gateway()
    cat = catalogue(lang)
    names = NAMES[lang]

    async with chromium() as browser:
        spectators = [await new_player(browser, f"watcher-{i}", locale=LOCALE[lang],
                                       viewport=viewport)
                      for i, viewport in enumerate([PHONE, LAPTOP_720])]

        async def watch(players):
            link = await players[0].page.input_value("#watch-link")
            for s in spectators:
                await s.page.goto(link)
                await s.page.wait_for_selector("#screen-lobby:not([hidden])")

        specs = [(n, LOCALE[lang], PHONE if i % 2 == 0 else LAPTOP_720)
                 for i, n in enumerate(names)]
        _, players = await seat_table(browser, gateway.url, specs, LONG, roles=[],
                                      before_start=watch)
        wolves = wolves_of(players)
        [wolf] = [p for p in players if p.role == "werewolf"]
        villagers = [p for p in players if p is not wolf]
        everyone = players + spectators

        # Night: a villager sleeps and is told so; a spectator reads only; the wolf writes.
        for p in villagers:
            await closed_with(p, cat["chat.why.night"])
        for s in spectators:
            await s.page.wait_for_selector("#screen-game:not([hidden])")
            await closed_with(s, cat["chat.why.spectator"])
        pack = "the baker tonight"
        assert await say(wolf, pack, "wolves")
        await wait_line(wolf, pack)
        [line] = await lines(wolf)
        assert line == {"seat": wolf.seat, "channel": "wolves",
                        "badge": f"☾ {cat['chat.badge.wolves']}",
                        "badgeChannel": "wolves", "who": wolf.name, "hue": line["tableHue"],
                        "tableHue": line["tableHue"], "text": pack, "mine": True, "mention": False,
                        "marks": []}, line

        # Day: the night's victim writes to the dead, and reading the village is told why not.
        await play(wolf, wolves, until=ELECTION)
        for p in everyone:
            await p.page.wait_for_selector(ELECTION)
            await put_away_dawn(p)
        [victim] = [p for p in villagers
                    if not await p.page.locator("#players li.me[data-alive='1']").count()]
        living = [p for p in villagers if p is not victim]
        morning = "good morning"
        assert await say(wolf, morning, "day")
        await victim.page.click("#chat-tabs button[data-channel=day]")
        await wait_line(victim, morning)
        await closed_with(victim, cat["chat.why.dead"], goto=True)
        # The wolf reads the pack's tab by day: closed there, with a way back to the village.
        await wolf.page.click("#chat-tabs button[data-channel=wolves]")
        await closed_with(wolf, cat["chat.why.pack_by_day"], goto=True)

        # Mentions: the wolf's name as a word, any case, with @; another's name inside a word.
        # Read on a first game's page, the guide's card under the move (on a laptop in Arabic it
        # leaves the log at the screen's edge).
        assert await wolf.page.is_visible("#guide")
        writer, other = living[0], living[1]
        at_wolf = f"@{wolf.name} where were you?"
        by_name = f"{wolf.name.lower()}{'، أجب' if lang == 'ar' else ', answer me'}"
        inside = f"{other.name}zz is nobody here"
        for text in (at_wolf, by_name, inside):
            assert await say(writer, text, "day")
        # Unread on the wolf's page: its village tab and the jump to the chat count two.
        await wolf.page.wait_for_selector("#chat-tabs button[data-channel=day][data-mentions='2']")
        await wolf.page.wait_for_selector("#chat-jump[data-mentions='2']")
        assert await wolf.page.is_visible("#chat-jump")
        await wolf.page.click("#chat-tabs button[data-channel=day]")
        await wolf.page.locator("#chat-log").scroll_into_view_if_needed()
        await wolf.page.wait_for_selector("#chat-jump:not([data-mentions])", state="attached")
        assert await wolf.page.locator("#chat-tabs button[data-mentions]").count() == 0
        for p in everyone:
            await wait_line(p, inside)
            shown = {line["text"]: line for line in await lines(p)}
            for text in (at_wolf, by_name, inside):
                assert shown[text]["who"] == writer.name and shown[text]["mine"] == (p is writer), \
                    (p.name, shown[text])
            named = p is wolf
            assert (shown[at_wolf]["mention"], shown[at_wolf]["marks"]) == (
                (True, [f"@{wolf.name}"]) if named else (False, [])), (p.name, shown[at_wolf])
            assert (shown[by_name]["mention"], shown[by_name]["marks"]) == (
                (True, [wolf.name.lower()]) if named else (False, [])), (p.name, shown[by_name])
            assert not shown[inside]["mention"] and shown[inside]["marks"] == [], \
                (p.name, shown[inside])

        # Reactions: one tap each, an emoji and a phrase in the writer's language.
        reactor = living[2]
        await reactor.page.click("#chat-reactions button[data-react='👍']")
        await reactor.page.click("#chat-reactions button[data-react='chat.react.suspicious']")
        for p in everyone:
            if p is not reactor:
                await wait_line(p, cat["chat.react.suspicious"])
                await wait_line(p, "👍")
                reactions = [line for line in await lines(p) if line["seat"] == reactor.seat]
                assert [(r["text"], r["who"]) for r in reactions] == [
                    ("👍", reactor.name), (cat["chat.react.suspicious"],
                                          reactor.name)], (p.name, reactions)

        # Too fast: the sixth tap at once waits, and the composer says for how long.
        hasty = living[3]
        held = await hasty.page.evaluate(SIX_TAPS)
        assert held == {"why": cat["chat.why.slow"].format(s=1), "kind": "slow", "send": True,
                        "react": True, "form": True}, held
        await hasty.page.wait_for_selector("#chat-readonly[data-why='slow']", state="hidden")
        assert not await hasty.page.is_disabled("#chat-reactions button[data-react='👍']")
        await until(hasty.news, lambda: sum(1 for i, kind in hasty.sent.items()
                                            if kind == "chat" and i in hasty.replies) == 5 or None)
        answers = [hasty.replies[i] for i, kind in hasty.sent.items() if kind == "chat"]
        assert [a["type"] for a in answers] == ["ack"] * 5, answers
        await wait_line(writer, "👍", 6)

        # Every line on every page: its channel's badge, its speaker as the table colours it.
        name_of = {p.seat: p.name for p in players}
        for p in everyone:
            for line in await lines(p):
                assert line["badgeChannel"] == line["channel"], (p.name, line)
                assert line["badge"].endswith(cat[f"chat.badge.{line['channel']}"]), (p.name, line)
                assert line["who"] == name_of[line["seat"]], (p.name, line)
                assert line["hue"] and line["hue"] == line["tableHue"], (p.name, line)
        # The README's pictures, each at one width whichever seat the deal gave that part.
        for p, who, size in ((wolf, "named", PHONE), (writer, "writer", LAPTOP_720),
                             (victim, "dead", PHONE)):
            await p.page.set_viewport_size(size)
            await p.page.locator("#chat-card").scroll_into_view_if_needed()
            await p.page.screenshot(path=str(SHOTS / f"chat-{who}-{size['width']}-{lang}.png"))
        for p in everyone:
            assert not p.errors, (p.name, p.errors)

