"""A lobby that tells the truth (issue 22, item 6), in Debian's headless Chromium against the real
stack, with the host and a guest at 360 px and 1280x720, in English and in Arabic:
- the wolf count counts every wolf card (White Werewolf, Big Bad Wolf and Infect Father are three
  wolves, not "0"), and no card is a chip of 0;
- only the durations of what is dealt are listed (and offered to the host), and the mayor's rules
  and phases go with `mayor = none`;
- seed 004's preset deals and ticks its row of roles-spec 3.4 for the table seated, and ticking the
  Lover at six seats adds the Lover to the six-seat row, asking for no more players.
"""
from __future__ import annotations


import httpx
import pytest
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.client.table import PHONE, chromium, new_player, without_isolates
from tests.client.static import catalogue
from tests.helpers import until

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LAPTOP_720 = {"width": 1280, "height": 720}
SPECIAL_WOLVES = ["white_werewolf", "infect_father", "big_bad_wolf"]
# seed 004's recommendedSetup() (roles-spec 3.4), as the seed's table states it
ROW_004 = {
    4: {"werewolf": 1, "seer": 1, "villager": 2},
    6: {"werewolf": 1, "seer": 1, "guard": 1, "villager": 3},
    8: {"werewolf": 2, "seer": 1, "guard": 1, "medium": 1, "traitor": 1, "villager": 2},
}
LOBBY = """() => {
    const all = (sel, key) => [...document.querySelectorAll(sel)].map(key).sort();
    return {
        wolves: document.querySelector("#lobby-wolves").textContent,
        chips: [...document.querySelectorAll("#lobby-roles li")].map((li) => li.dataset.role),
        durations: all("#lobby-durations dt", (dt) => dt.dataset.key),
        rules: all("#lobby-rules dt", (dt) => dt.dataset.key),
        hostDurations: all("#host-durations input", (input) => input.name),
        hostRules: all("#host-rules select", (select) => select.name),
        hostChecked: all("#host-roles input:checked", (box) => box.value),
        need: document.querySelector("#lobby-need").textContent.replace(/[\\u2068\\u2069]/g, ""),
        start: !document.querySelector("#start").disabled,
        seated: document.querySelectorAll("#lobby-players li").length,
    };
}"""
SHOWS = f"""(want) => {{
    const shown = ({LOBBY})();
    return Object.entries(want).every(([k, v]) => JSON.stringify(shown[k]) === JSON.stringify(v));
}}"""


async def shows(player, **want) -> None:
    """Until the lobby shows every field of `want` as given (lists of keys sorted)."""
    try:
        await player.page.wait_for_function(SHOWS, arg=want)
    except PlaywrightTimeout:
        shown = without_isolates(await player.page.evaluate(LOBBY))
        raise AssertionError(f"{player.name}'s lobby never showed {want}: {shown}") from None


async def dealt(http: httpx.AsyncClient, room: str, settled) -> dict:
    """The room's deal once `settled(deal)` holds (within 30 s)."""
    async def deal() -> dict | None:
        roles = (await http.get(f"/api/rooms/{room}")).json()["roles_in_play"]
        return roles if settled(roles) else None
    return await until(deal, 30, "the deal settled")


def chips(deal: dict) -> list[str]:
    """The chips of a deal: a card nobody holds (the plain wolves, all named) is none."""
    return [role for role, n in deal.items() if n > 0]


CASES = [pytest.param(("en-US", PHONE), ("ar", LAPTOP_720), id="host-en-360-guest-ar-1280"),
         pytest.param(("ar", LAPTOP_720), ("en-US", PHONE), id="host-ar-1280-guest-en-360")]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("host_spec, guest_spec", CASES)
async def test_the_lobby_shows_what_is_dealt_and_only_that(stack, host_spec, guest_spec):
    gateway = stack.start_gateway()

    async with chromium() as browser, httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        declared = (await http.get("/api/rules")).json()
        values = {r["id"]: r["values"] for r in declared["rules"]}
        host = await new_player(browser, "Layla", locale=host_spec[0], viewport=host_spec[1])
        guest = await new_player(browser, "Omar", locale=guest_spec[0], viewport=guest_spec[1])
        texts = {p.name: catalogue("ar" if locale == "ar" else "en")
                 for p, locale in ((host, host_spec[0]), (guest, guest_spec[0]))}
        page = host.page
        await page.goto(gateway.url + "/")
        await page.fill("#form-create input[name=name]", host.name)
        await page.click("#form-create button[type=submit]")
        await page.wait_for_selector("#screen-lobby:not([hidden])")
        link = await page.input_value("#share-link")
        room = link.rsplit("/", 1)[1]
        await guest.page.goto(link)
        await guest.page.fill("#form-join input[name=name]", guest.name)
        await guest.page.click("#form-join button[type=submit]")
        await guest.page.wait_for_selector("#screen-lobby:not([hidden])")

        async def pick(rule: str, value) -> None:
            await page.select_option(f"#host-rules select[name={rule}]",
                                     str(values[rule].index(value)))

        # Three named wolves and nothing else: every wolf seat is theirs, no plain Werewolf.
        for role in SPECIAL_WOLVES:
            await page.locator(f"#host-roles input[value={role}]").check()
        for role in ("seer", "witch", "hunter", "cupid"):
            await page.locator(f"#host-roles input[value={role}]").uncheck()
        await shows(host, hostChecked=sorted(SPECIAL_WOLVES))
        # The ticks are the page's at once, the room's once each settings frame is through.
        # Every tick through, the last untick too (it raced the read of the deal: cupid shown).
        deal = await dealt(http, room, lambda deal: deal["werewolf"] == 0 and not any(
            deal.get(role) for role in ("seer", "witch", "hunter", "cupid")))
        assert all(deal[r] == 1 for r in SPECIAL_WOLVES), deal
        with_mayor = ["big_bad_wolf", "candidacy", "discussion", "election", "infect_father",
                      "successor", "tiebreak", "vote", "white_werewolf", "wolves"]
        for p in (host, guest):
            await shows(p, chips=chips(deal), durations=with_mayor,
                        wolves=texts[p.name]["lobby.wolves"].format(n=3))
        await shows(host, hostDurations=with_mayor)

        # The mayor's rules show with a mayor, and go with him: "Mayor: none" and nothing under it.
        await pick("mayor_candidacy", "candidates")
        for p in (host, guest):
            await shows(p, rules=["mayor_candidacy"])
        assert {"mayor", "mayor_candidacy", "election_tie"} <= set(
            (await page.evaluate(LOBBY))["hostRules"])
        await pick("mayor", "none")
        no_mayor = ["big_bad_wolf", "discussion", "infect_father", "vote", "white_werewolf",
                    "wolves"]
        for p in (host, guest):
            await shows(p, rules=["mayor"], durations=no_mayor)
        await shows(host, hostDurations=no_mayor)
        host_rules = set((await page.evaluate(LOBBY))["hostRules"])
        assert "mayor" in host_rules and not {"mayor_candidacy", "election_tie"} & host_rules, \
            host_rules

        # Seed 004 deals its row for the table seated (two seated: the smallest, four seats).
        await page.select_option("#host-preset", "seed_004")
        for p in (host, guest):
            await shows(p, chips=chips(ROW_004[4]),
                        wolves=texts[p.name]["lobby.wolves"].format(n=1))
        await shows(host, hostChecked=["seer"])
        for name in ("Mei", "Linh", "Ana", "Tom"):
            (await http.post(f"/api/rooms/{room}/join", json={"name": name})).raise_for_status()
        six = ["discussion", "guard", "seer", "vote", "wolves"]
        for p in (host, guest):
            await shows(p, seated=6, chips=chips(ROW_004[6]), durations=six,
                        wolves=texts[p.name]["lobby.wolves"].format(n=1))
            assert not {"mayor_candidacy", "election_tie"} & set(
                (await p.page.evaluate(LOBBY))["rules"])
        await shows(host, hostChecked=["guard", "seer"], hostDurations=six, start=True)
        assert (await http.get(f"/api/rooms/{room}")).json()["roles_in_play"] == ROW_004[6]

        # The Lover ticked at six: the six-seat row and the pair, nobody more to wait for.
        await page.locator("#host-roles input[value=lover]").check()
        with_lover = {"werewolf": 1, "seer": 1, "guard": 1, "lover": 2, "villager": 1}
        for p in (host, guest):
            await shows(p, chips=chips(with_lover), seated=6)
        await shows(host, hostChecked=["guard", "lover", "seer"], need="", start=True)
        await shows(guest, need=texts[guest.name]["lobby.wait_host"].format(name=host.name))
        facts = (await http.get(f"/api/rooms/{room}")).json()
        assert facts["roles_in_play"] == with_lover and sum(with_lover.values()) == 6, facts

        # The preset again, and two more seated: the eight-seat row, its two wolves.
        await page.select_option("#host-preset", "seed_004")
        for name in ("Sami", "Huda"):
            (await http.post(f"/api/rooms/{room}/join", json={"name": name})).raise_for_status()
        for p in (host, guest):
            await shows(p, seated=8, chips=chips(ROW_004[8]),
                        wolves=texts[p.name]["lobby.wolves"].format(n=2))
        await shows(host, hostChecked=["guard", "medium", "seer", "traitor"])
        assert (await http.get(f"/api/rooms/{room}")).json()["roles_in_play"] == ROW_004[8]
        for p in (host, guest):
            assert not p.errors, (p.name, p.errors)

