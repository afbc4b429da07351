"""Server memory and CPU per idle 18-seat room (issue 8's memory target, issue 20's idle-CPU
target): tables seated and left alone in their lobby (18 joined over HTTP, 18 sockets welcomed and
kept open, nobody starting), the stack's memory read before the first table and after each step, and
its CPU over `--window` seconds of the empty stack and of each step once settled.

    .venv/bin/python -m loadtest.idle --steps 1000,2000 --gateways 4

Each step prints, per component, the memory added since the empty stack (USS: what only those
processes hold; gateways, Ray hosts, Ray's own processes) and the memory of the prefix's Redis keys
(`MEMORY USAGE`; the Redis process is shared), per room and, for the gateways, per socket; from the
second step on, also per room added since the step before (without the host processes started for
the first rooms). The sockets are held by `--clients` processes of gevent greenlets (`--seat` is
that child's mode): not counted as the server.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# Nothing here imports ssl, sockets or threads at the top: the `--seat` child monkey-patches them
# with gevent before it imports anything that uses them. The parent imports the rest in `main`.

SEATS = 18
SERVER = ("gateway", "ray-hosts", "ray-system", "redis")  # Redis: the whole process, shared


def seat_tables(urls: list[str], tag: str) -> None:
    """Child mode: for each line "N" on stdin, seat N more tables (round robin over `urls`) and
    answer with a JSON line {"sockets": welcomed so far, "failed": tables that could not sit}.
    Its open-file limit is the parent's, raised by `real_stack`."""
    from gevent import monkey

    monkey.patch_all()
    import gevent
    import orjson
    from gevent.pool import Pool
    from geventhttpclient import HTTPClient, URL

    from loadtest.wire import LightSocket

    clients = {url: HTTPClient.from_url(URL(url), concurrency=20, network_timeout=60)
               for url in urls}
    held, failed = [], [0]

    def post(url: str, path: str, body: dict) -> dict:
        response = clients[url].post(path, orjson.dumps(body),
                                     headers={"Content-Type": "application/json"})
        data = response.read()
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{path}: {response.status_code} {data[:200]!r}")
        return orjson.loads(data)

    def keep(ws: LightSocket) -> None:
        try:
            while True:
                ws.recv()  # answers the server's pings; an idle lobby sends little else
        except Exception:  # noqa: BLE001 - the stack stopped
            pass

    def table(index: int) -> None:
        url = urls[index % len(urls)]
        name = f"I{tag}x{index}"
        try:
            seats = [post(url, "/api/rooms", {"name": f"{name}s0"})]
            room = seats[0]["room"]
            seats += [post(url, f"/api/rooms/{room}/join", {"name": f"{name}s{i}"})
                      for i in range(1, SEATS)]
            ws_url = url.replace("http://", "ws://") + f"/ws/{room}"
            for seat in seats:
                ws = LightSocket(ws_url, timeout=60)
                ws.send(orjson.dumps({"type": "hello", "token": seat["token"],
                                      "since": None}).decode())
                if orjson.loads(ws.recv()).get("type") != "welcome":
                    raise RuntimeError("no welcome")
                ws.settimeout(None)
                held.append(ws)
                gevent.spawn(keep, ws)
        except Exception as e:  # noqa: BLE001
            failed[0] += 1
            print(f"table {index}: {e!r}", file=sys.stderr, flush=True)

    pool, asked = Pool(8), 0  # tables of this process sitting down at once; tables asked for so far
    for line in sys.stdin:
        for index in range(asked, asked + int(line)):
            pool.spawn(table, index)
        asked += int(line)
        pool.join()
        print(json.dumps({"sockets": len(held), "failed": failed[0]}), flush=True)


def idle_cpu_row(empty: dict, now: dict, sockets: int, server: tuple[str, ...]) -> dict:
    """What the seated, silent tables cost: each component's cores less the empty stack's, per
    socket-second, and that rate at issue 20's 2,000 rooms (36,000 sockets)."""
    added = {c: now.get(c, 0.0) - empty.get(c, 0.0) for c in now}
    us = sum(added.get(c, 0.0) for c in server) * 1e6 / max(sockets, 1)
    return {"cores": {c: round(v, 4) for c, v in now.items()},
            "cores_added": {c: round(v, 4) for c, v in added.items()},
            "server_us_per_socket_second": round(us, 3),
            "server_cores_at_36000_sockets": round(us * 36_000 / 1e6, 4)}


def prefix_key_bytes(redis_url: str, prefix: str) -> int:
    import redis

    r = redis.Redis.from_url(redis_url)
    total = 0
    for key in r.scan_iter(match=f"{prefix}:*", count=1000):
        total += r.memory_usage(key, samples=0) or 0
    return total


def _processes(pid: int) -> list:
    import psutil

    try:
        return [psutil.Process(pid)]
    except psutil.Error:
        return []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="1000,2000", help="total tables seated at each step")
    ap.add_argument("--gateways", type=int, default=4)
    ap.add_argument("--games-per-actor", type=int, default=200)
    ap.add_argument("--clients", type=int, default=4, help="processes holding the sockets")
    ap.add_argument("--settle", type=float, default=30.0,
                    help="seconds between the last table seated and the reading")
    ap.add_argument("--window", type=float, default=60.0,
                    help="seconds of CPU read for the empty stack and after each step's settle")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--seat", help=argparse.SUPPRESS)  # child mode: comma-separated gateway URLs
    ap.add_argument("--tag", default="0", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.seat:
        seat_tables(args.seat.split(","), args.tag)
        return 0

    from loadtest.measure import cores_over, unique_memory
    from loadtest.stack import real_stack, tear_down_on_signals

    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    steps = [int(s) for s in args.steps.split(",")]
    rows = []
    with real_stack(args.gateways, games_per_actor=args.games_per_actor,
                    redis_url=redis_url) as running:
        time.sleep(args.settle)  # the warm host and the gateways' own start settle
        empty = unique_memory(running.components())
        empty_keys = prefix_key_bytes(redis_url, running.prefix)
        empty_cores = cores_over(running.components, args.window)
        clients = [subprocess.Popen([sys.executable, "-m", "loadtest.idle", "--seat",
                                     ",".join(running.urls), "--tag", str(i)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    text=True) for i in range(args.clients)]
        try:
            seated = 0
            for rooms in steps:
                share = [(rooms - seated) // args.clients + (i < (rooms - seated) % args.clients)
                         for i in range(args.clients)]
                started = time.monotonic()
                for client, n in zip(clients, share):
                    client.stdin.write(f"{n}\n")
                    client.stdin.flush()
                reports = [json.loads(client.stdout.readline()) for client in clients]
                seated = rooms
                sockets = sum(r["sockets"] for r in reports)
                took = time.monotonic() - started
                time.sleep(args.settle)
                now = unique_memory(running.components())
                keys = prefix_key_bytes(redis_url, running.prefix)
                added = {c: now.get(c, 0.0) - empty.get(c, 0.0)
                         for c in ("gateway", "ray-hosts", "ray-system")}
                added["redis keys"] = (keys - empty_keys) / 2**20
                row = {"rooms": rooms, "sockets": sockets,
                       "failed": sum(r["failed"] for r in reports), "seated_in_s": round(took),
                       "added_mb": {c: round(v, 1) for c, v in added.items()},
                       "kb_per_room": {c: round(v * 1024 / rooms, 1) for c, v in added.items()},
                       "gateway_kb_per_socket": round(added["gateway"] * 1024 / max(sockets, 1), 1)}
                row["kb_per_room_total"] = round(sum(row["kb_per_room"].values()), 1)
                row["kb_per_room_without_gateways"] = round(row["kb_per_room_total"]
                                                            - row["kb_per_room"]["gateway"], 1)
                if rows:  # a host process started for the first rooms is not a per-room cost
                    before = rows[-1]
                    row["kb_per_room_since_previous_step"] = {
                        c: round((v - before["added_mb"][c]) * 1024 / (rooms - before["rooms"]), 1)
                        for c, v in row["added_mb"].items()}
                # The sockets' holders (not the server) are read beside it, to show the box was
                # not saturated.
                cores = cores_over(lambda: {**running.components(), "load clients": [
                    p for c in clients for p in _processes(c.pid)]}, args.window)
                row.update(idle_cpu_row(empty_cores, cores, sockets, SERVER))
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            for client in clients:
                client.kill()
                client.wait(timeout=10)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
