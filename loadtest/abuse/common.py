"""What the abuse probes share: the stack's settings, the probe's target, clients the gateway tells
apart by address, tables and rooms made for a probe, and the rooms several probes use (`Shared`)."""
from __future__ import annotations

import argparse
import asyncio
import itertools
import secrets
import time
from dataclasses import dataclass

import httpx

from actors.client import CODE_ALPHABET, RoomClient
from actors.config import Config
from devstack.stack import HTTP_TIMEOUT
from loadtest.measure import Pinger, total_cpu_seconds, total_rss_mb
from loadtest.stack import Running

# Night and the election pass in a second each; the day's discussion lasts (the chat is by day).
DURATIONS = {"cupid": 1, "seer": 1, "wolves": 1, "witch": 1, "election": 1, "discussion": 900,
             "vote": 900, "tiebreak": 1, "hunter": 1, "successor": 1}
SEATS = 18
GAMES_PER_ACTOR = 50
PING_SOCKETS = 5  # seats of another room pinging (each at most 2 a second: the gateway's limit)
METRICS_TOKEN = "abuse-probe"  # the stack's WW_METRICS_TOKEN
ADMIN_SECRET = "abuse-operator"  # the stack's WW_ADMIN_SECRET (the reports probe reads them)
# Clients of the suite's probes, told apart by X-Forwarded-For (198.18.0.0/15: never a real one).
_addresses = (f"198.18.{i // 250}.{i % 250 + 1}" for i in itertools.count())


def next_address() -> str:
    """A client address no probe has used yet."""
    return next(_addresses)


@dataclass
class Target:
    """What a probe runs against: the suite's arguments, the stack (its gateway's URL and port),
    a client of its rooms, the quiet seats' pinger, the stack's settings, the shared rooms."""

    args: argparse.Namespace
    stack: Running
    url: str
    port: int
    rc: RoomClient
    pinger: Pinger
    config: Config
    shared: Shared


def rss_mb(stack) -> float:
    """The gateway's process tree's RSS, MB."""
    return total_rss_mb(stack.component("gateway"))


def cpu_s(stack, component: str = "gateway") -> float:
    """CPU seconds a component's processes have spent so far."""
    return total_cpu_seconds(stack.component(component))


async def metric(url: str, name: str, labels: str | None = None) -> float:
    """A gateway counter (with `labels`, e.g. 'type="chat"': that series only), its token sent."""
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT,
                                 headers={"Authorization": f"Bearer {METRICS_TOKEN}"}) as http:
        text = (await http.get(url + "/metrics")).text
    series = name + (" " if labels is None else "{" + labels + "} ")
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(series))


async def table(url: str, seats: int, address: str) -> list[dict]:
    async with httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT,
                                 headers={"X-Forwarded-For": address}) as http:
        host = (await http.post("/api/rooms", json={"name": "Host"})).json()
        return [host] + [(await http.post(f"/api/rooms/{host['room']}/join",
                                          json={"name": f"P{i}"})).json() for i in range(1, seats)]


async def day_room(url: str, rc: RoomClient, address: str) -> tuple[list[dict], list[int]]:
    """An 18-seat game in its first day's discussion; the living seats."""
    seats = await table(url, SEATS, address)
    room = seats[0]["room"]
    reply = await rc.command(room, 0, {"type": "start", "id": "start"})
    assert reply["type"] == "ack", reply
    deadline = time.monotonic() + 300
    while (await rc.welcome(room, 0))["view"]["phase"] != "day.discussion":
        if time.monotonic() > deadline:
            raise TimeoutError("no day.discussion")
        await asyncio.sleep(0.5)  # polling the room's phase while its night passes
    living = [s for s in range(SEATS)
              if (await rc.welcome(room, s))["view"]["channels"] == ["day"]]
    return seats, living


def client(url: str, address: str | None = None, **kwargs) -> httpx.AsyncClient:
    """An HTTP client the gateway sees as `address` (a fresh one by default)."""
    return httpx.AsyncClient(base_url=url, timeout=HTTP_TIMEOUT,
                             headers={"X-Forwarded-For": address or next_address()}, **kwargs)


def unknown_code() -> str:
    """A guess at a room code (31^6 of them: a guess that hits a room is not to be expected)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(6))


def counted(values) -> str:
    """[404, 404, 429] -> "2 x 404, 1 x 429", in order of first appearance."""
    values = list(values)
    return ", ".join(f"{values.count(v)} x {v}" for v in dict.fromkeys(values))


async def room_status(url: str, room: str) -> str:
    async with client(url) as http:
        return (await http.get(f"/api/rooms/{room}")).json()["status"]


async def until_finished(url: str, room: str, since: float, patience: float) -> float:
    """Seconds from `since` until the room's lobby facts say `finished`."""
    while await room_status(url, room) != "finished":
        if time.monotonic() - since > patience:
            raise TimeoutError(f"room {room} still open after {patience:.0f} s")
        await asyncio.sleep(0.25)  # polling the room's status for its close
    return time.monotonic() - since


class Shared:
    """What several probes use, made once when first asked for: a day room (18 seats in their
    first day's discussion, for the chat) and a finished table (6 seats; its lobby closes at its
    maximum age, so its host may play again; `review_events` presence changes are written
    through the room meanwhile, for a long review)."""

    def __init__(self, url: str, rc: RoomClient, max_age: int, review_events: int) -> None:
        self.url, self.rc, self.max_age, self.review_events = url, rc, max_age, review_events
        self._day: asyncio.Future | None = None
        self._finished: asyncio.Future | None = None

    def day(self) -> asyncio.Future:
        if self._day is None:
            self._day = asyncio.ensure_future(day_room(self.url, self.rc, next_address()))
        return self._day

    def finished(self) -> asyncio.Future:
        if self._finished is None:
            self._finished = asyncio.ensure_future(self._finished_table())
        return self._finished

    async def _finished_table(self) -> dict:
        seats = await table(self.url, 6, next_address())
        room, made = seats[0]["room"], time.monotonic()
        written = 0
        while written < self.review_events and await room_status(self.url, room) == "lobby":
            batch = min(200, self.review_events - written)  # each one a change: connected, gone...
            await asyncio.gather(*(self.rc.presence(room, 1, (written + i) % 2 == 0)
                                   for i in range(batch)))
            written += batch
        closed = await until_finished(self.url, room, made, self.max_age + 120)
        return {"seats": seats, "room": room, "closed_after": closed, "presence_written": written}

    def pending(self) -> list[asyncio.Future]:
        """The shared rooms still being made (a probe waiting on one waits on these)."""
        return [task for task in (self._day, self._finished)
                if task is not None and not task.done()]

    async def close(self) -> None:
        for task in (self._day, self._finished):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
