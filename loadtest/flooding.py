"""Flooders (issue 34): sockets sending `settings` frames, which their rooms refuse them, as fast
as the gateway takes them, from a process of their own so that the flood does not slow the
measuring process. Shared by `loadtest.flood` (the flood measured alone) and the abuse suite's
`flooders` probe (the flood beside an honest load)."""
from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections import Counter

import orjson

from devstack.stack import connect

FLOODERS_PER_ROOM = 12  # guests of each flooding lobby (its host stays away)
YIELD_EVERY = 20  # frames a flooder sends before letting the others send


def flood_process(ws_url: str, targets: list[tuple[str, str]], seconds: float, reconnect: bool,
                  ready, go, results) -> None:
    """The flooders' process: connect every socket, say ready, wait for go, flood `seconds`."""
    results.put(asyncio.run(_flood(ws_url, targets, seconds, reconnect, ready, go)))


async def _flood(ws_url: str, targets: list[tuple[str, str]], seconds: float, reconnect: bool,
                 ready, go) -> dict:
    stats: dict = {"sent": 0, "sockets": 0, "closes": Counter(), "connect_failures": 0}
    live = {i: await connect(ws_url, room, token) for i, (room, token) in enumerate(targets)}
    ready.set()
    await asyncio.get_running_loop().run_in_executor(None, go.wait)
    until = time.monotonic() + seconds

    async def one(index: int) -> None:
        room, token = targets[index]
        while time.monotonic() < until:
            sock = live.get(index)
            if sock is None:
                try:
                    sock = live[index] = await connect(ws_url, room, token)
                except Exception:  # noqa: BLE001  refused or timed out: counted, tried again
                    stats["connect_failures"] += 1
                    await asyncio.sleep(0.1)
                    continue
            stats["sockets"] += 1
            try:
                while not sock._reader.done():
                    await sock.ws.send(orjson.dumps({"type": "settings", "id": stats["sent"],
                                                     "durations": {"vote": 31}}).decode())
                    stats["sent"] += 1
                    if stats["sent"] % YIELD_EVERY == 0:
                        await asyncio.sleep(0)
            except Exception:  # noqa: BLE001  the gateway closed it mid-send
                pass
            await asyncio.gather(sock._reader, return_exceptions=True)
            stats["closes"][str(sock.ws.close_code)] += 1
            del live[index]
            if not reconnect:
                return

    tasks = [asyncio.create_task(one(i)) for i in live]
    await asyncio.wait(tasks, timeout=seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for sock in live.values():  # dropped, not closed: a close would wait behind the flood
        sock.ws.transport.abort()
    stats["closes"] = dict(stats["closes"])
    stats["open_at_end"] = len(live)
    return stats


async def flood_window(stack, url: str, targets: list[tuple[str, str]], seconds: float,
                       reconnect: bool) -> tuple[float, float, dict]:
    """Run the flood in its own process; (its start, its end, the flooders' stats)."""
    spawn = multiprocessing.get_context("spawn")
    ready, go, results = spawn.Event(), spawn.Event(), spawn.Queue()
    process = spawn.Process(target=flood_process, args=(
        url.replace("http", "ws"), targets, seconds, reconnect, ready, go, results))
    process.start()
    try:
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, ready.wait, 120):
            raise TimeoutError("the flooders did not connect")
        await asyncio.sleep(2)  # their welcomes are not the flood
        started = time.monotonic()
        go.set()
        stats = await loop.run_in_executor(None, results.get, True, seconds + 120)
        return started, time.monotonic(), stats
    finally:  # not blocking the pingers' loop meanwhile
        await asyncio.get_running_loop().run_in_executor(None, process.join, 10)
        if process.is_alive():
            process.kill()
