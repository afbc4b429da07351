"""What one request to a host costs the caller, by transport, measured in one run:

    python -m loadtest.callcost --requests 2000

- a Ray async actor call carrying one request (the transport commands used before), and one
  carrying 16 (a batch);
- a request through a Redis inbox with its reply on a pub/sub channel (what `RoomClient` does),
  one at a time and 16 at once;
- a host's write (a PUBLISH) as its own redis-py call, and through `actors.store.Coalescer`
  (the writes issued in one loop turn in one pipeline), 8 at once.
Prints wall time and the caller process's CPU per request. Starts a private Ray head
(devstack/ray_head.py; run from the repository root) and uses REDIS_URL (default 127.0.0.1:6379)
under a random key prefix.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import secrets
import time

import orjson
import ray
import redis.asyncio as aioredis

from actors.store import Coalescer
from devstack.ray_head import ray_head


@ray.remote(num_cpus=0)
class Echo:
    async def batch(self, requests: list) -> list:
        return requests


async def inbox_host(redis: aioredis.Redis, inbox: str, replies: str) -> None:
    """A host that answers every request of its inbox (the shape of RoomHost.serve_inbox)."""
    while True:
        first = await redis.blpop([inbox], timeout=1)
        if first is None:
            continue
        raws = [first[1], *(await redis.lpop(inbox, 511) or [])]
        answers = [[orjson.loads(raw)[1], 0, None] for raw in raws]
        await redis.publish(replies, orjson.dumps({"replies": answers}))


def run_inbox_host(redis_url: str, inbox: str, replies: str) -> None:
    asyncio.run(inbox_host(aioredis.from_url(redis_url), inbox, replies))


async def measure(label: str, requests: int, together: int, send) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(requests // together):
        await asyncio.gather(*(send() for _ in range(together)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"| {label} | {together} | {1e6 * wall / requests:.0f} | {1e6 * cpu / requests:.0f} |",
          flush=True)


async def measure_all(address: str, requests: int, redis_url: str) -> None:
    ray.init(address=address, log_to_driver=False)
    echo = Echo.remote()  # type: ignore[attr-defined]  # made by @ray.remote
    await echo.batch.remote([0])
    prefix = f"cc{secrets.token_hex(4)}"
    redis = aioredis.from_url(redis_url)
    inbox, channel = f"{prefix}:inbox", f"{prefix}:replies"
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel)
    waiting: dict[int, asyncio.Future] = {}
    numbers = itertools.count()

    async def read_replies() -> None:
        async for message in pubsub.listen():
            if message["type"] == "message":
                for number, _, value in orjson.loads(message["data"])["replies"]:
                    waiting.pop(number).set_result(value)

    host = multiprocessing.Process(target=run_inbox_host, args=(redis_url, inbox, channel),
                                   daemon=True)  # its own process, as the Ray actor is
    host.start()
    reader = asyncio.create_task(read_replies())

    async def through_inbox():
        number = next(numbers)
        future = waiting[number] = asyncio.get_running_loop().create_future()
        await redis.rpush(inbox, orjson.dumps(["gw", number, "command", "ROOM", 0, [{}, None]]))
        return await future

    async def ray_call():
        return await echo.batch.remote([("command", "ROOM", 0, [{}, None])])

    print("| transport | requests in flight | wall µs per request | caller CPU µs per request |\n"
          "|---|---|---|---|")
    for together in (1, 16):
        await measure("Ray actor call, one request per call", requests, together, ray_call)
        await measure("Redis inbox + reply channel", requests, together, through_inbox)
    batch: list[tuple] = [("command", "ROOM", 0, [{}, None])] * 16

    async def ray_batch():
        return await echo.batch.remote(batch)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(requests // 16):
        await ray_batch()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"| Ray actor call carrying 16 requests | 16 per call | {1e6 * wall / requests:.0f} | "
          f"{1e6 * cpu / requests:.0f} |")
    writes = Coalescer(redis)
    sink = f"{prefix}:sink"

    async def own_call():
        return await redis.publish(sink, b"reply")

    async def coalesced():
        return await writes.submit(sink, lambda pipe: pipe.publish(sink, b"reply"))
    await measure("a host's write, its own redis-py call", requests, 8, own_call)
    await measure("a host's write, coalesced (one pipeline per loop turn)", requests, 8, coalesced)
    host.kill()
    reader.cancel()
    await redis.delete(inbox)
    await redis.aclose()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args(argv)
    with ray_head() as ray_address:
        asyncio.run(measure_all(ray_address, args.requests,
                                os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")))


if __name__ == "__main__":
    main()
