"""Play again with the same table, in Debian's headless Chromium against the real stack (issue 13,
issue 22 item 6).

At the end the host clicks once: every page follows to the next game's lobby by itself, keeping
its seat, with the same settings; the host starts it there (a player may leave first, the host may
change the settings). Pages at 360 px and 1280x720, in English and in Arabic.
"""
from __future__ import annotations


import httpx
import pytest

from devstack.stack import durations
from tests.client.table import (LAPTOP, PHONE, chromium, play_all, seat_table, until,
                                without_isolates)
from tests.client.static import catalogue

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

NAMES = ["Layla", "Omar", "Mei", "Linh", "Ana", "Tom"]
LAPTOP_720 = {"width": 1280, "height": 720}
SPECS = list(zip(NAMES, ["en-US", "ar", "ar", "en-US", "en-US", "en-US"],
                 [PHONE, LAPTOP_720, PHONE, LAPTOP_720, LAPTOP, LAPTOP]))
# Players act at once, so phases end early; a Witch-free table has no step that waits its time out.
DURATIONS = durations(30)
LOBBY = """() => ({
    seated: [...document.querySelectorAll("#lobby-players li")].map((li) => [
        Number(li.dataset.seat),
        li.querySelector(".name").textContent,
        [...li.children].some((c) => c.className === "muted")]),  // "(you)": this page's seat
    chips: [...document.querySelectorAll("#lobby-roles li")].map((li) => li.dataset.role),
    durations: Object.fromEntries([...document.querySelectorAll("#lobby-durations dt")]
        .map((dt) => [dt.dataset.key, Number(dt.nextElementSibling.textContent)])),
    need: document.querySelector("#lobby-need").textContent,
    hostForm: !document.querySelector("#lobby-host").hidden,
})"""


@pytest.mark.timeout(900)
async def test_the_host_plays_again_into_a_lobby_of_the_same_table(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser, httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        room, players = await seat_table(browser, gateway.url, SPECS, DURATIONS, roles=["seer"])
        first = (await http.get(f"/api/rooms/{room}")).json()
        await play_all(players)
        host, others = players[0], players[1:]
        for p in others:
            assert (await p.page.is_hidden("#again")
                    and await p.page.is_visible("#again-wait")), p.name
        await host.page.click("#again")
        await host.page.wait_for_function("(room) => !location.hash.includes(room)", arg=room)
        following = (await http.get(f"/api/rooms/{room}")).json()["next"]
        assert following and following != room
        facts = (await http.get(f"/api/rooms/{following}")).json()
        assert facts["status"] == "lobby", facts  # nothing dealt before the host starts it
        assert [q["name"] for q in facts["players"]] == NAMES
        assert (facts["settings"] == first["settings"]
                and facts["roles_in_play"] == first["roles_in_play"])
        # Every page lands in that lobby, in its own seat, with the table's settings.
        for p in players:
            await p.page.wait_for_url(f"**/#/r/{following}")
            await p.page.wait_for_selector(
                "#screen-lobby:not([hidden]) #lobby-players li:nth-child(6)")
            shown = without_isolates(await p.page.evaluate(LOBBY))
            assert shown["seated"] == [[s, n, s == p.seat] for s, n in enumerate(NAMES)], (
                p.name, shown)
            assert shown["chips"] == list(first["roles_in_play"]), (p.name, shown)
            assert shown["durations"] and all(
                first["settings"]["durations"][k] == v for k, v in shown["durations"].items()), (
                p.name, shown)
            assert "seer" in shown["durations"] and "witch" not in shown["durations"], (
                p.name, shown)
            assert shown["hostForm"] == (p is host), p.name
            if p is not host:
                lang = "ar" if p.name in ("Omar", "Mei") else "en"
                assert shown["need"] == catalogue(lang)["lobby.wait_host"].format(
                    name=host.name), shown
            assert await p.page.is_hidden("#screen-game"), p.name
        assert sorted(await host.page.eval_on_selector_all(
            "#host-roles input:checked", "els => els.map((e) => e.value)")) == ["seer"]

        # The host starts it: the same seats, a new deal.
        host.sent.clear()
        await host.page.click("#start:not([disabled])")
        started = await until(host.news, lambda: next(
            (host.replies[i] for i, kind in host.sent.items() if kind == "start"
             and i in host.replies), None))
        assert started["type"] == "ack", started
        for p in players:
            await p.page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")
            assert await p.page.get_attribute("#players li.me", "data-seat") == str(p.seat), p.name
            assert await p.page.is_hidden("#screen-join"), p.name
        facts = (await http.get(f"/api/rooms/{following}")).json()
        assert facts["status"] == "running" and facts["settings"]["roles"] == ["seer"]
        for p in players:
            assert not p.errors, (p.name, p.errors)

