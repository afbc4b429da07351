"""Bots on the real stack (a gateway, Ray, Redis): one lone quick-play press gets a started game
with bots at its table's countdown, and the bots play it."""
import secrets

import httpx
import pytest

from devstack.stack import HTTP_TIMEOUT, TEST_DURATIONS, Stack, connect
from tests.helpers import until

pytestmark = pytest.mark.e2e

COUNTDOWN = 3  # seconds (WW_PUBLIC_COUNTDOWN)


@pytest.fixture
def gateway(ray_address, redis_url):
    stack = Stack(ray_address=ray_address, redis_url=redis_url, prefix="t" + secrets.token_hex(5))
    yield stack.start_gateway(durations=TEST_DURATIONS, games_per_actor=10,
                              env={"WW_PUBLIC_COUNTDOWN": str(COUNTDOWN)})
    stack.close()


async def test_a_lone_press_plays_a_started_game_with_bots(gateway):
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        response = await http.post("/api/quickplay", json={"name": "Layla", "preset": "seed_000",
                                                           "language": "en"})
        response.raise_for_status()
        seat = response.json()
        client = await connect(gateway.ws_url, seat["room"], seat["token"])
        try:
            assert client.welcome["view"]["status"] == "lobby"
            assert client.welcome["view"]["starts_at"] is not None
            started = await client.wait_for(lambda f: f.get("kind") == "game_started",
                                            timeout=COUNTDOWN + 30)
            assert len(started["seats"]) == 8
            joined = [f for f in client.events if f.get("kind") == "joined"]
            assert [f["bot"] for f in joined] == [True] * 7
            # the facts come from the host's memory, which may trail the published write a
            # moment (docs/architecture.md: a read can lag a write already published)

            async def running_facts():
                facts = (await http.get(f"/api/rooms/{seat['room']}")).json()
                return facts if facts["status"] == "running" else None
            facts = await until(running_facts, 10, "the room's facts to show its game")
            assert [p["bot"] for p in facts["players"]] == [False] + [True] * 7
            # the list: the index is written after the write, and read once a second

            async def listed():
                tables = (await http.get("/api/tables", params={"state": "running"})).json()
                return tables["tables"]
            running = await until(listed, 10, "the game in the running list")
            assert [(t["room"], t["seats"], t["bots"]) for t in running] == [(seat["room"], 8, 7)]
            # the bots play: a day's vote cast by a bot's seat reaches the player's socket
            voted = await client.wait_for(lambda f: f.get("kind") == "voted"
                                          and f.get("seat") != seat["seat"], timeout=90)
            assert voted["seat"] in range(1, 8)
        finally:
            await client.close()
