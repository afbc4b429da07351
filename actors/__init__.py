"""Game rooms on Ray, persisted in Redis.

- `room`: one room (lobby, then the `rules` game) behind a single-writer mailbox, with its timer.
- `store`: the Redis layout and its atomic, epoch-fenced persist (plus an in-memory twin for tests).
- `host`: `RoomHost` holds up to `games_per_actor` rooms; `GameHost` is its Ray actor shell.
- `placement`: picks or starts the host for a new room, keeping warm hosts ready.
- `client`: `RoomClient`, the gateway's only entry point, and the per-process pub/sub multiplexer.
- `config`, `clock`: explicit configuration, and real or fake time.
"""
