"""What each Redis setup costs an acknowledgement, and what a failover loses without WAIT.

    .venv/bin/python -m loadtest.durability [--writes 2000] [--rooms 16] [--failover-seconds 6]

Latency: for each setup (no persistence; AOF fsync every second; AOF fsync always; a primary
with one replica and WAIT 1) a private redis-server (free port, temp dir; never the shared 6379)
takes the write a room makes before it acknowledges a command: `RedisStore.persist` (the epoch-
fenced Lua script with an 18-seat snapshot and one event, plus WAIT when asked), first one at a
time, then from `--rooms` rooms writing at once. The rest of an ack's path (inbox, reply channel,
socket) does not depend on the Redis setup.

Failover: a primary, a replica and three sentinels (devstack/redis_servers.py); `--rooms` rooms
persist as fast as they can, the primary is killed (SIGKILL), Sentinel promotes the replica, and
every write that `persist` returned (the room would have acknowledged it) is looked for in the
promoted server's logs. Run once without WAIT and once with WAIT 1: lost acknowledged writes, and
how long before the kill the lost ones were acknowledged (the loss window).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import time
from contextlib import ExitStack

import orjson

import rules
from actors.redis_connect import connect
from actors.store import RedisStore
from devstack.redis_servers import aof_args, redis_server, sentinel_group
from loadtest.measure import percentile
from loadtest.stack import tear_down_on_signals

SETUPS = {
    "none": ["--appendonly", "no"],
    "aof-everysec": aof_args("everysec"),
    "aof-always": aof_args("always"),
}


def snapshot() -> bytes:
    state, _ = rules.start_game(names=[f"P{i}" for i in range(18)],
                                settings=rules.Settings.from_json({}), seed=1, now=0)
    return orjson.dumps({"state": state.to_json()})


def event(write: int) -> bytes:
    """A stored chat event, unique per write so a lost one can be told from its replacement."""
    return orjson.dumps({"seq": 0, "to": None, "write": write, "frame": orjson.dumps(
        {"type": "event", "kind": "chat", "channel": "day", "seat": 3, "text": "x" * 40}).decode()})


class Writer:
    """One room writing group after group, as its mailbox does; remembers what was acknowledged."""

    def __init__(self, store: RedisStore, code: str, snap: bytes) -> None:
        self.store, self.code, self.snap = store, code, snap
        self.seq = 0
        self.writes = 0
        self.acked: list[tuple[bytes, float]] = []  # (event, when persist returned)

    async def setup(self) -> None:
        await self.store.redis.hset(self.store.keys.room(self.code), mapping={"epoch": 1})

    async def write(self) -> float:
        self.writes += 1
        stored = event(self.writes)
        started = time.perf_counter()
        await self.store.persist(self.code, epoch=1, host="bench", snapshot=self.snap,
                                 status="running", first_seq=self.seq + 1, events=[stored],
                                 tokens={},
                                 chat_from=0, chat=[])
        self.seq += 1
        self.acked.append((stored, time.time()))
        return time.perf_counter() - started


async def latencies(url: str, wait: int, writes: int, rooms: int) -> dict:
    redis = connect(url)
    store = RedisStore(redis, "bench", 3600, wait_replicas=wait)
    snap = snapshot()
    try:
        one = Writer(store, "SOLO", snap)
        await one.setup()
        alone = [await one.write() for _ in range(writes)]
        many = [Writer(store, f"R{i}", snap) for i in range(rooms)]
        for w in many:
            await w.setup()

        async def run(w: Writer) -> list[float]:
            return [await w.write() for _ in range(writes // rooms)]

        together = [t for ts in await asyncio.gather(*(run(w) for w in many)) for t in ts]
    finally:
        await redis.aclose()
    ms = lambda xs, q: percentile(sorted(xs), q) * 1000  # noqa: E731
    return {"alone_p50": ms(alone, 50), "alone_p99": ms(alone, 99),
            "together_p50": ms(together, 50), "together_p99": ms(together, 99)}


async def failover_loss(group, wait: int, rooms: int, seconds: float, lag: float) -> dict:
    redis = connect(group.url)
    store = RedisStore(redis, "bench", 3600, wait_replicas=wait)
    snap = snapshot()
    writers = [Writer(store, f"F{i}", snap) for i in range(rooms)]
    for w in writers:
        await w.setup()
    stop = asyncio.Event()

    async def run(w: Writer) -> None:
        while not stop.is_set():
            try:
                await w.write()
            except Exception:  # the outage; the room would answer `internal`, and reload
                await asyncio.sleep(0.05)
                stored = await _length(store, w.code)
                if stored is not None:
                    w.seq = stored

    tasks = [asyncio.create_task(run(w)) for w in writers]
    await asyncio.sleep(seconds / 2)  # a steady write load before the crash
    if lag:  # the replica falls behind (a network hiccup) just before the primary dies
        os.kill(group.replica.process.pid, signal.SIGSTOP)
        await asyncio.sleep(lag)
    killed_at = time.time()
    group.primary.kill()
    if lag:
        os.kill(group.replica.process.pid, signal.SIGCONT)
    await asyncio.to_thread(group.wait_promoted, group.primary.port)
    promoted = time.time()
    group.primary.start()  # its supervisor restarts it; it rejoins as a replica
    await asyncio.sleep(seconds / 2)
    stop.set()
    await asyncio.gather(*tasks)
    lost = []
    for w in writers:  # a writer resyncs to what is stored after a failure, as a room reloads
        log = set(await redis.lrange(store.keys.log(w.code), 0, -1))
        lost += [(stored, at) for stored, at in w.acked if stored not in log]
    await redis.aclose()
    window = (killed_at - min(at for _, at in lost)) * 1000 if lost else 0.0
    return {"acked_before_kill": sum(at <= killed_at for w in writers for _, at in w.acked),
            "lost": len(lost), "window_ms": window, "promotion_s": promoted - killed_at}


async def _length(store: RedisStore, code: str) -> int | None:
    try:
        return await store.redis.llen(store.keys.log(code))
    except Exception:
        return None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--rooms", type=int, default=16)
    parser.add_argument("--failover-seconds", type=float, default=6.0)
    parser.add_argument("--lags", default="0,0.5",
                        help="seconds the replica is stopped (behind) before the primary is killed")
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    print(f"persist of an 18-seat snapshot + 1 event, {args.writes} writes; ms")
    print(f"{'setup':<16}{'alone p50':>10}{'p99':>8}{f'{args.rooms} rooms p50':>16}{'p99':>8}")
    rows = []
    for name, extra in SETUPS.items():
        with redis_server(appendonly=False, extra=extra) as server:
            rows.append((name, asyncio.run(latencies(server.url, 0, args.writes, args.rooms))))
    with ExitStack() as stack:
        group = stack.enter_context(sentinel_group())
        rows.append(("replica+WAIT 1", asyncio.run(latencies(group.primary.url, 1, args.writes,
                                                             args.rooms))))
    for name, r in rows:
        print(f"{name:<16}{r['alone_p50']:>10.3f}{r['alone_p99']:>8.3f}{r['together_p50']:>16.3f}"
              f"{r['together_p99']:>8.3f}")
    print(f"\nSentinel failover (kill -9 the primary) under {args.rooms} rooms writing flat out:")
    for lag in (float(x) for x in args.lags.split(",")):
        for wait in (0, 1):
            with sentinel_group() as group:
                r = asyncio.run(failover_loss(group, wait, args.rooms, args.failover_seconds, lag))
            print(f"replica {lag:.1f} s behind, WAIT {wait}: {r['acked_before_kill']} writes "
                  "acknowledged before the kill, "
                  f"{r['lost']} of them lost (loss window {r['window_ms']:.0f} ms); "
                  f"replica promoted after {r['promotion_s']:.1f} s")


if __name__ == "__main__":
    main()
