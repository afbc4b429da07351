"""`MemoryStore`: the `Store` contract (actors.store) in memory, so a `Room` and a `RoomHost` are
testable without Redis (docs/architecture.md)."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from actors.inbox import REPLY_OK, Rider, reply_message
from actors.store import FINAL, OutOfSync, StaleEpoch, Stored, snapshot_seq
from actors.tables import MemoryTableIndex


class MemoryStore:
    """The same contract in memory, for tests of Room and RoomHost without Redis.

    `fail` makes persists raise (a storage outage) until cleared; `gate`, when not None, holds every
    persist until the event is set (`held` tells the test one is waiting), so a test can see that
    nothing is acknowledged before it is stored.
    """

    def __init__(self) -> None:
        self.rooms: dict[str, dict[str, str]] = {}
        self.snapshots: dict[str, bytes] = {}
        self.chats: dict[str, list[bytes]] = {}
        self.logs: dict[str, list[bytes]] = {}
        self.tokens: dict[str, dict[str, int]] = {}
        self.hosted: dict[str, set[str]] = {}
        self.gateways: set[str] = set()  # the gateway processes whose lease is live
        self.fail: Exception | None = None
        self.gate: asyncio.Event | None = None
        self.held = asyncio.Event()  # set once a persist is waiting at the gate
        self._changed = asyncio.Condition()
        self.inboxes: dict[str, asyncio.Queue] = {}
        self.replies: dict[str, list[bytes]] = {}  # gateway -> reply messages, in order
        self.tables = MemoryTableIndex()

    def _inbox(self, host: str) -> asyncio.Queue:
        return self.inboxes.setdefault(host, asyncio.Queue())

    def send_request(self, host: str, raw: bytes) -> None:
        """What a gateway's RPUSH does."""
        self._inbox(host).put_nowait(raw)

    async def take_requests(self, host: str, wait: float) -> list[bytes]:
        inbox = self._inbox(host)
        try:
            first = await asyncio.wait_for(inbox.get(), wait)
        except asyncio.TimeoutError:
            return []
        rest = []
        while not inbox.empty():
            rest.append(inbox.get_nowait())
        return [first, *rest]

    async def publish_stored(self, code: str, after_seq: int) -> None:
        """Nothing to do: a persist here is atomic, so nothing is stored unannounced."""

    async def reply(self, gateway: str, message: bytes) -> None:
        self.replies.setdefault(gateway, []).append(message)
        async with self._changed:
            self._changed.notify_all()

    async def claim(self, code: str, host: str) -> int:
        room = self.rooms.setdefault(code, {"epoch": "0"})
        room["epoch"] = str(int(room["epoch"]) + 1)
        room["host"] = host
        self.hosted.setdefault(host, set()).add(code)
        return int(room["epoch"])

    async def load(self, code: str) -> Stored | None:
        snapshot = self.snapshots.get(code)
        if snapshot is None:
            return None
        return Stored(snapshot, list(self.chats.get(code, ())),
                      self.logs.get(code, [])[snapshot_seq(snapshot):])

    async def status(self, code: str) -> dict[str, str]:
        return dict(self.rooms.get(code, {}))

    async def host_rooms(self, host: str) -> list[str]:
        return sorted(self.hosted.get(host, ()))

    async def release(self, host: str, code: str) -> None:
        self.hosted.get(host, set()).discard(code)

    async def live_gateways(self, ids: list[str]) -> set[str]:
        return self.gateways.intersection(ids)

    async def persist(self, code: str, *, epoch: int, host: str, snapshot: bytes | None,
                      status: str, first_seq: int, events: list[bytes], tokens: dict[str, int],
                      chat_from: int | None, chat: list[bytes], untokens: Sequence[str] = (),
                      riders: Sequence[tuple[Rider, Any]] = ()) -> None:
        if self.gate is not None:
            self.held.set()
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        room = self.rooms.get(code, {})
        log = self.logs.setdefault(code, [])
        if room.get("epoch") != str(epoch):
            raise StaleEpoch()
        if len(log) != first_seq - 1 or (chat_from is not None and chat
                                         and len(self.chats.get(code, ())) != chat_from):
            raise OutOfSync()
        self.chats[code] = self.chats.get(code, [])[:chat_from or 0] + list(chat)
        if snapshot is not None:
            self.snapshots[code] = snapshot
        room["status"] = status
        self.tokens.setdefault(code, {}).update(tokens)
        for token_hash in untokens:
            self.tokens[code].pop(token_hash, None)
        log.extend(events)
        if status in FINAL:
            self.hosted.get(host, set()).discard(code)
        by_gateway: dict[str, list] = {}
        for rider, reply in riders if events else ():  # as if on the room's channel
            by_gateway.setdefault(rider.gateway, []).append([rider.number, REPLY_OK, reply])
        for gateway, replies in by_gateway.items():
            self.replies.setdefault(gateway, []).append(reply_message(host, replies))
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until a persist makes `predicate()` true (the test's way to wait for an event)."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    def kinds(self, code: str) -> list[str]:
        """The event kinds stored for a room, in order."""
        return [orjson.loads(orjson.loads(raw)["frame"])["kind"] for raw in self.logs.get(code, ())]

