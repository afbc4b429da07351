"""The lobby shows the deal the server will deal, in Debian's headless Chromium (issue 13).

The deal grows with the table (2 werewolves from 8 seated), so every lobby page must show the
server's deal as players join, whenever the page itself was opened, without the host touching
the settings (a settings change would resend the deal anyway). Once it has started, the table's
link offers no seat.
"""
from __future__ import annotations


import httpx
import pytest

from tests.client.table import chromium, new_player
from tests.client.static import catalogue

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

EN = catalogue("en")
DEAL_SHOWN = """() => ({
    chips: [...document.querySelectorAll("#lobby-roles li")].map((li) => li.textContent),
    wolves: document.querySelector("#lobby-wolves").textContent,
    seated: document.querySelectorAll("#lobby-players li").length,
})"""


def shown_as(deal: dict) -> dict:
    """What a lobby in English shows for the server's `roles_in_play`."""
    return {
        "chips": [EN[f"role.{role}"] + (f" ×{n}" if n > 1 else "") for role, n in deal.items()],
        "wolves": EN["lobby.wolves"].format(n=deal["werewolf"]),
    }


async def test_every_lobby_shows_the_server_s_deal_as_the_table_grows(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser, httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        host, early = await new_player(browser, "Layla"), await new_player(browser, "Omar")
        await host.page.goto(gateway.url + "/")
        await host.page.fill("#form-create input[name=name]", host.name)
        await host.page.click("#form-create button[type=submit]")
        await host.page.wait_for_selector("#screen-lobby:not([hidden])")
        link = await host.page.input_value("#share-link")
        room = link.rsplit("/", 1)[1]
        await early.page.goto(link)
        await early.page.fill("#form-join input[name=name]", early.name)
        await early.page.click("#form-join button[type=submit]")
        await early.page.wait_for_selector("#screen-lobby:not([hidden])")

        for name in ["Mei", "Linh", "Ana", "Tom", "Sami", "Huda"]:  # the table grows to 8
            (await http.post(f"/api/rooms/{room}/join", json={"name": name})).raise_for_status()
        deal = (await http.get(f"/api/rooms/{room}")).json()["roles_in_play"]
        assert deal["werewolf"] == 2, deal
        for p in (host, early):
            await p.page.wait_for_selector("#lobby-players li:nth-child(8)")
            shown = await p.page.evaluate(DEAL_SHOWN)
            assert {k: shown[k] for k in ("chips", "wolves")} == shown_as(deal), (p.name, shown)
            assert not p.errors, (p.name, p.errors)

        # Once the game has started, the link no longer offers a seat.
        await host.page.click("#start:not([disabled])")
        await host.page.wait_for_selector("#screen-game:not([hidden])")
        late = await new_player(browser, "Late")
        await late.page.goto(link)
        await late.page.wait_for_selector(f'#join-seated:text-is("{EN["error.room_started"]}")')
        assert await late.page.is_hidden("#form-join input[name=name]")
        assert await late.page.is_hidden("#form-join button[type=submit]")
        assert not late.errors, late.errors

