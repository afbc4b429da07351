"""What `werewolf serve` was asked for: the launcher's own settings (`ServeConfig`) and the flags
that become the environment variables of `actors.config.Config.from_env`, so uvicorn's worker
processes (which build their app from the environment) all see the same configuration."""
from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

# flag (argparse's dest) -> the environment variable it sets
FLAG_VARIABLES = (("redis_url", "REDIS_URL"), ("ray_address", "RAY_ADDRESS"),
                  ("games_per_actor", "WW_GAMES_PER_ACTOR"), ("warm_actors", "WW_WARM_ACTORS"),
                  ("prefix", "WW_PREFIX"), ("presence_lease", "WW_PRESENCE_LEASE"),
                  ("request_timeout", "WW_HTTP_REQUEST_TIMEOUT"),
                  ("max_connections", "WW_MAX_CONNECTIONS"),
                  ("redis_wait", "WW_REDIS_WAIT"))


@dataclass(frozen=True)
class ServeConfig:
    host: str
    port: int
    workers: int
    redis_dir: Path
    own_redis: bool
    ws: str
    log_level: str

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ServeConfig:
        return cls(host=args.host, port=args.port, workers=args.workers, redis_dir=args.redis_dir,
                   own_redis=args.own_redis, ws=args.ws, log_level=args.log_level)

    @property
    def url(self) -> str:
        """Where a browser on this machine opens it."""
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{shown}:{self.port}/"


def state_dir() -> Path:
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "werewolf"


def env_from_flags(args, rest: list[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    """The variables the flags set; `rest` is the open-ended --duration-<phase> family."""
    env: dict[str, str] = {}
    for flag, var in FLAG_VARIABLES:
        value = getattr(args, flag, None)
        if value is not None:
            env[var] = str(value)
    it = iter(rest)
    for item in it:
        name, _, value = item.partition("=")
        match = re.fullmatch(r"--duration-([a-z][a-z0-9_.-]*)", name)
        if not match:
            parser.error(f"unknown argument {item}")
        if not value:
            value = next(it, "")
        if not value.isdigit():
            parser.error(f"{name} needs a number of seconds")
        env["WW_DURATION_" + re.sub(r"[.-]", "_", match.group(1)).upper()] = value
    return env


def check_environment(parser: argparse.ArgumentParser) -> None:
    """Refuse a bad configuration (a misspelt phase, a zero count) before starting anything."""
    from actors import Config

    try:
        Config.from_env()
    except ValueError as e:
        parser.error(str(e))
