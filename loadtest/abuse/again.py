"""again: `again` with a lone surrogate in its token; `--clicks` concurrent clicks on a finished
table (a lobby closed at its maximum age)."""
from __future__ import annotations

import asyncio
import time

from actors.config import Config
from actors.store import Keys
from loadtest.abuse.common import Target, client, counted


SHARED = ("finished",)  # its host plays the shared finished table again


def add_arguments(parser) -> None:
    parser.add_argument("--clicks", type=int, default=5, help="concurrent `again` clicks")


async def rooms_stored(config: Config) -> int:
    """Rooms of the stack's prefix in Redis (their directory hashes)."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(config.redis_url)
    try:
        return len([k async for k in r.scan_iter(match=Keys(config.prefix).room("??????"),
                                                 count=1000)])
    finally:
        await r.aclose()


async def run(t: Target) -> dict:
    url, pinger, config, shared = t.url, t.pinger, t.config, t.shared
    clicks = t.args.clicks
    finished = await shared.finished()
    room, host = finished["room"], finished["seats"][0]
    rooms0, t0 = await rooms_stored(config), time.monotonic()
    async with client(url) as http:
        surrogate = await http.post(f"/api/rooms/{room}/again", content=b'{"token": "\\ud800x"}',
                                    headers={"content-type": "application/json"})
        answers = await asyncio.gather(*(
            http.post(f"/api/rooms/{room}/again", json={"token": host["token"]})
            for _ in range(clicks)))
        took = time.monotonic() - t0
        following = (await http.get(f"/api/rooms/{room}")).json()["next"]
    made = await rooms_stored(config) - rooms0
    rooms = sorted({a.json()["room"] for a in answers if a.status_code == 200})
    return {"probe": f"`again` with a lone surrogate in its token; then {clicks} concurrent "
                     f"`again` clicks on a finished table (its lobby closed at its maximum age, "
                     f"{finished['closed_after']:.0f} s)",
            "result": f"the surrogate: {surrogate.status_code} "
                      f"{(surrogate.json().get('detail') or {}).get('code', '')}; the clicks: "
                      f"{counted(a.status_code for a in answers)}, naming {len(rooms)} room(s); "
                      f"{made} room(s) stored; the table's `next`: "
                      f"{'the same' if rooms == [following] else following}",
            "time": f"{took * 1000:.0f} ms", "rss": "-", "ping": pinger.p99(t0),
            "facts": {"surrogate": surrogate.status_code,
                      "clicks": [a.status_code for a in answers], "rooms": rooms,
                      "stored": made, "next": following}}
