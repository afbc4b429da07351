"""Issue 33's first target: one person presses "Play now" on an empty server and is in a started
game (bots filling the table) within ~30 s. A private stack (a Ray head, one gateway, the shared
Redis under a prefix of its own) with the default countdown (`WW_PUBLIC_COUNTDOWN`, 30 s); each
press arrives alone, after the previous one's game started, so each opens a table of its own.

    python -m loadtest.lonepress --presses 3
"""
from __future__ import annotations

import argparse
import asyncio
import secrets
import time

import httpx

from devstack.ray_head import ray_head
from devstack.stack import HTTP_TIMEOUT, Gateway, Stack, connect


async def press_alone(gateway: Gateway, name: str) -> tuple[float, float, int]:
    """Seconds from the press to its seat and to its game's deal; the seats dealt."""
    async with httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT) as http:
        pressed = time.monotonic()
        response = await http.post("/api/quickplay", json={"name": name, "preset": "seed_000",
                                                           "language": "en"})
        response.raise_for_status()
        seat = response.json()
        seated = time.monotonic() - pressed
        client = await connect(gateway.ws_url, seat["room"], seat["token"])
        try:
            started = await client.wait_for(lambda f: f.get("kind") == "game_started",
                                            timeout=120)
        finally:
            await client.close()
        return seated, time.monotonic() - pressed, len(started["seats"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=3)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args(argv)
    with ray_head() as address:
        stack = Stack(ray_address=address, redis_url=args.redis,
                      prefix="t" + secrets.token_hex(5))
        try:
            gateway = stack.start_gateway(games_per_actor=10)
            print("| press | pressed -> seated s | pressed -> game started s | seats dealt |")
            print("|---|---|---|---|")
            for n in range(args.presses):
                seated, started, seats = asyncio.run(press_alone(gateway, f"Lone{n}"))
                print(f"| {n + 1} | {seated:.2f} | {started:.2f} | {seats} |", flush=True)
        finally:
            stack.close()


if __name__ == "__main__":
    main()
