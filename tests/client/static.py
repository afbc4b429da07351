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


async def fake_api(page, declaration: dict, review: dict | None = None,
                   status: str = "finished") -> None:
    """`status`: the room's, as its lobby facts say."""
    async def rules(route):
        await route.fulfill(json=declaration)

    async def room(route):
        if route.request.url.endswith("/review"):
            await route.fulfill(json=review) if review else await route.fulfill(status=404, json={})
        else:
            await route.fulfill(json={"room": ROOM, "status": status, "players": PLAYERS,
                                      "next": None})

    await page.route("**/api/rules", rules)
    await page.route("**/api/rooms/**", room)


class FakeRoom:
    """A room's socket played by the test: every hello gets a welcome of `view` (seat `seat`)
    with `replay`'s events after it (seq up to the welcome's: the page's feed only), an act gets
    the error code `refuse[action]` or an ack; `push` sends the page a live event."""

    def __init__(self, view: dict, seat: int | None = 0) -> None:
        self.view, self.seat = view, seat
        self.replay: list[dict] = []
        self.refuse: dict[str, str] = {}
        self.socket = None  # the page's latest
        self.got: list[dict] = []  # every frame the page sent
        self.seq = 100

    async def attach(self, page) -> None:
        await page.route_web_socket("**/ws/**", self.route)

    def route(self, ws) -> None:
        self.socket = ws
        ws.on_message(lambda message: self.answer(ws, json.loads(message)))

    def answer(self, ws, frame: dict) -> None:
        self.got.append(frame)
        if frame.get("type") == "hello":
            ws.send(json.dumps({"type": "welcome", "seat": self.seat, "seq": self.seq,
                                "view": self.view}))
            for seq, event in enumerate(self.replay, start=1):
                ws.send(json.dumps({"type": "event", "seq": seq, **event}))
        elif frame.get("type") == "act" and frame.get("action") in self.refuse:
            ws.send(json.dumps({"type": "error", "id": frame["id"],
                                "code": self.refuse[frame["action"]], "message": "refused"}))
        elif frame.get("id") is not None:
            ws.send(json.dumps({"type": "ack", "id": frame["id"]}))

    def push(self, event: dict) -> None:
        self.seq += 1
        self.socket.send(json.dumps({"type": "event", "seq": self.seq, **event}))


def running(phase: str, prompts: list, **fields) -> dict:
    """Seat 0's view (the Witch's) of a running game of four at `phase`, with `prompts`."""
    from rules.settings import Settings

    seats = [{"seat": p["seat"], "name": p["name"], "alive": True, "mayor": False,
              "role": "witch" if p["seat"] == 0 else None} for p in PLAYERS]
    return {"room": ROOM, "status": "running", "host": 0, "players": PLAYERS, "seats": seats,
            "settings": Settings.from_json({}).to_json(), "spectators": 0,
            "roles_in_play": {"werewolf": 1, "witch": 1, "villager": 2}, "phase": phase, "day": 1,
            "deadline": None, "me": {"seat": 0, "role": "witch", "alive": True},
            "waiting": None, "mayor": None, "chat": {}, "channels": [], "prompts": prompts,
            "votes": {}, "tally": {}, "pointing": {}, "requests": None, "outcome": None,
            **fields}


def prompt(action: str, choices=(1, 2, 3), lo: int = 0, hi: int = 1) -> dict:
    return {"action": action, "choices": list(choices), "min": lo, "max": hi, "deadline": None}


async def a_page(browser, room: FakeRoom | None = None, *, status: str = "running",
                 locale: str = "en-US", viewport: dict | None = None, review: dict | None = None):
    """A new player's page (tests/client/table.py) whose API is the stand-in's, the room's
    lobby facts saying `status`, its socket `room`'s."""
    from gateway.routes.pages import DECLARATION
    from tests.client.table import LAPTOP, new_player

    player = await new_player(browser, "Ann", locale=locale, viewport=viewport or LAPTOP)
    await fake_api(player.page, DECLARATION, review, status=status)
    if room is not None:
        await room.attach(player.page)
    return player


async def sit(player, url: str) -> None:
    """The page opens the stand-in's room holding seat 0's token."""
    page = player.page
    await page.goto(f"{url}/")
    await page.evaluate("(room) => localStorage.setItem(`ww:token:${room}`, 'tok')", ROOM)
    await page.goto(f"{url}/#/r/{ROOM}")
