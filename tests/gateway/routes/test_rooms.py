"""The review of a finished room (gateway/routes/rooms.py): bounded in bytes, not events, and
counted per address (issue 34: unlimited, and its bound counted events)."""
import secrets
from types import SimpleNamespace

import orjson
import pytest
from fastapi import HTTPException
from starlette.requests import Request

from actors.config import Config
from actors.redis_connect import connect
from actors.store import Keys
from gateway.limits import AddressLimits
from gateway.routes import rooms

EVENTS = 50


class FinishedRoom:
    """A finished room's facts and stored log, as RoomClient answers them."""

    def __init__(self, frame_bytes: int) -> None:
        self.log = [{"to": None, "frame": orjson.dumps({"seq": i + 1, "text": "x" * frame_bytes})
                     .decode()} for i in range(EVENTS)]
        self.reads = 0

    async def lobby(self, room: str) -> dict:
        return {"room": room, "status": "finished", "players": [], "settings": {}, "next": None}

    async def events_after(self, room: str, since: int, upto: int) -> list[dict]:
        self.reads += 1
        return self.log[since:upto]


@pytest.fixture
async def limits(redis_url):
    redis = connect(redis_url)
    keys = Keys("t" + secrets.token_hex(5))
    yield AddressLimits(redis, keys, patience=1.0, window=600)
    stale = [key async for key in redis.scan_iter(f"{keys.prefix}:*")]
    if stale:
        await redis.delete(*stale)
    await redis.aclose()


def request(address: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": [],
                    "client": (address, 4000)})


async def test_the_review_answers_at_most_its_bytes_read_a_page_at_a_time(limits, monkeypatch):
    monkeypatch.setattr(rooms, "REVIEW_BYTES", 10_000)
    monkeypatch.setattr(rooms, "REVIEW_PAGE", 8)
    room = FinishedRoom(frame_bytes=1000)  # ~1 KB an event: 50 KB stored
    gw = SimpleNamespace(config=Config(), limits=limits, rooms=room)
    body = (await rooms.review("ABCDEF", request("198.51.100.1"), gw)).body
    review = orjson.loads(body)
    assert len(body) <= 10_000 + 200 and review["truncated"]  # the bound and the head
    # ~1.05 KB an item: the first 9 fit, in log order, each frame as it was stored
    assert [e["event"] for e in review["events"]] == [orjson.loads(e["frame"])
                                                      for e in room.log[:9]]
    assert room.reads == 2  # the log is not read past the bound
    small = FinishedRoom(frame_bytes=10)  # all of it fits
    gw = SimpleNamespace(config=Config(), limits=limits, rooms=small)
    review = orjson.loads((await rooms.review("ABCDEF", request("198.51.100.2"), gw)).body)
    assert not review["truncated"] and len(review["events"]) == EVENTS


async def test_the_review_is_rate_limited_per_address(limits):
    gw = SimpleNamespace(config=Config(reviews_per_address=2), limits=limits,
                         rooms=FinishedRoom(frame_bytes=10))
    for _ in range(2):
        await rooms.review("ABCDEF", request("198.51.100.3"), gw)
    with pytest.raises(HTTPException) as refused:
        await rooms.review("ABCDEF", request("198.51.100.3"), gw)
    assert refused.value.status_code == 429 and refused.value.detail["code"] == "rate_limited"
    await rooms.review("ABCDEF", request("198.51.100.4"), gw)  # another address: its own count
