"""The capacity model's unit costs, measured on the machine this runs on (docs/capacity.md).

    .venv/bin/python -m loadtest.capacity --rooms 30 --out docs/capacity.json

One real stack: a private redis-server (append-only file, fsync every second, as `werewolf serve`
keeps; private so its INFO counts only us), a private Ray head, `--gateways` gateway processes
(loadtest.stack.real_stack). The client (asyncio sockets, devstack/stack.py's) runs in this process
and is not counted as the server. Each step is one kind of work done N times; what it cost is read
from the processes between its start and its end (CPU: user + system seconds of every gateway, game
host and Ray system process, and of the redis-server; Redis: INFO commandstats calls and usec, bytes
received; memory: USS, what only those processes hold), less what the stack spends idle over the
same time (the empty stack's, measured first; once the games run, theirs over a quiet stretch of
their day). Two groups of started games: A with all 18 seats and `--watchers` spectators connected,
B with only the 6 seats that chat, the same lines in both: per line, A pays the command and 18 +
watchers event frames, B the command and 6, which splits a command's cost from its fan-out's.

Then the model: rooms -> gateway processes, game-host cores and Redis shards, at `--headroom` of
each (by CPU and by memory), for 1k, 10k and 100k `human` rooms, at the `human` rates per room
measured by the ramp (`--commands-per-room`, `--frames-per-room`), with the limit that binds first.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import httpx

from devstack.redis_servers import redis_server
from devstack.stack import Client, connect, open_socket
from loadtest.measure import SERVER, Meter, gateway_sums
from loadtest.stack import real_stack, tear_down_on_signals

SEATS = 18
SENDERS = 6  # seats chatting per room; group B connects only these
LINE_GAP = 1.05  # seconds between two lines of a sender: the chat limit allows one a second
# Wolves and villagers only (no night step but the pack's), the night over at once, a long day:
# chat and votes happen in day.discussion, no mayor to elect.
PLAY = {"roles": [], "durations": {"wolves": 1, "discussion": 900, "vote": 120},
        "rules": {"mayor": "none"}}
# The `human` model's rates per room, as the ramp measured them at 1,000 rooms (loadtest/README.md,
# "The ramp after these changes"): 6,495 frames/s, ~650 acknowledged commands/s.
HUMAN_FRAMES_PER_ROOM = 6.5
HUMAN_COMMANDS_PER_ROOM = 0.65
# Published limits the model relies on (docs/capacity.md cites them).
RAY_ACTORS_ENVELOPE = 20_000  # Ray's scalability envelope: 20k+ actors, 3k+ nodes
RAY_NODES_ENVELOPE = 3_000


def progress(what: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


def per_unit(cost: dict, count: int) -> dict:
    """µs of CPU per unit by component (server = gateways + hosts + Ray's own), Redis calls, Redis
    CPU (commandstats µs) and bytes received per unit."""
    server = sum(cost.get(c, 0.0) for c in SERVER)
    return {"count": count,
            "server_us": 1e6 * server / count,
            **{f"{c}_us": 1e6 * cost.get(c, 0.0) / count for c in (*SERVER, "redis")},
            "redis_calls": cost["redis_calls"] / count,
            "redis_cmd_us": cost["redis_usec"] / count,
            "redis_bytes": cost["redis_bytes_in"] / count}


def gateway_counters(urls: list[str]) -> tuple[float, float]:
    """(room events read from Redis, event frames sent to sockets), summed over the gateways."""
    read, sent = gateway_sums(urls, "ww_redis_events_read_total ",
                              'ww_ws_messages_out_total{type="event"}')
    return read, sent


async def gather_limited(coros, limit: int = 16):
    gate = asyncio.Semaphore(limit)

    async def run(coro):
        async with gate:
            return await coro
    return await asyncio.gather(*(run(c) for c in coros))


async def until(predicate, timeout: float = 120.0) -> None:
    """Wait for a condition on frames the sockets' reader tasks are filling in."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the stack did not get there in time")
        await asyncio.sleep(0.05)  # the readers run meanwhile


def frames(clients: list[Client]) -> int:
    return sum(len(c.frames) for c in clients)


def kinds(client: Client, kind: str) -> int:
    return sum(f.get("kind") == kind for f in client.frames)


def phase_of(client: Client) -> str | None:
    return next((f["phase"] for f in reversed(client.frames) if f.get("kind") == "phase"), None)


def alive(clients: list[Client]) -> list[Client]:
    return [c for c in clients
            if not any(f.get("kind") == "death" and f.get("seat") == c.seat for f in c.frames)]


def replayed(client: Client) -> int:
    """Events this socket was sent from the log (those up to its welcome's seq)."""
    return sum(1 for f in client.events if f["seq"] <= client.welcome["seq"])


async def measure(args) -> dict:
    units: dict = {}
    memory: dict = {}
    with redis_server(appendfsync="everysec") as private:
        url = f"redis://127.0.0.1:{private.port}/0"
        with real_stack(args.gateways, games_per_actor=args.games_per_actor,
                        redis_url=url) as running:
            meter = Meter(running, private.port)
            urls = running.urls
            ws_urls = [u.replace("http", "ws", 1) for u in urls]
            async with httpx.AsyncClient(timeout=60) as http:
                async def create(i: int) -> dict:
                    r = await http.post(f"{urls[i % len(urls)]}/api/rooms", json={"name": "P0"})
                    r.raise_for_status()
                    return {"url": i % len(urls), "room": r.json()["room"], "seats": [r.json()]}

                async def join(table: dict, n: int) -> None:
                    r = await http.post(f"{urls[table['url']]}/api/rooms/{table['room']}/join",
                                        json={"name": f"P{n}"})
                    r.raise_for_status()
                    table["seats"].append(r.json())

                progress("stack up; the first room")
                await create(0)  # the first host process starts here, outside every step
                await asyncio.sleep(args.settle_seconds)  # and finishes starting
                await meter.learn_background(args.idle_seconds)
                rooms = 2 * args.rooms  # group A, then group B
                memory["empty"] = meter.memory()

                progress("creating rooms")
                before = meter.read()
                tables = await gather_limited(create(i) for i in range(rooms))
                units["create_room"] = per_unit(meter.cost(before, meter.read()), rooms)

                progress("joining")
                before = meter.read()
                await gather_limited(join(t, n) for t in tables for n in range(1, SEATS))
                units["join"] = per_unit(meter.cost(before, meter.read()), rooms * (SEATS - 1))

                progress("welcomes")
                group_a, group_b = tables[:args.rooms], tables[args.rooms:]
                before = meter.read()
                clients_a = await gather_limited(
                    connect(ws_urls[t["url"]], t["room"], s["token"]) for t in group_a
                    for s in t["seats"])
                clients_b = await gather_limited(
                    connect(ws_urls[t["url"]], t["room"], s["token"]) for t in group_b
                    for s in t["seats"][:SENDERS])
                sockets = len(clients_a) + len(clients_b)
                # A welcome's cost goes on after it: the seat's presence, a command of its own,
                # stored and sent to the table. Wait that out here, not in the idle step.
                await asyncio.sleep(args.settle_seconds)
                units["welcome"] = per_unit(meter.cost(before, meter.read()), sockets)
                memory["lobbies"] = meter.memory()

                before = meter.read()
                await asyncio.sleep(args.idle_seconds)
                idle = meter.cost(before, meter.read())
                units["idle_socket_second"] = per_unit(idle, int(sockets * idle["seconds"]))

                progress("idle done; watchers")
                # Spectators of group A: more frames per line, for a sharper split of a frame's
                # cost.
                async def watch(table: dict) -> Client:
                    client = await open_socket(ws_urls[table["url"]], table["room"])
                    await client.send({"type": "hello", "watch": True, "since": None})
                    client.welcome = await client.recv_until(lambda f: f.get("type") == "welcome")
                    return client
                watchers = await gather_limited(watch(t) for t in group_a
                                                for _ in range(args.watchers))
                seated = {t["room"]: clients_a[i * SEATS:(i + 1) * SEATS]
                          for i, t in enumerate(group_a)}
                hosts = [cs[0] for cs in seated.values()] + clients_b[::SENDERS]
                progress("starting games")
                for host in hosts:
                    assert (await host.request({"type": "settings", **PLAY}))["type"] == "ack"
                    assert (await host.request({"type": "start"}))["type"] == "ack"
                await until(lambda: all(phase_of(c) == "day.discussion" for c in hosts))
                progress("games in their day")
                memory["playing"] = meter.memory()
                # From here on the background to take off is the playing tables' own (timers,
                # pings), read over a quiet stretch of their day.
                await meter.learn_background(args.idle_seconds)

                async def chat(client: Client, lines: int, turn: int) -> None:
                    # A line a second per sender (the chat limit), the room's senders taking
                    # turns: at human pace a room's commands arrive one by one, each its own
                    # write (lines sent at once would share one, and its Redis calls).
                    await asyncio.sleep(turn * LINE_GAP / SENDERS)
                    for n in range(lines):
                        sent = time.monotonic()
                        reply = await client.request({"type": "chat", "text": f"line {n}"})
                        assert reply["type"] == "ack", reply
                        await asyncio.sleep(max(0.0, sent + LINE_GAP - time.monotonic()))

                # The same senders and lines in both groups: A's lines reach 18 sockets, B's 6.
                for label, senders, audience in (
                        ("chat_18", [c for cs in seated.values() for c in alive(cs)[:SENDERS]],
                         clients_a + watchers),
                        ("chat_6", list(clients_b), list(clients_b))):
                    lines = args.lines
                    expected = {id(c): kinds(c, "chat") for c in audience}
                    sent_by_room = len(senders) * lines
                    before = meter.read()
                    delivered_before = frames(audience)
                    read_before, sent_before = gateway_counters(urls)
                    await asyncio.gather(*(chat(c, lines, i % SENDERS)
                                           for i, c in enumerate(senders)))
                    per_watcher = lines * SENDERS
                    # (a watcher is never dead: alive() keeps it)
                    await until(lambda: all(kinds(c, "chat") - expected[id(c)] >= per_watcher
                                            for c in alive(audience)))
                    cost = meter.cost(before, meter.read())
                    units[label] = per_unit(cost, sent_by_room)
                    units[label]["frames_per_command"] = ((frames(audience) - delivered_before)
                                                          / sent_by_room)
                    read, sent = gateway_counters(urls)
                    units[label]["events_read_per_event_frame"] = ((read - read_before)
                                                                   / max(1.0, sent - sent_before))

                # Per delivered frame and per command without its fan-out, from the two groups.
                a, b = units["chat_18"], units["chat_6"]
                df = a["frames_per_command"] - b["frames_per_command"]
                units["frame"] = {k: (a[k] - b[k]) / df for k in a
                                  if k.endswith("_us") or k.startswith("redis_")}
                units["frame"]["count"] = int(df * a["count"])
                units["command_chat"] = {k: b[k] - units["frame"][k] * b["frames_per_command"]
                                         for k in units["frame"] if k != "count"}

                progress("chat done; vote round")
                # A vote round in group A: every living seat asks, then votes (fan-out included).
                before = meter.read()
                delivered_before = frames(clients_a)
                commands = 0
                for clients in seated.values():
                    living = alive(clients)
                    for c in living[:len(living) // 2 + 1]:  # a majority opens the vote
                        reply = await c.request({"type": "act", "action": "vote.request",
                                                 "targets": []})
                        commands += reply["type"] == "ack"
                await until(lambda: all(phase_of(cs[0]) == "day.vote" for cs in seated.values()))
                for clients in seated.values():
                    living = alive(clients)
                    for c in living:  # all on one seat, and that seat on another (not oneself)
                        target = living[-1 if c is not living[-1] else 0].seat
                        reply = await c.request({"type": "act", "action": "vote",
                                                 "targets": [target]})
                        commands += reply["type"] == "ack"
                await until(lambda: all(phase_of(cs[0]) != "day.vote" for cs in seated.values()))
                units["vote_round"] = per_unit(meter.cost(before, meter.read()), commands)
                units["vote_round"]["frames_per_command"] = ((frames(clients_a) - delivered_before)
                                                             / commands)

                progress("replays")
                # Replays: a second socket per seat of group A, from seq 0 (welcome included).
                before = meter.read()
                replays = await gather_limited(
                    connect(ws_urls[t["url"]], t["room"], s["token"], since=0)
                    for t in group_a for s in t["seats"])
                # answered after the socket's replay (a session reads on after it)
                for c in replays:
                    assert (await c.request({"type": "ping"}))["type"] == "ack"
                cost = meter.cost(before, meter.read())
                events_replayed = sum(map(replayed, replays))
                welcomes = {k: v * len(replays) for k, v in units["welcome"].items()
                            if k != "count"}
                units["replayed_event"] = {k: (per_unit(cost, 1)[k] - welcomes[k]) / events_replayed
                                           for k in welcomes}
                units["replayed_event"]["count"] = events_replayed
                for c in (*replays, *clients_a, *clients_b, *watchers):
                    await c.close()
    return {"units": units, "memory": memory, "rooms": args.rooms, "sockets": sockets,
            "idle_per_s": meter.idle_per_s}


def model(measured: dict, args) -> list[dict]:
    """Rooms -> processes: each gateway process and each host core loaded to `headroom` of a core
    (and a gateway process to `sockets_per_gateway` sockets), each Redis shard (one core: Redis
    runs commands on one thread) to `headroom` of its core."""
    u, m = measured["units"], measured["memory"]
    rooms_measured, sockets = measured["rooms"] * 2, measured["sockets"]
    idle_s = u["idle_socket_second"]
    frame, command = u["frame"], u["command_chat"]
    # CPU seconds per second per room at the human rates, by where it is spent.
    # A figure below zero is below the background's own variation: it counts as nothing.
    demand = {}
    for c in ("gateway", "ray-hosts", "redis"):
        demand[c] = 1e-6 * (SEATS * max(0.0, idle_s[f"{c}_us"])
                            + args.frames_per_room * max(0.0, frame[f"{c}_us"])
                            + args.commands_per_room * max(0.0, command[f"{c}_us"]))
    mb_socket = (m["lobbies"]["gateway"] - m["empty"]["gateway"]) / sockets
    mb_room_hosts = (m["playing"]["ray-hosts"] - m["empty"]["ray-hosts"]) / rooms_measured
    mb_room_redis = (m["playing"]["redis"] - m["empty"]["redis"]) / rooms_measured
    rows = []
    for rooms in (1_000, 10_000, 100_000):
        gw_cpu = rooms * demand["gateway"] / args.headroom
        gw_sockets = rooms * SEATS / args.sockets_per_gateway
        hosts = rooms * demand["ray-hosts"] / args.headroom
        shards_cpu = rooms * demand["redis"] / args.headroom
        host_actors = rooms / args.games_per_actor
        row = {"rooms": rooms,
               "gateway_processes": max(1, int(-(-max(gw_cpu, gw_sockets) // 1))),
               "gateway_bound": "CPU" if gw_cpu >= gw_sockets else "sockets per process",
               "host_cores": max(1, int(-(-hosts // 1))),
               "host_actors": int(-(-host_actors // 1)),
               "redis_shards": max(1, int(-(-shards_cpu // 1))),
               "redis_calls_per_s": rooms * (args.commands_per_room
                                             * max(0.0, command["redis_calls"])
                                             + SEATS * max(0.0, idle_s["redis_calls"])),
               "gateway_memory_gb": rooms * SEATS * mb_socket / 1024,
               "host_memory_gb": rooms * mb_room_hosts / 1024,
               "redis_memory_gb": rooms * mb_room_redis / 1024}
        nodes = row["gateway_processes"] + row["host_cores"]
        row["binds_first"] = max(
            (row["gateway_processes"] / max(1, nodes),
             "gateway CPU" if row["gateway_bound"] == "CPU"
             else "sockets per gateway process"),
            (row["host_cores"] / max(1, nodes), "game-host CPU"),
            (row["host_actors"] / RAY_ACTORS_ENVELOPE, "Ray actors (GCS)"),
            (row["redis_shards"] / max(1, nodes), "Redis shard CPU"))[1]
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rooms", type=int, default=30, help="rooms per group (A: 18 sockets, B: 6)")
    ap.add_argument("--gateways", type=int, default=1)
    ap.add_argument("--games-per-actor", type=int, default=200)
    ap.add_argument("--idle-seconds", type=float, default=20.0)
    ap.add_argument("--settle-seconds", type=float, default=10.0,
                    help="after the first room, before the empty stack's own cost is read")
    ap.add_argument("--lines", type=int, default=10, help="chat lines per sender")
    ap.add_argument("--watchers", type=int, default=30,
                    help="spectator sockets per room of group A")
    ap.add_argument("--headroom", type=float, default=0.5, help="share of a core a process may use")
    ap.add_argument("--sockets-per-gateway", type=int, default=20_000)
    ap.add_argument("--frames-per-room", type=float, default=HUMAN_FRAMES_PER_ROOM)
    ap.add_argument("--commands-per-room", type=float, default=HUMAN_COMMANDS_PER_ROOM)
    ap.add_argument("--out", help="write the measured units, memory and model as JSON here")
    args = ap.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    measured = asyncio.run(measure(args))
    rows = model(measured, args)
    print(render(measured, rows, args))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"measured": measured, "model": rows, "args": vars(args)}, f, indent=1)
    return 0


def render(measured: dict, rows: list[dict], args) -> str:
    u = measured["units"]
    lines = ["| unit | count | server µs (gateway / hosts / Ray) | Redis process µs | "
             "Redis calls | Redis command µs | bytes to Redis |", "|---|---|---|---|---|---|---|"]
    for name, x in u.items():
        lines.append(f"| {name} | {x.get('count', '')} | {x['server_us']:.0f} "
                     f"({x['gateway_us']:.0f} / {x['ray-hosts_us']:.0f} / "
                     f"{x['ray-system_us']:.0f}) | {x['redis_us']:.0f} | "
                     f"{x['redis_calls']:.2f} | {x['redis_cmd_us']:.0f} | "
                     f"{x['redis_bytes']:.0f} |")
    lines.append("")
    for name in ("chat_18", "chat_6", "vote_round"):
        x = u[name]
        lines.append(f"{name}: {x['frames_per_command']:.1f} frames delivered per command"
                     + (f", {x['events_read_per_event_frame']:.3f} events read from Redis "
                        "per event frame"
                        if "events_read_per_event_frame" in x else ""))
    m = measured["memory"]
    sockets, rooms = measured["sockets"], measured["rooms"] * 2
    lines += ["", "| memory | gateway | hosts | Ray | Redis |", "|---|---|---|---|---|"]
    for label, state in (("per socket (lobby), KB", "lobbies"), ("per room, lobby, KB", "lobbies"),
                         ("per room, playing, KB", "playing")):
        per = sockets if "socket" in label else rooms
        lines.append(f"| {label} | " + " | ".join(
            "(with the watchers)" if state == "playing" and c == "gateway" else
            f"{1024 * (m[state][c] - m['empty'][c]) / per:.0f}"
            for c in ("gateway", "ray-hosts", "ray-system", "redis")) + " |")
    lines += ["", f"Model: human rates {args.commands_per_room} commands/s and "
              f"{args.frames_per_room} frames/s per room, {SEATS} sockets; each process at "
              f"<= {args.headroom:.0%} of a core, "
              f"<= {args.sockets_per_gateway} sockets per gateway process.", "",
              "| rooms | gateway processes | game-host cores (actors) | Redis shards | "
              "Redis calls/s | memory GB gw / hosts / Redis | binds first |",
              "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rooms']:,} | {r['gateway_processes']} ({r['gateway_bound']}) | "
                     f"{r['host_cores']} ({r['host_actors']}) | {r['redis_shards']} | "
                     f"{r['redis_calls_per_s']:,.0f} | {r['gateway_memory_gb']:.1f} / "
                     f"{r['host_memory_gb']:.1f} / {r['redis_memory_gb']:.1f} | "
                     f"{r['binds_first']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
