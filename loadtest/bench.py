"""Measures the actor layer through `RoomClient` on a real Ray and Redis:

    python -m loadtest.bench --rooms 200 --games-per-actor 200 --commands 20

Prints room creation latency, command round trips (one at a time, then every room at once), the
host process's unique memory per room, and how long a killed host takes to serve again. Without
RAY_ADDRESS it starts a private Ray head (devstack/ray_head.py, run from the repository root).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import statistics
import time

import psutil
import ray

from actors.client import RoomClient
from actors.config import Config
from devstack.ray_head import ray_head

LONG = {name: 900 for name in ("cupid", "seer", "wolves", "witch", "election", "discussion", "vote",
                               "tiebreak", "hunter", "successor")}


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    print(f"{label:<44} n={len(ms):<6} p50={statistics.median(ms):7.2f} ms  p99={p99:7.2f} ms")


async def timed(coro) -> float:
    start = time.perf_counter()
    await coro
    return time.perf_counter() - start


async def started_room(rc: RoomClient) -> tuple[str, int]:
    """A running game whose phases stay put; returns it with a seat that may chat now."""
    room = (await rc.create_room("Host"))["room"]
    for i in range(1, 6):
        await rc.join(room, f"P{i}")
    await rc.command(room, 0, {"type": "start", "id": 0})
    for seat in range(6):
        if (await rc.welcome(room, seat))["view"]["channels"]:
            return room, seat
    raise RuntimeError("nobody may chat")


async def chat(rc: RoomClient, room: str, seat: int, n: int) -> None:
    reply = await rc.command(room, seat, {"type": "chat", "id": n, "text": f"line {n}"})
    assert reply["type"] == "ack", reply


async def bench(config: Config, rooms: int, commands: int) -> None:
    async with RoomClient(config) as rc:
        placement = ray.get_actor(f"{config.prefix}-placement", namespace=config.namespace)
        await placement.settled.remote()
        warm = []
        for i in range(10):
            warm.append(await timed(rc.create_room(f"W{i}")))
            await placement.settled.remote()  # the spare host is back before the next room
        summary("create_room, a spare host ready", warm)
        summary("create_room, back to back",
                [await timed(rc.create_room(f"B{i}")) for i in range(10)])

        tables = [await started_room(rc) for _ in range(rooms)]
        room, seat = tables[0]
        summary("chat, one at a time", [await timed(chat(rc, room, seat, n)) for n in range(200)])

        start = time.perf_counter()
        for n in range(commands):
            await asyncio.gather(*(chat(rc, r, s, 1000 + n) for r, s in tables))
        wall = time.perf_counter() - start
        print(f"chat, {rooms} rooms at once x {commands}: "
              f"{rooms * commands / wall:8.0f} commands/s")

        hosts = {}
        for r, _ in tables:
            stats = await rc.host_stats(r)
            hosts[stats["pid"]] = stats["rooms"]
        for pid, held in sorted(hosts.items()):
            uss = psutil.Process(pid).memory_full_info().uss / 2**20
            print(f"host pid {pid}: {held} rooms, unique memory {uss:.0f} MB")
        snapshot = await rc.redis.get(rc.keys.state(room))
        chat = await rc.redis.lrange(rc.keys.chat(room), 0, -1)
        print(f"a room after {200 + commands} chat commands: snapshot {len(snapshot)} bytes "
              "(rewritten by a write that changes more than the log and the chat), "
              f"chat list {len(chat)} lines {sum(map(len, chat))} bytes")

        pid = (await rc.host_stats(room))["pid"]
        os.kill(pid, signal.SIGKILL)
        start = time.perf_counter()
        await chat(rc, room, seat, 10**6)
        print(f"killed host ({len(tables)} rooms if shared): "
              f"first ack after {time.perf_counter() - start:.2f} s")

        names = [n.decode() for n in await rc.redis.zrange(rc.keys.hosts(), 0, -1)]
        for name in names + [f"{config.prefix}-placement"]:
            ray.kill(ray.get_actor(name, namespace=config.namespace))
        keys = [k async for k in rc.redis.scan_iter(match=f"{config.prefix}:*")]
        for i in range(0, len(keys), 500):
            await rc.redis.delete(*keys[i:i + 500])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--games-per-actor", type=int, default=200)
    parser.add_argument("--commands", type=int, default=20,
                        help="chat lines per room in the parallel run")
    args = parser.parse_args(argv)
    prefix = f"bench{secrets.token_hex(3)}"
    with contextlib.ExitStack() as stack:
        address = os.environ.get("RAY_ADDRESS")
        if not address:
            address = stack.enter_context(ray_head())
        config = Config.from_env(ray_address=address, prefix=prefix, namespace=prefix,
                                 games_per_actor=args.games_per_actor, durations=LONG)
        asyncio.run(bench(config, args.rooms, args.commands))


if __name__ == "__main__":
    main()
