"""What a welcome costs, the whole view against the bounded one, measured in one run:

    python -m loadtest.welcomecost --lines 2500 --repeat 200

A running 18-seat game whose day chat holds `--lines` lines of ~220 characters (the `readers`
probe's room, loadtest/abuse/readers.py). For a seat and for a spectator: building the view
(`rules.view` / `rules.public_view`), encoding it (the host's reply message, `actors.inbox`: the
replies of one loop turn go to a gateway in one message, so a large one holds the others) and
decoding it (the gateway), whole and with the last `actors.room_data.WELCOME_CHAT_LINES` lines of
each channel. Prints a markdown table: ms per welcome (the median of `--repeat`) and bytes.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import orjson

import rules
from actors.room_data import WELCOME_CHAT_LINES
from rules import DEFAULT_DURATIONS, Settings


def chatty_game(lines: int) -> rules.GameState:
    names = [f"p{i}" for i in range(18)]
    state, _ = rules.start_game(names, Settings(roles=[], durations=dict(DEFAULT_DURATIONS)),
                                seed=1, now=0)
    chat = [{"channel": "day", "seat": i % 18, "name": names[i % 18], "ts": i,
             "text": f"line {i} " + "la " * 70, "to": None} for i in range(lines)]
    return dataclasses.replace(state, chat=chat)


def median_ms(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(lines: int, repeat: int) -> list[dict]:
    state = chatty_game(lines)
    rows = []
    for who, build in (("seat", lambda bound: rules.view(state, 1, bound)),
                       ("spectator", lambda bound: rules.public_view(state, bound))):
        for how, bound in (("whole", None), (f"last {WELCOME_CHAT_LINES}", WELCOME_CHAT_LINES)):
            view = build(bound)
            encoded = orjson.dumps(view)
            rows.append({"who": who, "view": how, "bytes": len(encoded),
                         "build": median_ms(lambda: build(bound), repeat),
                         "encode": median_ms(lambda: orjson.dumps(view), repeat),
                         "decode": median_ms(lambda: orjson.loads(encoded), repeat)})
    return rows


def table(rows: list[dict]) -> list[str]:
    out = ["| socket | view | bytes | build ms | encode ms | decode ms | total ms |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        total = r["build"] + r["encode"] + r["decode"]
        out.append(f"| {r['who']} | {r['view']} | {r['bytes']:,} | {r['build']:.3f} | "
                   f"{r['encode']:.3f} | {r['decode']:.3f} | {total:.3f} |")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m loadtest.welcomecost",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=2500, help="day chat lines of the room")
    ap.add_argument("--repeat", type=int, default=200, help="timings of each step (the median)")
    args = ap.parse_args(argv)
    print("\n".join(table(measure(args.lines, args.repeat))))


if __name__ == "__main__":
    main()
