"""names: look-alikes of a seated "Omar" (variation selectors, joiners) and blank names; chat
lines that show nothing, reorder the line, drive a terminal or pile up marks."""
from __future__ import annotations

import time

from devstack.stack import connect
from loadtest.abuse.common import Target, client, counted


SHARED = ("day",)  # its chat lines are written in the shared day room
LOOK_ALIKES = {"U+034F": "Omar\u034f", "U+FE00": "Omar\ufe00", "U+FE0F": "Omar\ufe0f",
               "U+180B": "Omar\u180b", "U+E0100": "Omar\U000e0100", "U+17B5": "Omar\u17b5"}
BLANK_NAMES = {"U+3164": "\u3164", "U+FFA0": "\uffa0", "U+115F": "\u115f"}
BAD_LINES = {"invisible only": "\u200b\u2060\u200b\u00ad",
             "a bidi override": "look at \u202egnp.exe",
             "terminal escapes": "\x1b]0;owned\x07\x1b[2J\x1b[31mred",
             "499 combining marks": "a" + "\u0301" * 499}


async def run(t: Target) -> list[dict]:
    url, pinger, shared = t.url, t.pinger, t.shared
    t0 = time.monotonic()
    async with client(url) as http:
        host = (await http.post("/api/rooms", json={"name": "Layla"})).json()
        join = f"/api/rooms/{host['room']}/join"
        first = (await http.post(join, json={"name": "Omar"})).status_code
        looks = {label: await http.post(join, json={"name": name})
                 for label, name in LOOK_ALIKES.items()}
        blanks = {label: (await http.post(join, json={"name": name})).status_code
                  for label, name in BLANK_NAMES.items()}
        players = (await http.get(f"/api/rooms/{host['room']}")).json()["players"]
    took = time.monotonic() - t0
    by_answer: dict[str, list[str]] = {}
    for label, answer in looks.items():
        code = answer.json()["detail"]["code"] if answer.status_code == 409 else ""
        by_answer.setdefault(f"{answer.status_code} {code}".strip(), []).append(label)
    seated = len(players) - 1  # the host aside
    rows = [{"probe": f'"Omar" joins, then "Omar" + each of {", ".join(LOOK_ALIKES)}; blank '
                      f'names {", ".join(BLANK_NAMES)}',
             "result": f"Omar {first}; {seated} seated of {1 + len(LOOK_ALIKES)} Omars ("
                       + "; ".join(f"{k}: {', '.join(v)}" for k, v in by_answer.items())
                       + f"); blank names: {counted(blanks.values())}",
             "time": f"{took:.2f} s", "rss": "-", "ping": pinger.p99(t0),
             "facts": {"first": first, "seated": seated, "names": [p["name"] for p in players],
                       "look_alikes": {k: v.status_code for k, v in looks.items()},
                       "blanks": blanks}}]

    seats, living = await shared.day()
    room, ws_url = seats[0]["room"], url.replace("http", "ws")
    writers = [await connect(ws_url, room, seats[s]["token"]) for s in living[:len(BAD_LINES) + 1]]
    t1 = time.monotonic()
    replies = {label: await w.request({"type": "chat", "text": text})
               for w, (label, text) in zip(writers, BAD_LINES.items())}
    plain = await writers[-1].request({"type": "chat", "text": "a plain line"})
    took = time.monotonic() - t1
    for w in writers:
        await w.close()
    refused = {k: r.get("code") for k, r in replies.items() if r["type"] == "error"}
    rows.append({"probe": "chat lines: " + ", ".join(BAD_LINES) + " (each from a seat of its own)",
                 "result": f"{len(refused)}/{len(BAD_LINES)} refused ({counted(refused.values())})"
                           f"; a plain line: {plain['type']}",
                 "time": f"{took * 1000:.0f} ms", "rss": "-", "ping": pinger.p99(t1),
                 "facts": {"replies": {k: [r["type"], r.get("code")] for k, r in replies.items()},
                           "plain": plain["type"]}})
    return rows
