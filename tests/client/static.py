"""The client's static files without the stack: their folder, a language's catalogue, and a
stand-in for the API a page asks (`static_site` in conftest.py serves the files)."""
from __future__ import annotations

import json
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "gateway" / "static"
# The stand-in API's finished room
ROOM = "EVTS"
PLAYERS = [{"seat": s, "name": n, "connected": True}
           for s, n in enumerate(["Ann", "Ben", "Cy", "Di"])]


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


async def fake_api(page, declaration: dict, review: dict | None = None) -> None:
    async def rules(route):
        await route.fulfill(json=declaration)

    async def room(route):
        if route.request.url.endswith("/review"):
            await route.fulfill(json=review) if review else await route.fulfill(status=404, json={})
        else:
            await route.fulfill(json={"room": ROOM, "status": "finished", "players": PLAYERS,
                                      "next": None})

    await page.route("**/api/rules", rules)
    await page.route("**/api/rooms/**", room)
