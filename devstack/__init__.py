"""The development stack: what the tests and the load scripts (loadtest/) share, kept out of
tests/ so that no product package imports the test suite. Not part of the served product (the
gateway, actors and rules never import it).

- `stack`: a real stack (gateways as `werewolf serve` subprocesses on a private Ray head and a
  Redis, under a random key prefix) and the protocol client (`connect`, `Client`, ...).
- `ray_head`: a private Ray head on free loopback ports (never 6379), and `free_port`.
- `redis_servers`: private redis-server processes: one server, a Sentinel group, a Redis Cluster.
- `netns`: several Ray nodes on one machine, each in its own network namespace (needs root).
- `players`: bot players that know no rules, and table helpers (`seat_table`, `connect_all`, ...).
- `checks`: what the end-to-end runs assert: exact streams, no leaks, lost acks, the stored log.
- `processes`: stopping what a test started (`stop`: SIGTERM, then SIGKILL after a grace).
- `failover`: playing through a lost gateway or host (`play_through_failover`, `host_pid`).

The pytest fixtures over these live in tests/conftest.py.
"""
