"""Issue 24's abuse suite, each probe run once against a private stack (loadtest/README.md,
"Abuse: headers and slow readers (issue 24)", holds the table of an earlier run):

    python -m loadtest.abuse [--only PROBE,...] [--readers 168] [--flood 5000] ...

For each: refused or dropped, the time it took, the CPU it cost, the gateway's RSS before / after
(psutil, the gateway's process tree) and the ping -> ack p99 of seats of another room during the
probe against the same seats idle. The stack runs the per-address limits as shipped (the `Config`
defaults, in one window for the whole run), a lobby's maximum age of `--lobby-max-age` seconds,
a metrics token, and believes X-Forwarded-For from 127.0.0.1 (FORWARDED_ALLOW_IPS): the probes
name their clients with it, and the proxy probe's HAProxy is that peer. `--json PATH` also writes
every row with its raw figures (`facts`), which tests/loadtest/test_abuse.py checks.

With `--honest N` the probes run against an honest load (`honest.py`: N tables in their day,
their seats pinging and chatting): a second table gives those seats' ping and chat-ack p50 / p99
over the idle window and over each probe's run, and each one's p99 against the idle one (issue
34's target: within 2x), then over a second idle window after the probes (the box's own noise in
that run). Each row's `honest` holds those figures in the JSON.

Each probe's start and end are logged on stderr as the run goes; a probe still running after
`--probe-timeout` seconds is cancelled, where it waited printed, its row saying so, and the next
one runs.

A probe is a module of this package, listed in `probes.PROBES` (the order they run in); its
docstring says what it does. It has `async def run(target: common.Target) -> dict | list[dict]`
(a row, or rows, of the table: probe, result, time, cpu, rss, ping, healthz; `facts` for the
JSON), and, if it needs them: `add_arguments(parser)` for its options, `SHARED` (the shared rooms
it uses, made while the probes before it run: "day", "finished"), `ALONE = True` (measured before
any shared room is made).
"""
import os

# Before any probe imports ray (actors.client does): every Ray process of this one on loopback (Ray
# reads this when imported) and no token auth for the private head, as devstack/ray_head.py sets
# them. A package's __init__ runs before any of its modules, so `python -m loadtest.abuse` sets them
# first.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
