"""The host's lobby form in Debian's headless Chromium, against the real stack.

A command's ack and the event that carries its effect travel different paths (the actor's reply,
Redis pub/sub), so a busy gateway may deliver the ack first. The form must not fall back to the
settings of the older view in between, or the host's next click sends them back to the server.
"""
from __future__ import annotations

import asyncio
import json

import pytest

from tests.client.table import LOBBY_SHOWS, chromium, new_player

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


class EventsAfterAcks:
    """Proxies the page's socket; while `holding`, the server's events wait and its acks of
    settings commands pass (and are queued in `acks` once the page has them)."""

    def __init__(self) -> None:
        self.holding = False
        self.held: list[tuple] = []
        self.settings_ids: set[str] = set()
        self.acks: asyncio.Queue[str] = asyncio.Queue()

    def route(self, page_side) -> None:
        server_side = page_side.connect_to_server()

        def from_page(message) -> None:
            frame = json.loads(message)
            if frame.get("type") == "settings":
                self.settings_ids.add(frame["id"])
            server_side.send(message)

        def from_server(message) -> None:
            frame = json.loads(message)
            if self.holding and frame.get("type") == "event":
                self.held.append((page_side, message))
                return
            page_side.send(message)
            if frame.get("type") == "ack" and frame.get("id") in self.settings_ids:
                self.acks.put_nowait(frame["id"])

        page_side.on_message(from_page)
        server_side.on_message(from_server)

    def release(self) -> None:
        self.holding = False
        for page_side, message in self.held:
            page_side.send(message)
        self.held.clear()


async def test_host_form_keeps_a_change_acked_before_its_event(stack):
    gateway = stack.start_gateway()

    async with chromium() as browser:
        host = await new_player(browser, "Layla")
        page = host.page
        proxy = EventsAfterAcks()
        await page.route_web_socket(lambda url: "/ws/" in url, proxy.route)
        await page.goto(gateway.url + "/")
        await page.fill("#form-create input[name=name]", host.name)
        await page.click("#form-create button[type=submit]")
        await page.wait_for_selector(
            "#screen-lobby:not([hidden]) #lobby-roles li[data-role=hunter]")

        proxy.holding = True
        await page.locator("#host-roles input[value=hunter]").uncheck()
        await asyncio.wait_for(proxy.acks.get(), 60)
        await page.locator("#host-roles input[value=cupid]").uncheck()
        await asyncio.wait_for(proxy.acks.get(), 60)
        assert proxy.held, "the server sent no event for the settings"
        proxy.release()

        await page.wait_for_function(f"() => !({LOBBY_SHOWS})().roles.includes('cupid')")
        shown = await page.evaluate(LOBBY_SHOWS)
        assert sorted(shown["roles"]) == ["seer", "villager", "werewolf", "witch"]
        assert sorted(shown["hostChecked"]) == ["seer", "witch"]
        assert not host.errors, host.errors

