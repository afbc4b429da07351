"""`werewolf serve`: the command line. Its flags build a `ServeConfig` and the environment every
gateway worker reads (gateway/serve/config.py); `gateway.serve.launch.serve` starts Redis (private
if none), a local Ray head (unless given one) and the gateway, and supervises them
(gateway/serve/).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gateway.serve.config import ServeConfig, check_environment, env_from_flags, state_dir
from gateway.serve.launch import serve
from gateway.serve.workers import WS_IMPLEMENTATIONS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="werewolf")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser(
        "serve", help="run Redis (if none), Ray (if none) and the gateway",
        epilog="Phase durations: --duration-<phase> SECONDS, e.g. --duration-discussion 120 "
               "(sets WW_DURATION_<PHASE>).")
    command.add_argument("--host", default="127.0.0.1")
    command.add_argument("--port", type=int, default=8000)
    command.add_argument("--workers", type=int, default=1, help="gateway processes")
    command.add_argument("--redis-url", help="default: $REDIS_URL, else 127.0.0.1:6379 if it "
                                             "answers, else a private redis-server")
    command.add_argument("--redis-dir", type=Path, default=state_dir() / "redis",
                         help="where the private redis-server keeps its append-only file "
                              "(default: %(default)s); a restart of it resumes every room")
    command.add_argument("--own-redis", action="store_true",
                         help="start the private redis-server even if 127.0.0.1:6379 answers")
    command.add_argument("--redis-wait", type=int,
                         help="acknowledge a command only once this many Redis replicas have it "
                              "(WW_REDIS_WAIT, default 0; see docs/architecture.md, Durability)")
    command.add_argument("--ray-address", help="default: $RAY_ADDRESS, else a local Ray head")
    command.add_argument("--games-per-actor", type=int,
                         help="rooms per Ray host actor (default 200; 1 = one actor, one "
                              "process, per game)")
    command.add_argument("--warm-actors", type=int, help="spare host actors kept started")
    command.add_argument("--prefix", help="Redis key prefix (WW_PREFIX)")
    command.add_argument("--presence-lease", type=int,
                         help="seconds before the seats of a gateway that died show "
                              "disconnected (WW_PRESENCE_LEASE, default 15)")
    command.add_argument("--request-timeout", type=float,
                         help="seconds an HTTP request may take to arrive before its connection "
                              "is closed (WW_HTTP_REQUEST_TIMEOUT, default 10)")
    command.add_argument("--max-connections", type=int,
                         help="connections (HTTP and WebSocket) per gateway process; past it, "
                              "503 (WW_MAX_CONNECTIONS; default: the open-file limit less 1024)")
    command.add_argument("--ws", default=WS_IMPLEMENTATIONS[0], choices=WS_IMPLEMENTATIONS,
                         help="uvicorn's WebSocket implementation (default: %(default)s, the "
                              "cheapest per frame measured)")
    command.add_argument("--log-level", default="info")
    # Unknown flags are the open-ended --duration-<phase> family.
    args, rest = parser.parse_known_args(argv)
    if args.own_redis and (args.redis_url or os.environ.get("REDIS_URL")):
        command.error("--own-redis starts a Redis: give it no --redis-url (nor REDIS_URL)")
    os.environ.update(env_from_flags(args, rest, command))
    check_environment(command)
    return serve(ServeConfig.from_args(args))


if __name__ == "__main__":
    sys.exit(main())
