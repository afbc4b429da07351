"""Issue 35's narrator in Debian's headless Chromium against the real stack: two people press
Play now, their pages in two of en, ar, zh and vi (seed 000, whose dead show their cards, with en
and zh; the web table 004, whose dead keep them hidden, with ar and vi), the bots fill the table,
and they play a whole game with their narrators on. Each page's speech synthesis is observed
(each utterance queued, its text and its language) and must say exactly, in order, the script
the table's public events give: night falls, each night step's card woken and put back to sleep,
the dawn and its dead, the day's phases, the end. A script made of the events every seat
receives (`to` null) speaks no secret. One of the two has the night ambience on: it plays from
each nightfall to that night's dawn (or the end), and at the other it never plays."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from devstack.stack import HTTP_TIMEOUT, durations
from tests.client.static import catalogue
from tests.client.table import DOCS, GAME_MS, chromium, new_player, play_all, press_play_now

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

# language -> the page's locale, the voice's language
TABLES = {"en": ("en-US", "en-US"), "ar": ("ar", "ar-SA"), "zh": ("zh-CN", "zh-CN"),
          "vi": ("vi", "vi-VN")}
# preset -> the languages of its two pages
TABLES_PLAYED = [("seed_000", ["en", "zh"]), ("seed_004", ["ar", "vi"])]
COUNTDOWN = 15  # the second press comes within it, at the first's table
# Short phases, long enough for the bots' think time (capped a second before each deadline).
PHASES = durations(5)
DEALT = "#screen-game:not([hidden]) #card:not([data-role=''])"

# The page's speech synthesis, observed: every utterance queued is kept (nothing is spoken: the
# test machine has no voice), and the narrator is on from the page's first load.
OBSERVE_SPEECH = """
window.__spoken = [];
try { localStorage.setItem('ww:narrator', '1'); } catch {}  // about:blank has no storage
if (!window.SpeechSynthesisUtterance) {
  window.SpeechSynthesisUtterance = class { constructor(text) { this.text = text; } };
}
const speech = window.speechSynthesis || {};
speech.speak = (u) => window.__spoken.push({ text: u.text, lang: u.lang });
speech.cancel = () => {};
speech.getVoices = () => [];
if (!window.speechSynthesis) Object.defineProperty(window, 'speechSynthesis', { value: speech });
"""
# The night ambience, observed: each start and stop of an audio source, with how many utterances
# were queued by then (the test machine's Chromium has a real AudioContext, with no device).
OBSERVE_AMBIENCE = """
window.__ambience = [];
for (const what of ['start', 'stop']) {
  const real = AudioBufferSourceNode.prototype[what];
  AudioBufferSourceNode.prototype[what] = function (...args) {
    window.__ambience.push({ what, at: window.__spoken.length });
    return real.apply(this, args);
  };
}
"""
AMBIENCE_ON = "try { localStorage.setItem('ww:ambience', '1'); } catch {}"
AMBIENCE_HIDDEN = "() => document.querySelector('#ambience').hidden"


def is_night(phase: str) -> bool:
    return phase.startswith("night.")


def script(public: list[dict], names: dict[int, str], words: dict[str, str]) -> list[str]:
    """What a game master says of these public events, in order (RULES.md's narrator)."""
    def who(phase: str) -> str:
        step = phase.removeprefix("night.")
        if step == "wolves":
            return words["narrator.who.wolves"]
        return words.get(f"role.{step}") or words[f"phase.{phase}"]

    def death(ev: dict, key: str) -> str:
        if ev["role"]:
            return words[f"{key}_role"].format(name=names[ev["seat"]],
                                               role=words[f"role.{ev['role']}"])
        return words[key].format(name=names[ev["seat"]])

    said, phase, night_deaths = [], "lobby", []
    for ev in public:
        if ev["kind"] == "phase":
            if is_night(phase):
                said.append(words["narrator.sleep"].format(who=who(phase)))
            if is_night(ev["phase"]):
                if not is_night(phase):
                    night_deaths = []
                    said.append(words["narrator.night"])
                said.append(words["narrator.wake"].format(who=who(ev["phase"])))
            elif is_night(phase):
                said.append(words["narrator.dawn"].format(n=ev["day"]))
                said += [death(d, "narrator.found_dead") for d in night_deaths] or \
                    [words["dawn.nobody"]]
                night_deaths = []
                if f"phase.{ev['phase']}" in words:
                    said.append(words[f"phase.{ev['phase']}"])
            elif f"phase.{ev['phase']}" in words:
                said.append(words[f"phase.{ev['phase']}"])
            phase = ev["phase"]
        elif ev["kind"] == "death":
            if is_night(phase):
                night_deaths.append(ev)
            else:
                said.append(death(ev, "narrator.out"))
        elif ev["kind"] == "game_over":
            said.append(words["event.game_over"])
            winners = [names[s] for s in ev["winners"]]
            said.append(words["end.winners"].format(names=", ".join(winners)) if winners
                        else words["end.no_winner"])
    return said


async def narrated_game(browser, http: httpx.AsyncClient, url: str, preset: str,
                        languages: list[str]) -> None:
    """Two pages in `languages` press Play now at a `preset` table, bots fill it, they play it
    to the end with their narrators on (the ambience at the first page only), and each page
    said exactly the public events' script and played the ambience of each night only."""
    players, rooms = [], []
    for name, language in zip(("Layla", "Minh"), languages):
        player = await new_player(browser, name, locale=TABLES[language][0])
        await player.context.add_init_script(OBSERVE_SPEECH + OBSERVE_AMBIENCE)
        if name == "Layla":  # the ambience on at one table speaker, off at the other
            await player.context.add_init_script(AMBIENCE_ON)
        rooms.append((await press_play_now(player, url, preset=preset))[0])
        players.append(player)
    (room,) = set(rooms)
    for player in players:
        await player.page.wait_for_selector(DEALT, timeout=GAME_MS)
        assert await player.page.is_visible("#narrator")
        assert await player.page.get_attribute("#narrator", "aria-pressed") == "true"
        # a "House rules" heading only over house rules
        assert await player.page.is_hidden("#game-rules-title") == (
            await player.page.locator("#game-rules dt").count() == 0)
        player.seat = int(await player.page.get_attribute("#players li.me", "data-seat"))
        player.role = await player.page.get_attribute("#card", "data-role")
    if "en" in languages:
        await players[0].page.locator("#narrator").scroll_into_view_if_needed()
        await players[0].page.screenshot(path=str(DOCS / "screenshots" / "narrator.png"))
    await play_all(players)

    review = (await http.get(f"/api/rooms/{room}/review")).json()
    public = [item["event"] for item in review["events"] if item["to"] is None]
    names = {p["seat"]: p["name"] for p in review["players"]}
    phases = [ev["phase"] for ev in public if ev["kind"] == "phase"]
    assert any(map(is_night, phases)) and any(p.startswith("day.") for p in phases)
    if preset == "seed_004":  # hidden cards: the dead are named, never their cards
        assert all(ev["role"] is None for ev in public if ev["kind"] == "death")
    nights = sum(is_night(now) and not is_night(then)
                 for then, now in zip(["lobby", *phases], phases))
    dawn_days, phase = [], "lobby"  # the day each dawn opened
    for ev in public:
        if ev["kind"] == "phase":
            if is_night(phase) and not is_night(ev["phase"]):
                dawn_days.append(ev["day"])
            phase = ev["phase"]
    for player, language in zip(players, languages):
        spoken = await player.page.evaluate("() => window.__spoken")
        words = catalogue(language)
        assert [line["text"] for line in spoken] == script(public, names, words)
        assert {line["lang"] for line in spoken} == {TABLES[language][1]}
        ambience = await player.page.evaluate("() => window.__ambience")
        if player is players[1]:
            assert ambience == []
        else:  # each night, from its fall (spoken) to its dawn or the end (about to be)
            assert [a["what"] for a in ambience] == ["start", "stop"] * nights, ambience
            texts = [line["text"] for line in spoken]
            ends = [words["narrator.dawn"].format(n=day) for day in dawn_days]
            ends.append(words["event.game_over"])  # a game that ends at night
            for night, (start, stop) in enumerate(zip(ambience[::2], ambience[1::2])):
                assert texts[start["at"] - 1] == words["narrator.night"]
                assert texts[stop["at"]] == ends[night], (night, texts[stop["at"]])
            assert await player.page.get_attribute("#ambience", "aria-pressed") == "true"
            assert not await player.page.evaluate(AMBIENCE_HIDDEN)  # (the game's screen)
        # The toggle (shown in the game, above) turns it off and remembers it.
        await player.page.evaluate("() => document.querySelector('#narrator').click()")
        assert await player.page.get_attribute("#narrator", "aria-pressed") == "false"
        assert await player.page.evaluate("() => localStorage.getItem('ww:narrator')") == "0"
        assert await player.page.evaluate(AMBIENCE_HIDDEN)  # the narrator's night only
        assert not player.errors


# Both tables play at once on one gateway: each game mostly waits on its phase timers, so the
# second costs little beside the first (one after the other, they took ~90 + ~75 s in CI).
@pytest.mark.timeout(600)  # two whole games of 8 at 5 s phases side by side, on a loaded machine
async def test_the_narrator_speaks_every_phase_of_a_whole_game_and_no_secret(stack):
    gateway = stack.start_gateway(durations=PHASES, env={
        "WW_PUBLIC_COUNTDOWN": str(COUNTDOWN), "WW_QUICK_PLAYS_PER_ADDRESS": "0"})
    async with chromium() as browser, httpx.AsyncClient(
            base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        await asyncio.gather(*(narrated_game(browser, http, gateway.url, preset, languages)
                               for preset, languages in TABLES_PLAYED))
