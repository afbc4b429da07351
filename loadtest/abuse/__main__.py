"""`python -m loadtest.abuse`: the suite's options, its stack, the probes of PROBES in turn, and
the table of what each found."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
import time
from pathlib import Path

import ray

import loadtest.abuse
from actors.client import RoomClient
from actors.config import Config
from devstack.stack import connect
from gateway.routes.rooms import REVIEW_BYTES
from loadtest.abuse import honest
from loadtest.abuse.common import (ADMIN_SECRET, DURATIONS, GAMES_PER_ACTOR, METRICS_TOKEN,
                                   PING_SOCKETS, Shared, Target, rss_mb, table)
from loadtest.abuse.probes import PROBES
from loadtest.measure import Pinger
from loadtest.stack import LOAD_LIMITS, ray_driver, real_stack, tear_down_on_signals

COLUMNS = ["probe", "result", "time", "cpu", "rss", "ping", "healthz"]


def stack_env(args) -> dict:
    """The probes' stack: the per-address limits as shipped (Config's defaults, over LOAD_LIMITS'
    zeros) in one window for the whole run, a short lobby age, a metrics token, an operators'
    secret, and X-Forwarded-For believed from 127.0.0.1 (the probes' clients, and the proxy
    probe's HAProxy)."""
    shipped = Config()
    limits = {var: str(getattr(shipped, name)) for var, name in (
        ("WW_ROOMS_PER_ADDRESS", "rooms_per_address"),
        ("WW_LOOKUP_FAILURES_PER_ADDRESS", "lookup_failures_per_address"),
        ("WW_QUICK_PLAYS_PER_ADDRESS", "quick_plays_per_address"),
        ("WW_JOINS_PER_ADDRESS", "joins_per_address"),
        ("WW_OPEN_LOBBIES_PER_ADDRESS", "open_lobbies_per_address"),
        ("WW_LOBBY_SEATS_PER_ADDRESS", "lobby_seats_per_address"))}
    return {**limits, "WW_LIMIT_WINDOW": "86400", "WW_LOBBY_MAX_AGE": str(args.lobby_max_age),
            "WW_METRICS_TOKEN": METRICS_TOKEN, "WW_ADMIN_SECRET": ADMIN_SECRET,
            "FORWARDED_ALLOW_IPS": "127.0.0.1"}


async def run(args) -> list[dict]:
    only = set(args.only.split(","))
    env = stack_env(args)
    with real_stack(n=1, games_per_actor=GAMES_PER_ACTOR, durations=DURATIONS, env=env) as stack:
        url = stack.urls[0]
        port = int(url.rsplit(":", 1)[1])
        # The cluster's settings, as its gateway has them (a RoomClient must match them).
        config = Config.from_env(
            {**LOAD_LIMITS, **env,
             **{f"WW_DURATION_{k.upper()}": str(v) for k, v in DURATIONS.items()}},
            redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
            ray_address=stack.ray_address, prefix=stack.prefix, games_per_actor=GAMES_PER_ACTOR)
        # This process's driver, its SIGTERM handler kept (a Ray driver's own ends the process at
        # once, leaving the stack's head and gateway running): RoomClient finds it initialised.
        ray_driver(address=stack.ray_address, namespace=config.namespace, log_to_driver=False)
        try:
            return await probes(args, only, stack, url, port, config)
        finally:
            ray.shutdown()  # before the stack's head goes: a driver left behind ends the process


async def probes(args, only: set, stack, url: str, port: int, config: Config) -> list[dict]:
    chosen = {name: probe for name, probe in PROBES.items() if name in only}
    shared_used = {room for probe in chosen.values() for room in getattr(probe, "SHARED", ())}
    async with RoomClient(config) as rc:
        quiet = await table(url, PING_SOCKETS, "198.51.100.10")
        sockets = [await connect(url.replace("http", "ws"), s["room"], s["token"])
                   for s in quiet]
        pinger = Pinger(sockets)
        progress(f"stack up at {url}; {args.honest} honest tables to seat")
        load = await honest.Honest.start(url, rc, args.honest, args.honest_sockets) \
            if args.honest else None
        if load:
            progress(f"{load.connected} honest sockets connected; {args.idle:g} s idle")
        shared = Shared(url, rc, args.lobby_max_age, args.review_events)
        target = Target(args, stack, url, port, rc, pinger, config, shared)
        t_idle = time.monotonic()
        await asyncio.sleep(args.idle)
        rows: list[dict] = [{"name": "idle", "probe": "idle", "result": "-",
                             "time": f"{args.idle:g} s", "rss": f"{rss_mb(stack):.0f} MB",
                             "ping": pinger.p99(t_idle)}]
        if load:
            rows[0]["honest"] = await load.window(t_idle, time.monotonic())
        try:
            for name, probe in chosen.items():
                quiet = await load.quiet_window(args.quiet_before) \
                    if load and args.quiet_before else None
                if not getattr(probe, "ALONE", False):  # after the probes that measure alone
                    if "finished" in shared_used:
                        shared.finished()  # its lobby ages while the probes run
                    if "day" in shared_used:
                        shared.day()
                t_probe = time.monotonic()
                progress(f"{name}: started")
                found = await bounded(name, probe.run(target), args.probe_timeout, shared)
                progress(f"{name}: done in {time.monotonic() - t_probe:.1f} s")
                found = found if isinstance(found, list) else [found]
                # A probe that prepares its scene faster than clients could (a room's long chat
                # written straight into the room) says when the scene is set: `attack_from`.
                t_attack = found[0].pop("attack_from", t_probe)
                if load:  # the honest tables over the whole probe, on its first row
                    found[0] = {**found[0],
                                "honest": await load.window_after(t_attack, args.honest_window)}
                    if quiet is not None:
                        found[0]["quiet"] = quiet
                for row in found:
                    rows.append({"name": name, **row})
                if load:
                    w = found[0]["honest"]
                    progress(f"{name}: honest ping p99 {w['ping_p99'] or 0:.0f} ms, ack p99 "
                             f"{w['ack_p99'] or 0:.0f} ms ({w['pings']} pings, {w['acks']} acks)")
                if args.json:  # as the run goes: a run that ends badly keeps what it measured
                    args.json.write_text(json.dumps(rows, indent=1, default=str))
            if load:  # quiet again: how far the box's own noise moves the quiet p99 in this run
                t_end = time.monotonic()
                await asyncio.sleep(args.idle)
                rows.append({"name": "idle, after", "probe": "idle again, after the probes",
                             "result": "-", "time": f"{args.idle:g} s",
                             "honest": await load.window(t_end, time.monotonic())})
        finally:
            await ended("the shared rooms", shared.close())
            if load:
                await ended("the honest load", load.stop())
            await ended("the quiet pings", pinger.stop())
            await ended("the quiet sockets", asyncio.gather(*(s.close() for s in sockets)))
    return rows


async def ended(what: str, stopping, seconds: float = 30) -> None:
    """Await a step of the teardown for `seconds` at most: one that hangs (a run measured, then
    stuck here with its rows unprinted) is named, with the stacks of the tasks it waits on, and
    left behind."""
    task = asyncio.ensure_future(stopping)
    done, _ = await asyncio.wait([task], timeout=seconds)
    if not done:
        progress(f"teardown: {what} still stopping after {seconds:g} s, left behind; waiting:")
        # Not the sockets' own readers and keepalives (open until the last step): what stops.
        stuck = [t for t in asyncio.all_tasks() if t is not task and not t.done()
                 and getattr(t.get_coro(), "__qualname__", "") not in (
                     "probes", "Client._read", "Connection.keepalive")]
        for waiting in stuck[:5]:
            waiting.print_stack(limit=10, file=sys.stderr)


def progress(line: str) -> None:
    """A line on stderr as the run goes: a run that stalls names what it waits on."""
    print(f"[abuse {time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


async def bounded(name: str, run, timeout: float, shared: Shared) -> dict | list[dict]:
    """The probe's rows, or, past `timeout` seconds, a row saying it timed out (the probe's stack
    and the shared rooms' tasks printed first, so what it waited on is named) and the next probe
    runs."""
    task = asyncio.ensure_future(run)
    done, _ = await asyncio.wait([task], timeout=timeout)
    if done:
        return task.result()
    progress(f"{name}: TIMED OUT after {timeout:g} s, skipped; where it waited:")
    for waiting in [task, *shared.pending()]:
        waiting.print_stack(file=sys.stderr)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return {"probe": name, "result": f"timed out after {timeout:g} s", "time": "-",
            "facts": {"timed_out": timeout}}


def described(name: str, probe) -> str:
    """`  name       what it does` (its docstring's first paragraph, its own name dropped)."""
    first = " ".join((probe.__doc__ or "").split("\n\n")[0].split()).removeprefix(f"{name}: ")
    return textwrap.fill(first, 100, initial_indent=f"  {name:<10} ", subsequent_indent=" " * 13)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m loadtest.abuse",
                                 description=loadtest.abuse.__doc__.split("\n\n")[0],
                                 epilog="probes:\n" + "\n".join(described(name, probe)
                                                                 for name, probe in PROBES.items()),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(PROBES), help="comma separated, of: "
                    + ", ".join(PROBES) + " (default: all)")
    ap.add_argument("--idle", type=float, default=10, help="seconds of the idle pings")
    ap.add_argument("--lobby-max-age", type=int, default=20,
                    help="the stack's WW_LOBBY_MAX_AGE (seconds)")
    ap.add_argument("--review-events", type=int, default=0,
                    help="presence changes written into the finished table's lobby (past "
                         f"{REVIEW_BYTES >> 20} MB of events, its review is truncated)")
    ap.add_argument("--probe-timeout", type=float, default=600,
                    help="seconds a probe may take before it is cancelled and the next one runs")
    ap.add_argument("--json", type=Path, help="also write the rows, with their raw figures")
    ap.add_argument("--medians", type=Path, nargs="+", metavar="JSON",
                    help="run nothing: the honest tables' table over these runs' --json "
                         "files, each probe's median ratio to its quiet window")
    honest.add_arguments(ap)
    for probe in PROBES.values():
        if hasattr(probe, "add_arguments"):
            probe.add_arguments(ap)
    return ap


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if args.medians:  # earlier runs' figures, nothing run
        print("\n".join(honest.medians([json.loads(path.read_text()) for path in args.medians])))
        return 0
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    unknown = set(args.only.split(",")) - set(PROBES)
    if unknown:
        ap.error(f"unknown probes {', '.join(sorted(unknown))}; known: {', '.join(PROBES)}")
    rows = asyncio.run(run(args))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    print("| " + " | ".join(COLUMNS) + " |", flush=True)
    print("|" + "---|" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "-")) for k in COLUMNS) + " |", flush=True)
    if args.honest:
        print(f"\nThe {args.honest} honest tables ({args.honest_sockets} seats of each pinging "
              "and chatting), quiet and during each probe:\n")
        print("\n".join(honest.table(rows)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
