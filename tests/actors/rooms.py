"""A test room's code, its seats taken in turn and what its MemoryStore logged; and events
written through a RedisStore to that room's log and channel, read back as a listener's queue
gets them."""
import asyncio

import orjson

from actors.room import Room
from actors.room_data import encode_event
from actors.memory_store import MemoryStore
from actors.subscriptions import Since

CODE = "ABCDEF"


async def seat(room: Room, count: int) -> None:
    for i in range(count):
        assert await room.join(f"Player{i}", f"hash{i}") == {"seat": i}


def stored(store: MemoryStore, code=CODE) -> list[dict]:
    return [orjson.loads(raw) for raw in store.logs.get(code, [])]


def frames(store: MemoryStore, code=CODE) -> list[dict]:
    return [orjson.loads(event["frame"]) for event in stored(store, code)]


async def write(rstore, first_seq: int, count: int) -> None:
    events = [encode_event(first_seq + i, {"kind": "chat", "to": None, "n": i})
              for i in range(count)]
    await rstore.persist(CODE, epoch=1, host="h1", snapshot=b"{}", status="lobby",
                         first_seq=first_seq, chat_from=0, chat=[], events=events, tokens={})


async def take(queue: asyncio.Queue, count: int) -> list[int]:
    """The seqs of the next `count` events (a queue's `Since` mark is not one)."""
    seqs = []
    while len(seqs) < count:
        item = await asyncio.wait_for(queue.get(), 5)
        if not isinstance(item, Since):
            seqs.append(item["seq"])
    return seqs
