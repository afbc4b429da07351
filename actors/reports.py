"""Reports of players, for the operators: a report points at the reported seat's lines in its
room's chat list (room, seats, the list's length when it was filed) instead of copying them, so
a room's reports cost a few hundred bytes each however much was said (copies took 17x the chat:
issue 34), and the chat a report points into is kept as long as the room's reports
(`actors.store`'s final persist, and `_FILE` for a room already over).

A room's reports are one hash (`Keys.reports`, "reporter>reported" -> the report), bounded per
reporting seat and per room; the operators read them newest first through one global index
(`Keys.reported`), a page at a time.
"""
from __future__ import annotations

from typing import NamedTuple

import orjson
import redis.asyncio as aioredis

from actors.store import Keys

# The reported seat's lines one report shows an operator: its last ones before the report (a
# page of reports stays a few MB at most, whatever a seat wrote).
REPORT_LINES = 200

# Whether one report may be filed (KEYS: the room's reports, its chat; ARGV: field
# "reporter>reported", the report, reports per seat, reports per room, ttl): 0: that pair was
# reported already; -1: the room holds its bound; -2: the reporting seat does.
_BOUNDS = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local fields = redis.call('HKEYS', KEYS[1])
if #fields >= tonumber(ARGV[4]) then return -1 end
local mine, reporter = 0, string.match(ARGV[1], '^[^>]*>')
for _, field in ipairs(fields) do
  if string.sub(field, 1, #reporter) == reporter then mine = mine + 1 end
end
if mine >= tonumber(ARGV[3]) then return -2 end
"""
# The bounds, then 1: may be filed.
_ADMISSIBLE = _BOUNDS + "return 1"
# The bounds, then files it: 1. The chat of a room already over (it has a TTL) is kept as long as
# the report; a live room's (no TTL) is left to its final persist, which does the same (EXPIRE GT
# leaves a key without a TTL as it is).
_FILE = _BOUNDS + """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5], 'GT')
return 1
"""


class Refused(Exception):
    """A report past a bound (`.code`: too_many_reports)."""

    code = "too_many_reports"


class Filed(NamedTuple):
    room: str
    reporter: tuple[int, str]  # seat, name
    reported: tuple[int, str]
    reason: str
    text: str
    at: int  # ms


class Reports:
    def __init__(self, redis: aioredis.Redis, keys: Keys, *, ttl: int, per_seat: int,
                 per_room: int) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl
        self._per_seat = per_seat
        self._per_room = per_room
        self._file = redis.register_script(_FILE)
        self._admissible = redis.register_script(_ADMISSIBLE)

    async def admissible(self, code: str, reporter: int, reported: int) -> bool:
        """Whether `file` would store a report of seat `reported` by seat `reporter` now: False
        if that pair was reported already; raises Refused past a bound. Read before anything
        costlier than Redis (the seats' names are the room host's): 306 reports at once, most
        past the bounds, kept the host from the honest tables' commands (issue 34). `file`
        checks again, atomically."""
        return self._verdict(await self._admissible(
            keys=[self._keys.reports(code)],
            args=[f"{reporter}>{reported}", "", self._per_seat, self._per_room, self._ttl]))

    def _verdict(self, answer: int) -> bool:
        if answer == -1:
            raise Refused(f"this room holds {self._per_room} reports already")
        if answer == -2:
            raise Refused(f"a seat files at most {self._per_seat} reports in a room")
        return bool(answer)

    async def file(self, report: Filed) -> bool:
        """Store `report`, pointing at the room's chat as it stands; False if this seat had
        reported that one already. Raises Refused past a bound (nothing stored)."""
        keys, code = self._keys, report.room
        field = f"{report.reporter[0]}>{report.reported[0]}"
        entry = {"room": code, "reporter": {"seat": report.reporter[0], "name": report.reporter[1]},
                 "reported": {"seat": report.reported[0], "name": report.reported[1]},
                 "reason": report.reason, "text": report.text, "at": report.at,
                 # the reported seat's lines among the chat list's first `upto`
                 "upto": await self._redis.llen(keys.chat(code))}
        filed = await self._file(keys=[keys.reports(code), keys.chat(code)],
                                 args=[field, orjson.dumps(entry), self._per_seat, self._per_room,
                                       self._ttl])
        if not self._verdict(filed):
            return False
        async with self._redis.pipeline(transaction=True) as pipe:  # the index's own slot
            pipe.zadd(keys.reported(), {f"{code} {field}": report.at})
            pipe.zremrangebyscore(keys.reported(), 0, report.at - self._ttl * 1000)
            await pipe.execute()
        return True

    async def page(self, limit: int, cursor: str | None = None) -> dict:
        """{"reports": the `limit` newest reports after `cursor` (each with the reported seat's
        lines it points at), "next": the cursor of the page after, or None}. A cursor is
        "AT-SKIP": older than AT ms, or at AT past the SKIP already read."""
        top, skip = ("+inf", 0) if cursor is None else _cursor(cursor)
        found = await self._redis.zrevrangebyscore(self._keys.reported(), top, "-inf",
                                                   start=skip, num=limit, withscores=True)
        rooms: dict[str, list[str]] = {}
        for member, _ in found:
            code, field = member.decode().split(" ")
            rooms.setdefault(code, []).append(field)
        read: dict[tuple[str, str], dict] = {}
        for code, fields in rooms.items():  # one slot each on a cluster: one read per room
            for field, report in zip(fields, await self._read(code, fields)):
                if report is not None:
                    read[code, field] = report
        reports = [read[key] for member, _ in found
                   if (key := tuple(member.decode().split(" "))) in read]
        if len(found) < limit:
            return {"reports": reports, "next": None}
        last = int(found[-1][1])
        same = sum(1 for _, at in found if int(at) == last)
        return {"reports": reports,
                "next": f"{last}-{same + (skip if str(last) == str(top) else 0)}"}

    async def _read(self, code: str, fields: list[str]) -> list[dict | None]:
        """The room's reports `fields` with their lines (None: gone with the room's TTL)."""
        keys = self._keys
        stored = [None if raw is None else orjson.loads(raw)
                  for raw in await self._redis.hmget(keys.reports(code), fields)]
        upto = max((r["upto"] for r in stored if r is not None), default=0)
        chat = [orjson.loads(line) for line in
                (await self._redis.lrange(keys.chat(code), 0, upto - 1) if upto else [])]
        for report in stored:
            if report is None:
                continue
            upto, seat = report.pop("upto"), report["reported"]["seat"]
            lines = [{k: line[k] for k in ("channel", "ts", "text")}
                     for line in chat[:upto] if line.get("seat") == seat]
            report["lines"], report["lines_total"] = lines[-REPORT_LINES:], len(lines)
        return stored


def _cursor(cursor: str) -> tuple[str, int]:
    at, skip = cursor.split("-")
    return at, int(skip)
