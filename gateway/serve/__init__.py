"""`werewolf serve`'s launcher and supervisors, under the command line of gateway/cli.py (as
uvicorn's `main.py` over its `config.py` and `supervisors/`): the command line builds a
`ServeConfig`; `launch.serve` starts, in order, what that configuration lacks and stops it all
at the end.

- `config`: `ServeConfig`, the flags that become environment variables (`env_from_flags`).
- `launch`: `serve(config)`, the order of starting and stopping.
- `stopping`: SIGTERM and SIGINT noted, and acted on where stopping leaves nothing behind.
- `locks`: the state directory's lock (one local stack per directory) and the ports lock.
- `processes`: probing ports, waiting for a process, stopping process trees (`kill_family`).
- `redis_server`: the private redis-server, started again whenever it exits.
- `ray_head`: a local Ray head of our own, and the key prefix's lease.
- `workers`: the gateway's uvicorn worker processes.
"""
