"""Public tables: the index that lists them and seats quick-play presses, kept in Redis beside
the rooms (docs/architecture.md, "Public tables").

A public table is a room whose host opened it to strangers: it plays one preset in one language
(its *kind*), starts by itself, and is listed until it ends. The rooms stay the truth (a room
refuses a join past its size, whatever the index says); the index is how a press finds the
fullest open table of its kind without scanning rooms, and how the list is served.

Every key of a kind carries the hash tag `{t:PRESET:LANGUAGE}`, so each script touches one slot
of a Redis Cluster (one slot per queue):
- `open`: sorted set, code -> seats taken or promised, of the kind's tables still in their lobby;
- `facts`: hash, code -> JSON {size, starts_at} of those tables (written by their room);
- `making`: a short lease held while a press opens a new table, so that concurrent presses wait
  for it instead of opening a second half-empty one;
- `running`: sorted set, code -> start time (ms) of the kind's public games in play;
- `games`: hash, code -> JSON {seats, size, started} of those games (the spectators' list).

A press claims a seat with one script: the fullest open table with a seat left gets one more
(ZINCRBY), then the gateway joins it. A join that fails gives the seat back. A link join to a
public table, a leave or a removal is counted after the room persisted the change: the room
states its listing (`Listing`, Nakama's match label), and `relist` writes what changed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
import redis.asyncio as aioredis

import rules

LANGUAGES = ("en", "ar", "vi", "zh")  # the client's catalogues: a public table's language
QUICK_PRESETS = ("seed_000", "seed_002", "seed_004")  # classic, Millers Hollow, the 004 web table
MAKING_LEASE_MS = 5000  # how long a press may take to open a table before others open another
LISTED_MAX = 500  # tables of one kind and state read for the list at once


class NoSuchKind(ValueError):
    code = "bad_kind"


@dataclass(frozen=True, slots=True)
class Kind:
    preset: str
    language: str

    def __post_init__(self) -> None:
        if self.preset not in rules.PRESETS:
            raise NoSuchKind(f"preset must be one of {sorted(rules.PRESETS)}")
        if self.language not in LANGUAGES:
            raise NoSuchKind(f"language must be one of {list(LANGUAGES)}")

    @property
    def tag(self) -> str:
        return f"{{t:{self.preset}:{self.language}}}"

    def settings(self, durations: dict | None = None) -> rules.Settings:
        """A new table of this kind: its preset, the cluster's default durations."""
        return rules.Settings.from_json({"preset": self.preset, "durations": dict(durations or {})})

    def size(self) -> int:
        return rules.max_players(self.settings())


@dataclass(frozen=True, slots=True)
class Listing:
    """What a public table states of itself for the index (`RoomData.listing`): the index is
    written from it (`relist`), so the room decides nothing about the lists."""
    kind: Kind
    running: bool  # a game in play (listed among the running ones), else a lobby (open)
    seats: int
    size: int
    starts_at: int | None = None  # a lobby's countdown
    bots: int = 0  # of the seats, those bots hold

    def facts(self) -> dict:
        """What the list shows of an open table besides its seats."""
        return {"size": self.size, "starts_at": self.starts_at, "bots": self.bots}


async def relist(index: TableIndex | MemoryTableIndex, code: str, before: Listing | None,
                 after: Listing | None, seated: int, now: int) -> None:
    """Bring the index from the room's listing `before` a durable change to the one `after` it:
    listed, seats, countdown, started, gone. `seated`: seats of an open table the index has not
    counted (a join by link +1, a seat gone -1; a quick-play press counted its own)."""
    if before is not None and (after is None or before.kind != after.kind):
        await index.ended(before.kind, code)
        before = None
    if after is None:
        return
    if after.running:
        if before is None or not before.running:
            await index.started(after.kind, code, now,
                                {"seats": after.seats, "size": after.size, "started": now,
                                 "bots": after.bots})
    elif before is None:  # made public, or its first write stored
        await index.listed(after.kind, code, after.seats, after.facts())
    else:
        if seated:
            await index.seated(after.kind, code, seated)
        if before.facts() != after.facts():
            await index.facts(after.kind, code, after.facts())


def kinds(preset: str | None = None, language: str | None = None) -> list[Kind]:
    """Every kind the filter matches (None: any); NoSuchKind for a value no kind has."""
    if preset not in (None, *rules.PRESETS) or language not in (None, *LANGUAGES):
        raise NoSuchKind(f"no preset {preset!r} or language {language!r}")
    return [Kind(p, lang) for p in rules.PRESETS for lang in LANGUAGES
            if preset in (None, p) and language in (None, lang)]


# KEYS: open, making; ARGV: size, lease ms, codes to skip...
# -> {'seat', code} | {'create'} (the caller holds `making` and opens one) | {'wait'}
_CLAIM = """
local size = tonumber(ARGV[1])
local skip = {}
for i = 3, #ARGV do skip[ARGV[i]] = true end
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. size, '-inf', 'LIMIT', 0, #ARGV + 8)
for _, code in ipairs(found) do
  if not skip[code] then
    redis.call('ZINCRBY', KEYS[1], 1, code)
    return {'seat', code}
  end
end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return {'create'} end
return {'wait'}
"""

# KEYS: open, facts; ARGV: code, seats, facts JSON
_LISTED = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""

# KEYS: open; ARGV: code, delta. Only a table still listed open is counted.
_SEATED = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZINCRBY', KEYS[1], ARGV[2], ARGV[1])
  return 1
end
return 0
"""

# KEYS: open, facts; ARGV: code, facts JSON. Only a table still listed open.
_FACTS = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: open, facts, running, games; ARGV: code, started ms, game JSON
_STARTED = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return 1
"""

# KEYS: open, facts, running, games; ARGV: code
_ENDED = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
"""


class TableIndex:
    """The Redis index of public tables (one instance per process)."""

    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self._redis = redis
        self._prefix = prefix
        self._claim = redis.register_script(_CLAIM)
        self._listed = redis.register_script(_LISTED)
        self._seated = redis.register_script(_SEATED)
        self._facts = redis.register_script(_FACTS)
        self._started = redis.register_script(_STARTED)
        self._ended = redis.register_script(_ENDED)

    def key(self, kind: Kind, part: str) -> str:
        return f"{self._prefix}:tables:{kind.tag}:{part}"

    def _keys(self, kind: Kind, *parts: str) -> list[str]:
        return [self.key(kind, part) for part in parts]

    async def claim(self, kind: Kind, size: int,
                    skip: Sequence[str] = ()) -> tuple[str, str | None]:
        """("seat", code): a seat of that table is now promised to the caller (join it, or
        `seated(-1)`); ("create", None): the caller must open a table and `listed` it; ("wait",
        None): another press is opening one."""
        verdict = await self._claim(keys=self._keys(kind, "open", "making"),
                                    args=[size, MAKING_LEASE_MS, *skip])
        return verdict[0].decode(), verdict[1].decode() if len(verdict) > 1 else None

    async def made(self, kind: Kind) -> None:
        """The press that held `making` opened its table (its room listed it) or gave up."""
        await self._redis.delete(self.key(kind, "making"))

    async def listed(self, kind: Kind, code: str, seats: int, facts: dict) -> None:
        """List `code` open with `seats` taken."""
        await self._listed(keys=self._keys(kind, "open", "facts"),
                           args=[code, seats, orjson.dumps(facts)])

    async def seated(self, kind: Kind, code: str, delta: int) -> None:
        """Seats came (+) or went (-) at an open table."""
        await self._seated(keys=self._keys(kind, "open"), args=[code, delta])

    async def facts(self, kind: Kind, code: str, facts: dict) -> None:
        await self._facts(keys=self._keys(kind, "open", "facts"), args=[code, orjson.dumps(facts)])

    async def started(self, kind: Kind, code: str, started: int, game: dict) -> None:
        await self._started(keys=self._keys(kind, "open", "facts", "running", "games"),
                            args=[code, started, orjson.dumps(game)])

    async def ended(self, kind: Kind, code: str) -> None:
        """Not listed any more: over, closed, emptied, or voting newcomers out."""
        await self._ended(keys=self._keys(kind, "open", "facts", "running", "games"), args=[code])

    async def open_tables(self, kind: Kind) -> list[dict]:
        """The kind's lobbies, fullest first: {room, preset, language, seats, size, starts_at}."""
        pipe = self._redis.pipeline(transaction=False)
        pipe.zrevrange(self.key(kind, "open"), 0, LISTED_MAX - 1, withscores=True)
        pipe.hgetall(self.key(kind, "facts"))
        ranked, facts = await pipe.execute()
        found = []
        for code, seats in ranked:
            fact = facts.get(code)
            if fact is None:
                continue
            fact = orjson.loads(fact)
            found.append({"room": code.decode(), "preset": kind.preset, "language": kind.language,
                          "state": "open", "seats": int(seats), **fact})
        return found

    async def running_games(self, kind: Kind) -> list[dict]:
        """The kind's games in play, newest first: {room, preset, language, seats, size,
        started}."""
        codes = await self._redis.zrevrange(self.key(kind, "running"), 0, LISTED_MAX - 1)
        if not codes:
            return []
        games = await self._redis.hmget(self.key(kind, "games"), codes)
        return [{"room": code.decode(), "preset": kind.preset, "language": kind.language,
                 "state": "running", **orjson.loads(game)}
                for code, game in zip(codes, games) if game is not None]


class MemoryTableIndex:
    """The same contract in memory, for the room's tests without Redis."""

    def __init__(self) -> None:
        self.open: dict[Kind, dict[str, int]] = {}
        self.facts_of: dict[Kind, dict[str, dict]] = {}
        self.running: dict[Kind, dict[str, dict]] = {}
        self.making: set[Kind] = set()

    async def claim(self, kind: Kind, size: int,
                    skip: Sequence[str] = ()) -> tuple[str, str | None]:
        tables = self.open.setdefault(kind, {})
        for code, seats in sorted(tables.items(), key=lambda item: -item[1]):
            if seats < size and code not in skip:
                tables[code] += 1
                return "seat", code
        if kind in self.making:
            return "wait", None
        self.making.add(kind)
        return "create", None

    async def made(self, kind: Kind) -> None:
        self.making.discard(kind)

    async def listed(self, kind: Kind, code: str, seats: int, facts: dict) -> None:
        self.open.setdefault(kind, {})[code] = seats
        self.facts_of.setdefault(kind, {})[code] = facts

    async def seated(self, kind: Kind, code: str, delta: int) -> None:
        tables = self.open.get(kind, {})
        if code in tables:
            tables[code] += delta

    async def facts(self, kind: Kind, code: str, facts: dict) -> None:
        if code in self.open.get(kind, {}):
            self.facts_of[kind][code] = facts

    async def started(self, kind: Kind, code: str, started: int, game: dict) -> None:
        self.open.get(kind, {}).pop(code, None)
        self.facts_of.get(kind, {}).pop(code, None)
        self.running.setdefault(kind, {})[code] = game

    async def ended(self, kind: Kind, code: str) -> None:
        for table in (self.open, self.facts_of, self.running):
            table.get(kind, {}).pop(code, None)
