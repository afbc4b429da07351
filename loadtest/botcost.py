"""What a bot seat costs the server per game, against a human seat (issue 33).

Whole games of bots are played in this process, each room as a host runs it (`actors.room.Room`,
its bots in `actors.bot_seats`), on the in-memory store and a fake clock (no Redis, no Ray, no
waiting: the clock jumps to the next due time). Measured, per bot seat and game: the CPU of its
driver (feeding it its seat's frames, its decisions, their submission), the frames it was fed and
the commands it sent. Both kinds of seat cost the room the same for a command (the handler and
the persist); what a human seat costs besides is its socket's path through a gateway, which a
bot does not take: priced with the unit costs measured on the real stack (docs/capacity.md,
"Unit costs": the gateway's share of a command, of a delivered frame, of a welcome, of a socket
held for a second), for the same frames and commands.

    python -m loadtest.botcost --games 20 --players 8 12 18
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable

import orjson

import rules
from actors import bot_seats
from actors.clock import FakeClock
from actors.room import Room
from actors.memory_store import MemoryStore
from bots import bot as bot_module

# docs/capacity.md, "Unit costs" (loadtest.capacity, 2026-12-03): a gateway's CPU per ...
GATEWAY_COMMAND_US = 253  # command without its fan-out (its socket, its inbox push, its reply)
GATEWAY_FRAME_US = 37  # event frame delivered to a socket
GATEWAY_WELCOME_US = 2_565  # socket's hello, welcome and presence
GATEWAY_SOCKET_US_PER_S = 11  # socket held, per second


class Meter:
    """CPU seconds spent inside the wrapped functions (this thread's)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function: Callable) -> Callable:
        def measured(*args, **kwargs):
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - started
        return measured


async def _settle(room: Room) -> None:
    quiet = 0
    while quiet < 5:
        await asyncio.sleep(0)
        quiet = 0 if room.backlog or not room.bots.settled else quiet + 1


async def play(code: str, players: int, store: MemoryStore,
               clock: FakeClock) -> tuple[Room, int]:
    """One game of `players` bots (the host seats them, starts, and leaves: a bot plays its seat
    too); its length in ms of game time."""
    room = await Room.create(code, settings=rules.Settings.default(), host="h", store=store,
                             clock=clock)
    await room.join("Host", f"{code}-host")
    for _ in range(players - 1):
        await room.command(0, {"type": "add_bot"})
    await room.command(0, {"type": "start"})
    await room.command(0, {"type": "leave"})
    started = clock.now()
    await _settle(room)
    while room.data.status == "running":
        due = [t for t in (room._armed, room.bots.next_wake()) if t is not None]
        clock.advance(max(1, min(due, default=clock.now() + 1000) - clock.now()))
        await _settle(room)
    return room, clock.now() - started


async def measure(games: int, players: int) -> dict:
    meter = Meter()
    originals = (bot_seats.BotSeats.sync, bot_seats.BotSeats._send, bot_module.Bot.decide)
    bot_seats.BotSeats.sync = meter.wrap(originals[0])  # type: ignore[method-assign]
    bot_seats.BotSeats._send = meter.wrap(originals[1])  # type: ignore[method-assign]
    bot_module.Bot.decide = meter.wrap(originals[2])  # type: ignore[method-assign]
    store, clock = MemoryStore(), FakeClock()
    sent = refused = frames = 0
    lengths = []
    whole = time.process_time()
    try:
        for game in range(games):
            code = f"C{players:02d}{game:04d}"
            room, length = await play(code, players, store, clock)
            lengths.append(length)
            sent += room.bots.sent
            refused += len(room.bots.refused)
            for item in store.logs[code]:  # the frames its seats' sockets would get
                to = orjson.loads(item)["to"]
                frames += players if to is None else len(to)
    finally:
        (bot_seats.BotSeats.sync, bot_seats.BotSeats._send, bot_module.Bot.decide) = originals
    whole = time.process_time() - whole
    seat_games = games * players
    per_seat = {"frames": frames / seat_games, "commands": sent / seat_games,
                "game_s": statistics.mean(lengths) / 1000}
    bot_ms = meter.seconds / seat_games * 1000
    human_ms = (per_seat["commands"] * GATEWAY_COMMAND_US + per_seat["frames"] * GATEWAY_FRAME_US
                + GATEWAY_WELCOME_US + per_seat["game_s"] * GATEWAY_SOCKET_US_PER_S) / 1000
    return {"players": players, "games": games, "refused": refused, **per_seat,
            "bot_ms": bot_ms, "human_gateway_ms": human_ms,
            "room_ms": (whole - meter.seconds) / seat_games * 1000}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, nargs="+", default=[8, 12, 18])
    args = parser.parse_args(argv)
    print("| seats | games | refused | game length s | frames per seat | commands per seat "
          "| bot seat: driver CPU ms per game | human seat: gateway CPU ms per game (model) "
          "| both: room CPU ms per seat and game |")
    print("|---|---|---|---|---|---|---|---|---|")
    for players in args.players:
        r = asyncio.run(measure(args.games, players))
        print(f"| {r['players']} | {r['games']} | {r['refused']} | {r['game_s']:.0f} | "
              f"{r['frames']:.0f} | {r['commands']:.1f} | {r['bot_ms']:.2f} | "
              f"{r['human_gateway_ms']:.2f} | {r['room_ms']:.2f} |")


if __name__ == "__main__":
    main()
