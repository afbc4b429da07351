"""Game rooms on Ray, persisted in Redis.

- `room`: one room (lobby, then the `rules` game) behind a single-writer mailbox, with its timer;
  what it is made of: `room_data` (its data, changes and events), `lobby`, `moderation`, `names`.
- `inbox`: a request to a host and its reply, both ends (the gateway's, the host's).
- `store`: the Redis layout and its atomic, epoch-fenced persist; `memory_store`, its in-memory
  twin for tests; `redis_connect`: connecting to Redis (one server, Sentinel, Cluster).
- `host`: `RoomHost` holds up to `games_per_actor` rooms; `GameHost` is its Ray actor shell.
- `placement`: picks or starts the host for a new room, keeping warm hosts ready.
- `client`: `RoomClient`, the gateway's only entry point; `refusals`, what it raises;
  `subscriptions`, the per-process pub/sub multiplexer; `reports`, players' reports.
- `config`, `clock`: explicit configuration, and real or fake time; `heap`: the startup heap frozen.

This module is the face the gateway sees: `gateway/` imports `from actors import ...` only the
names in `__all__`, never a submodule (tests/test_layout.py checks it). They are loaded lazily,
each from its submodule on first use, so `from actors import Config` costs what importing
`actors.config` costs and no more (only the `RoomClient` side, `actors.client`, imports Ray).

- rooms through `RoomClient` and what it raises or takes: `AgainRefused`, `NameTaken`,
  `RoomFull`, `RoomNotFound`, `RoomStarted`, `ServerFull`, `Unseated`, `Since`, `token_hash`;
- configuration: `Config`;
- the room's rules of input: `clean_name`, `WATCHER`, `PROOF_CHARS`, `RATE_LIMITS`,
  `TokenBucket`; the events it sends, declared: `EVENTS`; time: `Clock`, `RealClock`;
- public tables: `Kind`, `kinds`, `LANGUAGES`, `QUICK_PRESETS`;
- Redis: `connect` (any URL: one server, Sentinel, Cluster), `Keys`, `patiently`,
  `persistence`, `StorageUnavailable`; the prefix lease: `PrefixTaken`, `release`;
- metrics: `GROUP_BUCKETS`, `LATENCY_BUCKETS`, `watch_loop_lag`; the heap: `freeze_startup_heap`.
"""
from __future__ import annotations

from importlib import import_module as _import_module
from typing import TYPE_CHECKING

__all__ = [
    "RoomClient", "token_hash",  # client
    "AgainRefused", "NameTaken", "RoomFull", "RoomNotFound", "RoomStarted",  # refusals
    "ServerFull",  # refusals
    "Since", "Unseated",  # subscriptions
    "Config",  # config
    "Clock", "RealClock",  # clock
    "TokenBucket",  # ratelimit
    "PROOF_CHARS", "RATE_LIMITS",  # room
    "EVENTS", "WATCHER",  # room_data
    "clean_name",  # names
    "Kind", "LANGUAGES", "QUICK_PRESETS", "kinds",  # tables
    "Keys", "StorageUnavailable", "patiently",  # store
    "connect", "persistence",  # redis_connect
    "PrefixTaken", "release",  # ownership
    "GROUP_BUCKETS", "LATENCY_BUCKETS", "watch_loop_lag",  # metrics
    "freeze_startup_heap",  # heap
]

# The submodule that defines each name of __all__ (tests/test_layout.py: the two agree).
_FACE = {
    "client": ("RoomClient", "token_hash"),
    "refusals": ("AgainRefused", "NameTaken", "RoomFull", "RoomNotFound", "RoomStarted",
                 "ServerFull"),
    "subscriptions": ("Since", "Unseated"),
    "config": ("Config",),
    "clock": ("Clock", "RealClock"),
    "ratelimit": ("TokenBucket",),
    "room": ("PROOF_CHARS", "RATE_LIMITS"),
    "room_data": ("EVENTS", "WATCHER"),
    "names": ("clean_name",),
    "tables": ("Kind", "LANGUAGES", "QUICK_PRESETS", "kinds"),
    "store": ("Keys", "StorageUnavailable", "patiently"),
    "redis_connect": ("connect", "persistence"),
    "ownership": ("PrefixTaken", "release"),
    "metrics": ("GROUP_BUCKETS", "LATENCY_BUCKETS", "watch_loop_lag"),
    "heap": ("freeze_startup_heap",),
}
_MODULE_OF = {name: module for module, names in _FACE.items() for name in names}


def __getattr__(name: str):
    """Load a name of the face from its submodule on first use (PEP 562). Anything else is an
    AttributeError, so `from actors import room` still finds the submodule itself."""
    try:
        module = _MODULE_OF[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(_import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from actors.client import RoomClient, token_hash
    from actors.clock import Clock, RealClock
    from actors.config import Config
    from actors.heap import freeze_startup_heap
    from actors.metrics import GROUP_BUCKETS, LATENCY_BUCKETS, watch_loop_lag
    from actors.ownership import PrefixTaken, release
    from actors.ratelimit import TokenBucket
    from actors.redis_connect import connect, persistence
    from actors.refusals import (AgainRefused, NameTaken, RoomFull, RoomNotFound, RoomStarted,
                                 ServerFull)
    from actors.names import clean_name
    from actors.room import PROOF_CHARS, RATE_LIMITS
    from actors.room_data import EVENTS, WATCHER
    from actors.store import Keys, StorageUnavailable, patiently
    from actors.subscriptions import Since, Unseated
    from actors.tables import LANGUAGES, QUICK_PRESETS, Kind, kinds
