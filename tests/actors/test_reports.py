"""Reports against the real (shared) Redis and a Redis Cluster: a report points at the reported
seat's lines instead of copying them, the chat it points at is kept as long as it, a seat and a
room hold a bounded number, and the operators read them a page at a time."""
import orjson
import pytest

from actors import reports as reports_module
from actors.reports import Filed, Refused, Reports
from actors.store import Keys, RedisStore

TTL = 30 * 86400


@pytest.fixture
def reports(redis, prefix):
    return Reports(redis, Keys(prefix), ttl=TTL, per_seat=2, per_room=3)


def line(seat: int, text: str) -> bytes:
    """A chat line as the room stores it (actors.store: the chat list)."""
    return orjson.dumps({"channel": "day", "seat": seat, "name": f"P{seat}", "text": text,
                         "ts": 1, "to": None})


def filed(code: str, reporter: int, reported: int, at: int = 1000) -> Filed:
    return Filed(code, (reporter, f"P{reporter}"), (reported, f"P{reported}"), "abuse", "", at)


async def test_a_report_stores_where_the_lines_are_not_the_lines(reports, redis, prefix):
    keys = Keys(prefix)
    sizes = []
    for code, said in (("AAAAAA", 0), ("BBBBBB", 500)):
        for i in range(said):
            await redis.rpush(keys.chat(code), line(2, f"{i} " + "rude words " * 20))
        assert await reports.file(filed(code, 1, 2))
        sizes.append(len(await redis.hget(keys.reports(code), "1>2")))
    assert sizes[1] - sizes[0] == 2  # "upto": 500, not 0: nothing else grows
    # what the operators read resolves the reference: the seat's lines up to the report
    await redis.rpush(keys.chat("BBBBBB"), line(2, "said after the report"))
    page = await reports.page(10)
    by_room = {r["room"]: r for r in page["reports"]}
    assert by_room["AAAAAA"]["lines"] == [] and by_room["AAAAAA"]["lines_total"] == 0
    assert by_room["BBBBBB"]["lines_total"] == 500
    assert len(by_room["BBBBBB"]["lines"]) == reports_module.REPORT_LINES  # the last ones
    assert by_room["BBBBBB"]["lines"][-1]["text"].startswith("499 ")


async def test_a_seat_and_a_room_hold_a_bounded_number_of_reports(reports, redis, prefix):
    keys = Keys(prefix)
    assert await reports.file(filed("AAAAAA", 1, 2))
    assert not await reports.file(filed("AAAAAA", 1, 2))  # the same pair: a duplicate
    assert await reports.file(filed("AAAAAA", 1, 3))
    with pytest.raises(Refused, match="at most 2 reports"):
        await reports.file(filed("AAAAAA", 1, 4))
    assert await reports.file(filed("AAAAAA", 11, 2))  # seat 11 is not seat 1
    with pytest.raises(Refused, match="3 reports already"):
        await reports.file(filed("AAAAAA", 5, 2))
    assert sorted(await redis.hkeys(keys.reports("AAAAAA"))) == [b"11>2", b"1>2", b"1>3"]
    assert len((await reports.page(10))["reports"]) == 3


async def test_the_operators_read_every_report_once_a_page_at_a_time(reports):
    # ties of time (ms) included: a page may end in the middle of them
    times = {"AAAAAA": 5, "BBBBBB": 5, "CCCCCC": 5, "DDDDDD": 7, "EEEEEE": 3, "FFFFFF": 5}
    for code, at in times.items():
        await reports.file(filed(code, 1, 2, at))
    seen, cursor = [], None
    while True:
        page = await reports.page(2, cursor)
        assert len(page["reports"]) <= 2
        seen += [(r["at"], r["room"]) for r in page["reports"]]
        if page["next"] is None:
            break
        cursor = page["next"]
    assert sorted(seen, key=lambda r: -r[0]) == seen
    assert sorted(room for _, room in seen) == sorted(times)


async def test_the_chat_a_report_points_at_is_kept_as_long_as_the_report(reports, redis, prefix):
    keys, store = Keys(prefix), RedisStore(redis, prefix, finished_ttl=3600)
    # a room over already (its keys expire in an hour): its chat is kept as long as the report
    await redis.rpush(keys.chat("AAAAAA"), line(2, "before"))
    await redis.expire(keys.chat("AAAAAA"), 3600)
    await reports.file(filed("AAAAAA", 1, 2))
    assert await redis.ttl(keys.chat("AAAAAA")) > 3600
    # a live room's chat (no TTL) stays so; its final persist keeps it as long as the report
    await store.claim("BBBBBB", "h1")
    await store.persist("BBBBBB", epoch=1, host="h1", snapshot=b"{}", status="running",
                        first_seq=1, events=[b'{"seq":1}'], tokens={}, chat_from=None,
                        chat=[line(2, "rude")])
    await reports.file(filed("BBBBBB", 1, 2))
    assert await redis.ttl(keys.chat("BBBBBB")) == -1
    await store.persist("BBBBBB", epoch=1, host="h1", snapshot=b"{}", status="finished",
                        first_seq=2, events=[b'{"seq":2}'], tokens={}, chat_from=1, chat=[])
    assert await redis.ttl(keys.log("BBBBBB")) <= 3600
    assert await redis.ttl(keys.chat("BBBBBB")) > 3600
    [report] = [r for r in (await reports.page(10))["reports"] if r["room"] == "BBBBBB"]
    assert [line["text"] for line in report["lines"]] == ["rude"]
