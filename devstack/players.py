"""Bot players that know no rules: they answer prompts with random legal-looking choices.

A `Bot` watches its socket: every `prompt` event (and every prompt still open in a `welcome`'s
view) is answered with between `min` and `max` random seats out of `choices`. A sleepy bot never
answers, so the phases waiting on it end only by their deadline (the timers must fire).
"""
from __future__ import annotations

import asyncio
import random

from devstack.stack import Client, connect, create_room, join_room, open_socket

NAMES = ["Layla", "Omar", "Ines", "Tariq", "Maya", "Bruno", "Sofia", "Yuki", "Amara", "Lars",
         "Chen", "Nadia", "Pablo", "Zoe", "Ravi", "Elif", "Kofi", "Hana"]
GAME_TIMEOUT = 240.0  # a whole game with 2 s phases; a hang fails instead of blocking the suite


async def seat_table(url: str, players: int, **create) -> tuple[str, list[dict]]:
    """Create a room (`create`: create_room's options) and seat `players` (the first is the
    host); return (room, seats)."""
    host = await create_room(url, NAMES[0], **create)
    seats = [host] + [await join_room(url, host["room"], name) for name in NAMES[1:players]]
    return host["room"], seats


class Bot:
    def __init__(self, client: Client, rng: random.Random, *, sleepy: bool = False,
                 chatty: bool = True) -> None:
        self.client = client
        self.rng = rng
        self.sleepy = sleepy
        self.chatty = chatty
        self._ids = 0

    async def answer(self, prompt: dict) -> None:
        if self.sleepy:
            return
        choices = prompt["choices"]
        k = self.rng.randint(prompt["min"], min(prompt["max"], len(choices)))
        await self._send({"type": "act", "action": prompt["action"],
                          "targets": self.rng.sample(choices, k)})
        if self.chatty and self.rng.random() < 0.3:
            # Unique text: an acknowledged line can be found in the log (tests count lost acks).
            await self._send({"type": "chat",
                              "text": f"seat {self.client.seat} thinks ({self._ids + 1})"})

    async def _send(self, frame: dict) -> None:
        self._ids += 1
        await self.client.send({**frame, "id": f"s{self.client.seat}-{self._ids}"})

    async def play(self, until=lambda frame: frame.get("kind") == "game_over") -> dict:
        """Answer prompts until a frame matches `until` (default: game_over); return that frame."""
        for prompt in (self.client.welcome or {}).get("view", {}).get("prompts") or []:
            await self.answer(prompt)
        while True:
            frame = await self.client.recv_until(lambda f: True, timeout=GAME_TIMEOUT)
            if until(frame):
                return frame
            if frame.get("kind") == "prompt":
                await self.answer(frame)


def is_phase(frame: dict) -> bool:
    return frame.get("kind") == "phase"


def acked_acts(client: Client) -> list[dict]:
    """The act frames this client sent that the room has acknowledged so far."""
    acked = {f["id"] for f in client.frames if f.get("type") == "ack"}
    return [f for f in client.sent if f["type"] == "act" and f.get("id") in acked]


def in_day(day: int):
    """Matches the phase event that opens day `day` (night `day` comes before it)."""
    return lambda f: (f.get("kind") == "phase" and f["phase"].startswith("day.")
                      and f["day"] == day)


async def watch(ws_url: str, room: str, since: int | None = None) -> Client:
    """A spectator's socket (no token); its `welcome` is the welcome, or the error refusing it."""
    client = await open_socket(ws_url, room)
    await client.send({"type": "hello", "watch": True, "since": since})
    client.welcome = await client.recv_until(lambda f: f.get("type") in ("welcome", "error"))
    return client


async def connect_all(ws_url: str, room: str, seats: list[dict]) -> list[Client]:
    return list(await asyncio.gather(*(connect(ws_url, room, s["token"]) for s in seats)))


async def start(host: Client) -> None:
    reply = await host.request({"type": "start"})
    assert reply["type"] == "ack", reply
