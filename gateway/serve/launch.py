"""`serve(config)`: Redis (private if none), a local Ray head (unless given one), the gateway,
started in that order and stopped in the reverse one. SIGTERM or SIGINT, at any point, stops the
gateway, then whatever this command started. A command that starts a Redis or a Ray head holds
`serve.lock` in the state directory: a second one there exits at once naming the first."""
from __future__ import annotations

import os
import tempfile
import threading
from contextlib import ExitStack

from gateway.serve.config import ServeConfig, state_dir
from gateway.serve.locks import lock_file
from gateway.serve.processes import answers, kill_descendants, refuse_taken_port
from gateway.serve.ray_head import attach_ray, local_ray, refuse_owned_prefix, release_prefix
from gateway.serve.redis_server import DEFAULT_REDIS, private_redis, warn_if_volatile
from gateway.serve.stopping import STOP, Stopping, log
from gateway.serve.workers import announce, run_gateway, uvicorn_config


def serve(config: ServeConfig) -> int:
    from actors import Config

    STOP.install()
    url = config.url
    try:
        with ExitStack() as stack:
            stack.callback(kill_descendants)  # last: anything still running under this process
            starts_redis = not os.environ.get("REDIS_URL") and (
                config.own_redis or not answers(*DEFAULT_REDIS))
            starts_ray = not os.environ.get("RAY_ADDRESS")
            holder = f"pid {os.getpid()}, {url}"
            if starts_redis or starts_ray:
                # A local stack: one per state directory (it holds the Redis's files), and not
                # on a port in use, before anything is started only to be stopped.
                state = state_dir()
                stack.enter_context(lock_file(
                    state / "serve.lock", holder,
                    lambda other: f"werewolf serve: another `werewolf serve` is running ({other}) "
                                  f"with its state in {state}: stop it, or give this one another "
                                  "XDG_STATE_HOME."))
                refuse_taken_port(config.host, config.port)
            if starts_redis:
                os.environ["REDIS_URL"] = stack.enter_context(
                    private_redis(config.redis_dir, holder))
            STOP.check()
            warn_if_volatile(os.environ.get("REDIS_URL") or "redis://%s:%d/0" % DEFAULT_REDIS)
            if starts_ray:
                actors_config = Config.from_env()
                # A new Ray cluster: if another live one owns the prefix, serving it would take
                # that cluster's rooms over (actors/ownership.py). Refuse before starting anything.
                refuse_owned_prefix(actors_config)
                session: list[str] = []
                stack.callback(release_prefix, actors_config, session)  # once our Ray head is gone
                os.environ["RAY_ADDRESS"] = stack.enter_context(local_ray(session))
            else:
                attach_ray(os.environ["RAY_ADDRESS"])
            if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
                # Before any worker imports prometheus_client: the workers share this directory.
                os.environ["PROMETHEUS_MULTIPROC_DIR"] = stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="werewolf-metrics-"))
            gateway = uvicorn_config(config.host, config.port, config.workers, config.ws,
                                     config.log_level)
            STOP.check()
            threading.Thread(target=announce, args=(url,), daemon=True).start()
            run_gateway(gateway)
    except Stopping as stopped:
        log(f"stopped by {stopped} while starting; everything it had started is stopped")
    return 0
