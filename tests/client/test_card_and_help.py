"""Hiding one's card at a shared table, and the help page of every card, in Debian's headless
Chromium against the real stack (issue 13, part 6)."""
from __future__ import annotations


import httpx
import pytest

from devstack.stack import durations
from rules.registry import CARDS
from rules.settings import DEFAULT_RULES
from tests.client.static import catalogue
from tests.client.table import LAPTOP, chromium, new_player, seat_table, without_isolates

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

EN = catalogue("en")
# The help explains every card, in the catalogue's order (a new role's help comes with its keys).
ROLES = [key.removeprefix("explain.") for key in EN if key.startswith("explain.")]


def card_text(role: str) -> str:
    """The card's words at a table of the default rules: those of its mode where its text
    depends on one (the Thief's `thief_mode`, js/screens/prompts.js cardText)."""
    return EN.get(f"explain_as.{role}.{DEFAULT_RULES.get(f'{role}_mode')}", EN[f"explain.{role}"])


async def test_a_hidden_card_stays_hidden_and_the_help_explains_every_card(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser, httpx.AsyncClient(base_url=gateway.url, timeout=60) as http:
        host = await new_player(browser, "Layla")
        page = host.page
        await page.goto(gateway.url + "/")
        await page.fill("#form-create input[name=name]", host.name)
        await page.click("#form-create button[type=submit]")
        await page.wait_for_selector("#screen-lobby:not([hidden])")
        room = (await page.input_value("#share-link")).rsplit("/", 1)[1]
        for name in ["Omar", "Mei", "Linh", "Ana", "Tom"]:
            (await http.post(f"/api/rooms/{room}/join", json={"name": name})).raise_for_status()
        await page.click("#start:not([disabled])")
        await page.wait_for_selector("#screen-game:not([hidden]) #card:not([data-role=''])")
        role = await page.get_attribute("#card", "data-role")
        assert await page.text_content("#card-role") == EN[f"role.{role}"]

        await page.click("#card-hide")
        for _ in range(2):  # and again after a reload
            await page.wait_for_selector(f'#card-role:text-is("{EN["card.hidden"]}")')
            assert await page.text_content("#card-explain") == ""
            assert await page.locator("#players li.me .role").count() == 0
            assert EN[f"role.{role}"] not in await page.inner_text("#card")
            await page.reload()
        await page.click("#card-hide")
        await page.wait_for_selector(f'#card-role:text-is("{EN[f"role.{role}"]}")')
        assert await page.text_content("#card-explain") == card_text(role)

        await page.click("#help-open")
        await page.wait_for_selector("#help[open]")
        shown = await page.eval_on_selector_all(
            "#help-roles section",
            "els => els.map(e => [e.dataset.role, e.querySelector('p').textContent])")
        assert shown == [[r, card_text(r)] for r in ROLES]
        assert set(CARDS) <= set(ROLES)
        await page.click("#help button[type=submit]")
        await page.wait_for_selector("#help", state="hidden")
        assert not host.errors, host.errors



# One seat per catalogue (two in English): whoever the Sisters are, their card speaks their
# language.
SISTERS_TABLE = [("Layla", "ar", LAPTOP), ("Omar", "en-US", LAPTOP), ("Mei", "zh-CN", LAPTOP),
                 ("Linh", "vi-VN", LAPTOP), ("Ana", "en-US", LAPTOP), ("Tom", "en-US", LAPTOP)]
LANGUAGE = {name: locale[:2] for name, locale, _ in SISTERS_TABLE}
SISTER = "#card-facts [data-fact=sisters]"
GAME = "#screen-game:not([hidden]) #card:not([data-role=''])"


async def test_each_sister_s_card_names_the_other_from_the_deal_and_after_a_reload(stack):
    """The Sisters' view field, drawn from the facts the roles declare (issue 32, part 6): told
    by the deal's event, then from the welcome's view; no other seat's card shows it."""
    gateway = stack.start_gateway()
    async with chromium() as browser:
        _, players = await seat_table(browser, gateway.url, SISTERS_TABLE, durations(120),
                                      roles=["sisters"])
        sisters = [p for p in players if p.role == "sisters"]
        assert len(sisters) == 2, [p.role for p in players]
        for reload in (False, True):
            for me, other in zip(sisters, reversed(sisters)):
                if reload:
                    await me.page.reload()
                    await me.page.wait_for_selector(GAME)
                fact = me.page.locator(SISTER)
                await fact.wait_for()
                words = catalogue(LANGUAGE[me.name])["fact.sisters"]
                assert without_isolates(await fact.inner_text()) == words.format(names=other.name)
        for p in players:
            if p.role != "sisters":
                assert await p.page.locator(SISTER).count() == 0, p.name
            assert not p.errors, (p.name, p.errors)
