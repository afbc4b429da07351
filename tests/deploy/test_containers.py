"""The deployment as containers: deploy/Dockerfile over a locally made Debian base, on a docker
network of its own: Redis, a Ray head, two game-host nodes (the only ones offering
`werewolf_host`), two gateway replicas (each a zero-CPU Ray node + `werewolf serve --workers 2`),
and HAProxy from Debian's package with deploy/haproxy/haproxy.cfg in front. Ray runs with token
auth (RAY_AUTH_MODE=token, the token in RAY_AUTH_TOKEN on every node, as KubeRay sets it).

Two client containers show the abuse limits counted per client behind the balancer (HAProxy's
X-Forwarded-For, believed by the gateways from its address only: FORWARDED_ALLOW_IPS): one client
spends its budget of unknown room codes, the other still joins; a forged X-Forwarded-For changes
nothing. A full game plays through the load balancer, which puts every socket of the room on one
gateway replica (room affinity, checked); mid-game the game-host node holding the room and that
gateway are `docker kill`ed together; every seat resumes through the load balancer with `since`
and its stream is exactly the stored log. Then the dashboard's and the alerts' metrics are looked
up on the live stack's scrape endpoints. Everything is removed at the end, even after a failure.
"""
from __future__ import annotations

import asyncio
import json
import random
import re
import secrets
import shlex
import time

import httpx
import orjson
import pytest
import yaml
from websockets.exceptions import ConnectionClosed

from actors.store import Keys
from devstack.checks import assert_exact_stream
from devstack.players import Bot, connect_all, is_phase, seat_table, start
from devstack.stack import TEST_DURATIONS, connect
from tests.deploy.docker import (READY_TIMEOUT, ROOT, Network, build_image, remove_leftovers)
from tests.helpers import until_sync

pytestmark = [pytest.mark.deploy, pytest.mark.timeout(900)]

RESUME_TIMEOUT = 120.0  # Ray notices a dead node after its health checks time out (~30 s)
METRICS_TIMEOUT = 90.0  # Ray's agents export user metrics every 10 s
PLAYERS = 8
LOOKUP_BUDGET = 3  # the stack's WW_LOOKUP_FAILURES_PER_ADDRESS: unknown room codes per client
RAY_FLAGS = ("--disable-usage-stats", "--object-store-memory=80000000",
             "--metrics-export-port=8080")


@pytest.fixture(scope="module")
def cluster(docker_engine):
    remove_leftovers()
    image = build_image()
    net = Network()
    try:
        yield start_cluster(net, image)
    except BaseException:
        for alias in net.containers:
            print(f"--- {alias}\n{net.logs(alias)}")
        raise
    finally:
        net.close()


def start_cluster(net: Network, image: str) -> dict:
    # A loaded machine starts a node's agents slowly: give them longer than Ray's default.
    env = {"RAY_agent_register_timeout_ms": "120000", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "REDIS_URL": "redis://redis:6379/0", "WW_HOST_RESOURCE": "werewolf_host",
           "WW_WARM_ACTORS": "1", "WW_PRESENCE_LEASE": "5",
           # A day's window: the limits' window cannot turn over (and forgive) mid-test.
           "WW_LOOKUP_FAILURES_PER_ADDRESS": str(LOOKUP_BUDGET), "WW_LIMIT_WINDOW": "86400",
           **{f"WW_DURATION_{k.upper()}": str(v) for k, v in TEST_DURATIONS.items()}}
    net.run("redis", "redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "",
            "--appendonly", "no", "--maxmemory-policy", "noeviction")
    # On a loaded machine `ray start` may give up waiting for its own raylet (a fixed 30 s): like
    # systemd's Restart=, Docker starts a Ray node that failed again, and it joins anew.
    ray_options = ("--restart", "on-failure:5")
    net.run("head", "ray", "start", "--head", "--block", "--port=6380", "--num-cpus=0",
            "--include-dashboard=false", *RAY_FLAGS, env=env, options=ray_options)
    until_sync(lambda: "Ray runtime started" in net.logs("head"), READY_TIMEOUT,
               "the Ray head starts")
    for host in ("host1", "host2"):
        net.run(host, "ray", "start", "--block", "--address=head:6380", "--num-cpus=1",
                '--resources={"werewolf_host": 1000}', *RAY_FLAGS, env=env, options=ray_options)
    # The balancer first (it finds the replicas through Docker's DNS as they come): its address
    # is what the gateways trust to name the client, as an operator sets FORWARDED_ALLOW_IPS.
    net.run("lb", "haproxy", "-W", "-db", "-f", "/etc/haproxy/werewolf.cfg",
            publish="127.0.0.1::80",
            options=("-v", f"{ROOT / 'deploy/haproxy/haproxy.cfg'}:/etc/haproxy/werewolf.cfg:ro"))
    for gateway in ("gateway1", "gateway2"):
        net.run(gateway, "sh", "-c",
                f"ray start --address=head:6380 --num-cpus=0 {' '.join(RAY_FLAGS)} && exec "
                "werewolf serve --host 0.0.0.0 --port 8000 --workers 2 --ray-address auto",
                env={**env, "FORWARDED_ALLOW_IPS": net.ip("lb")}, options=ray_options)
    for client in CLIENTS:  # two players' machines: an address each, curl to reach the balancer
        net.run(client, "sleep", "infinity")
    for gateway in ("gateway1", "gateway2"):
        until_sync(lambda: net.exec(gateway, "curl", "-sf", "localhost:8000/readyz", check=False),
                   READY_TIMEOUT, f"{gateway} is ready")
    url = f"http://{net.published('lb', 80)}"
    until_sync(lambda: _status(url + "/readyz") == 200, READY_TIMEOUT, "the load balancer serves")
    return {"net": net, "url": url, "ws_url": url.replace("http", "ws", 1)}


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return None


# Per-client limits behind the balancer ------------------------------------------------------------

CLIENTS = ("client-a", "client-b")


def through_lb(net: Network, client: str, *requests: tuple) -> list[int]:
    """The statuses of `requests` ((method, path, body or None, extra headers)) that the container
    `client` sends through the load balancer, one after the other (one `docker exec` for all)."""
    script = []
    for method, path, body, headers in requests:
        args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} ", "-X", method]
        for header in headers:
            args += ["-H", header]
        if body is not None:
            args += ["-H", "content-type: application/json", "-d", json.dumps(body)]
        script.append(shlex.join(args + [f"http://lb{path}"]))
    return [int(code) for code in net.exec(client, "sh", "-c", "; ".join(script)).split()]


def test_behind_the_balancer_one_clients_limits_leave_the_others_alone(cluster):
    """Client A tries unknown room codes until its budget is spent: 429 even for a real room,
    and naming another address in X-Forwarded-For (a fresh one, or B's) gets it no new budget.
    Client B, through the same balancer, joins that room. The gateways counted A by its own
    address: the only lookup counter in Redis is A's (never the balancer's, never a forged one)."""
    net, url = cluster["net"], cluster["url"]
    created = httpx.post(url + "/api/rooms", json={"name": "Host"}, timeout=30)
    assert created.status_code == 201, created.text
    room = created.json()["room"]
    a, b = (net.ip(client) for client in CLIENTS)
    unknown = [f"/api/rooms/ZZZZZ{c}" for c in "2345678"]  # codes no room has (one in 31^6)

    spent = through_lb(net, "client-a",
                       *[("GET", path, None, ()) for path in unknown[:LOOKUP_BUDGET]])
    assert spent == [404] * LOOKUP_BUDGET, spent
    refused = through_lb(
        net, "client-a",
        ("GET", f"/api/rooms/{room}", None, ()),
        ("POST", f"/api/rooms/{room}/join", {"name": "A"}, ()),
        ("GET", unknown[LOOKUP_BUDGET], None, ("X-Forwarded-For: 198.51.100.7",)),
        ("POST", f"/api/rooms/{room}/join", {"name": "A"}, (f"X-Forwarded-For: {b}",)),
        ("GET", unknown[LOOKUP_BUDGET + 1], None, ("X-Forwarded-For: 198.51.100.7, 203.0.113.9",
                                                   "X-Real-IP: 203.0.113.9")))
    assert refused == [429] * 5, refused
    assert through_lb(net, "client-b", ("GET", f"/api/rooms/{room}", None, ()),
                      ("POST", f"/api/rooms/{room}/join", {"name": "B"}, ())) == [200, 200]

    counters = json.loads(net.exec(
        "redis", "python", "-c",
        "import json, redis; r = redis.Redis(host='localhost');"
        "print(json.dumps({k.decode(): int(r.get(k))"
        " for k in r.scan_iter('ww:limit:lookups:*')}))"))
    assert {key.split(":")[3]: n for key, n in counters.items()} == {a: LOOKUP_BUDGET}, counters


async def play_resuming(bot: Bot, room: str, token: str, ws_url: str) -> list:
    """Play to game_over; whenever the socket dies, reconnect through the load balancer with
    `since` (retrying as a real client does while the room restarts). Returns the clients."""
    clients = [bot.client]
    while True:
        try:
            await bot.play()
            return clients
        except (ConnectionError, ConnectionClosed, OSError):
            pass
        deadline = time.monotonic() + RESUME_TIMEOUT
        while True:
            try:
                bot.client = await connect(ws_url, room, token, since=clients[-1].last_seq)
                break
            except (ConnectionError, ConnectionClosed, OSError, TimeoutError, asyncio.TimeoutError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(1)  # a client's reconnect backoff
        clients.append(bot.client)


def host_node_of(net: Network, room: str, via: str) -> str:
    """The container (host1 or host2) whose Ray node runs the actor holding `room`, asked from
    the gateway container `via`."""
    # Through the GCS (the head runs no dashboard, so no state API).
    script = (
        "import sys, ray, redis\n"
        "name = redis.Redis(host='redis').hget(f'ww:room:{{{sys.argv[1]}}}', 'host').decode()\n"
        "ray.init(address='auto', namespace='werewolf', log_to_driver=False)\n"
        "actor_id = ray.get_actor(name)._actor_id.hex()\n"
        "print(ray._private.state.actors(actor_id)['Address']['IPAddress'])\n"
    )
    ip = net.exec(via, "python", "-c", script, room).split()[-1]
    (alias,) = [a for a in ("host1", "host2") if net.ip(a) == ip]
    return alias


def open_sockets(net: Network, gateway: str) -> int:
    """WebSocket sessions a gateway replica holds now (its `ww_ws_open_sockets`, all workers)."""
    text = net.exec(gateway, "curl", "-sf", "localhost:8000/metrics")
    return int(sum(float(line.split()[-1]) for line in text.splitlines()
                   if line.startswith("ww_ws_open_sockets")))


def stored(net: Network, room: str) -> list[dict]:
    """The room's stored events, read inside the network (Redis is published nowhere)."""
    out = net.exec("redis", "python", "-c",
                   "import json, sys, redis; r = redis.Redis(host='localhost');"
                   "print(json.dumps([x.decode() for x in r.lrange(sys.argv[1], 0, -1)]))",
                   Keys("ww").log(room))
    return [orjson.loads(e) for e in orjson.loads(out)]


async def test_a_game_through_the_load_balancer_survives_killing_a_host_node_and_a_gateway(cluster):
    net, url, ws_url = cluster["net"], cluster["url"], cluster["ws_url"]
    room, seats = await seat_table(url, PLAYERS)
    clients = await connect_all(ws_url, room, seats)
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(clients)]
    await start(clients[0])
    games = [asyncio.create_task(play_resuming(bot, room, seat["token"], ws_url))
             for bot, seat in zip(bots, seats)]
    await clients[0].wait_for(is_phase)  # the game runs

    # Room affinity: the load balancer hashed every socket of the room to one replica.
    held = {gateway: open_sockets(net, gateway) for gateway in ("gateway1", "gateway2")}
    assert sorted(held.values()) == [0, PLAYERS], held
    doomed_gateway, survivor = sorted(held, key=held.get, reverse=True)
    doomed_host = host_node_of(net, room, via=survivor)
    net.kill(doomed_host)
    net.kill(doomed_gateway)
    journeys = await asyncio.wait_for(asyncio.gather(*games), 300)

    log = stored(net, room)
    assert orjson.loads(log[-1]["frame"])["kind"] == "game_over"
    resumed = 0
    for _seat, seat_clients in enumerate(journeys):
        first = None
        for i, client in enumerate(seat_clients):
            last = client.last_seq if i < len(seat_clients) - 1 else None
            assert_exact_stream(client, log, first=first, last=last)
            first = client.last_seq + 1
        resumed += len(seat_clients) > 1
        await seat_clients[-1].close()
    assert resumed, "no seat lost its socket: the kills hit nothing"
    # The room's host actor was restarted on the surviving game-host node.
    assert host_node_of(net, room, via=survivor) != doomed_host


# Metrics ----------------------------------------------------------------------------------------

METRIC = re.compile(r"\b((?:ray_)?ww_[a-z0-9_]+)")


def referenced_metrics() -> dict[str, set[str]]:
    """Metric names of every dashboard panel and every alert rule, by where they come from."""
    dashboard = orjson.loads((ROOT / "deploy/grafana/werewolf.json").read_bytes())
    panels = {f"panel {p['title']!r}": {m for t in p["targets"] for m in METRIC.findall(t["expr"])}
              for p in dashboard["panels"] if p.get("targets")}
    rules = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yml").read_text())
    alerts = {f"alert {r['alert']}": set(METRIC.findall(r["expr"]))
              for group in rules["groups"] for r in group["rules"]}
    return {**panels, **alerts}


def live_gateway(net: Network) -> str:
    """A gateway replica still running (the game test killed whichever held its room)."""
    return next(g for g in ("gateway1", "gateway2") if net.running(g))


def scraped_names(net: Network) -> set[str]:
    """Sample names on the live stack's scrape targets: a gateway replica (any worker answers
    for both) and the Ray nodes' metrics agents (where the game hosts' metrics are exported)."""
    names = set()
    for alias, port in ((live_gateway(net), 8000), ("host1", 8080), ("host2", 8080),
                        ("head", 8080)):
        text = net.exec(alias, "curl", "-s", f"localhost:{port}/metrics", check=False)
        names |= {line.split("{")[0].split(" ")[0] for line in text.splitlines()
                  if line and not line.startswith("#")}
    return names


def test_every_dashboard_panel_and_alert_reads_a_metric_the_stack_exports(cluster):
    wanted = referenced_metrics()
    assert len(wanted) >= 8 and all(wanted.values()), wanted
    net = cluster["net"]
    needed = set().union(*wanted.values())
    deadline = time.monotonic() + METRICS_TIMEOUT
    while not needed <= (have := scraped_names(net)) and time.monotonic() < deadline:
        time.sleep(5)  # Ray's agents export every 10 s: poll until the names appear
    missing = {where: names - have for where, names in wanted.items() if names - have}
    assert not missing, missing


def test_one_scrape_of_a_replica_covers_all_its_workers(cluster):
    """Multiprocess mode: a scrape of a replica, whichever of its two workers answers, counts the
    /healthz requests served by both (each curl is a new connection: the kernel spreads them)."""
    net = cluster["net"]
    gateway = live_gateway(net)

    def served() -> float:
        text = net.exec(gateway, "curl", "-s", "localhost:8000/metrics")
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("ww_http_request_seconds_count{")
                   and 'route="/healthz"' in line)

    before = served()
    for _ in range(20):
        net.exec(gateway, "curl", "-sf", "-o", "/dev/null", "localhost:8000/healthz")
    assert [served() for _ in range(6)] == [before + 20] * 6
