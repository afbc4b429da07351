"""The list of public tables as the home page reads it (GET /api/tables): each kind's entries
read from the index (actors.tables) at most once a second per gateway process, however many
pages poll it, then filtered, ordered and paged here."""
from __future__ import annotations

import asyncio
import math
import time

from actors import Kind, RoomClient, kinds

FRESH_FOR = 1.0  # seconds a kind's entries are served from memory
PAGE_SIZE = 20


class PublicTables:
    def __init__(self, rooms: RoomClient) -> None:
        self._rooms = rooms
        self._read: dict[tuple[Kind, str], tuple[float, list[dict]]] = {}
        self._reading: dict[tuple[Kind, str], asyncio.Task] = {}

    async def page(self, state: str, preset: str | None, language: str | None,
                   page: int) -> dict:
        wanted = kinds(preset, language)
        found = [table for entries in await asyncio.gather(*(self._entries(k, state)
                                                             for k in wanted))
                 for table in entries]
        if state == "open":  # fullest first: the table about to start is the one to join
            found.sort(key=lambda t: (t["size"] - t["seats"], t["room"]))
        else:  # newest first
            found.sort(key=lambda t: -t["started"])
        pages = max(1, math.ceil(len(found) / PAGE_SIZE))
        page = min(page, pages)
        return {"tables": found[(page - 1) * PAGE_SIZE:page * PAGE_SIZE], "page": page,
                "pages": pages, "total": len(found)}

    async def _entries(self, kind: Kind, state: str) -> list[dict]:
        key = (kind, state)
        read = self._read.get(key)
        if read is not None and time.monotonic() - read[0] < FRESH_FOR:
            return read[1]
        task = self._reading.get(key)
        if task is None:  # one read for every page asking at once
            task = self._reading[key] = asyncio.create_task(self._fetch(key))
            task.add_done_callback(lambda _: self._reading.pop(key, None))
        return await asyncio.shield(task)

    async def _fetch(self, key: tuple[Kind, str]) -> list[dict]:
        entries = await self._rooms.public_tables(*key)
        self._read[key] = (time.monotonic(), entries)
        return entries
