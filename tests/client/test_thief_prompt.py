"""The Thief's prompt (issue 22 item 7) against the real stack: with `thief_mode = extra_cards` (the
default) his card says what he may do in that mode, each card set aside is named on the button
that takes it, and taking neither has its own button, which the server takes."""
from __future__ import annotations

import json

import pytest

from devstack.stack import durations
from tests.client.table import LAPTOP, PHONE, chromium, seat_table
from tests.client.static import STATIC

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

EN = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))
# The Thief's night is long enough for a loaded machine; the rest does not matter here.
SLOW_THIEF = durations(30, thief=120)
PROMPTS = """() => [...document.querySelectorAll("#prompts .prompt")].map((p) => ({
    action: p.dataset.action, hint: p.querySelector(".hint").textContent,
    buttons: [...p.querySelectorAll("button")].map((b) => b.textContent)}))"""


@pytest.mark.timeout(600)
async def test_the_thief_s_prompt_names_his_cards_and_offers_taking_neither(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        specs = [(f"T{i}", "en-US", PHONE if i % 2 else LAPTOP) for i in range(6)]
        _, players = await seat_table(browser, gateway.url, specs, SLOW_THIEF, roles=["thief"])
        thief = next(p for p in players if p.role == "thief")
        page = thief.page
        assert await page.text_content("#card-explain") == EN["explain_as.thief.extra_cards"]
        await page.wait_for_selector('.prompt[data-action="thief.keep"]')
        prompts = {p["action"]: p for p in await page.evaluate(PROMPTS)}
        # the host's default extra cards: two villagers, each named where it is taken
        card = EN["role.villager"]
        for action in ("thief.take_first", "thief.take_second"):
            assert prompts[action]["buttons"] == [EN[f"action.{action}.button"].format(card=card)]
            assert prompts[action]["hint"] == EN[f"action.{action}.help"].format(card=card)
        assert prompts["thief.keep"]["buttons"] == [EN["action.thief.keep.button"]]
        await page.click('.prompt[data-action="thief.keep"] button')
        # the server took it: every prompt of his closes, and he keeps his card
        await page.wait_for_selector('.prompt[data-action^="thief."]', state="detached")
        assert not [f for f in thief.refused if f.get("code")], thief.refused
        assert await page.get_attribute("#card", "data-role") == "thief"
        for p in players:
            assert not p.errors, (p.name, p.errors)

