"""The scale-out curve: k identical CPU-capped nodes behind HAProxy on a capped Redis Cluster.

    .venv/bin/python -m loadtest.scaleout                                   # as root
    .venv/bin/python -m loadtest.scaleout --nodes 1,2,3 --node-cpu 0.25 --steps-per-node 100,150,200

Everything runs on this machine in network namespaces (devstack/netns.py), one per node, on a
bridge. Namespace 0 is "outside the nodes": the Ray head, a Redis Cluster of three primaries and
three replicas (devstack/redis_servers.py; each primary with its replica under a CPU cap of
--redis-cpu), HAProxy with the shipped `deploy/haproxy/haproxy.cfg` (only its servers and its bind
rewritten) and the Locust load generator (loadtest/locustfile.py, `human` tables), none of them
capped. Node i (namespaces 1..k) is a Ray worker node offering the game-host resource and one
`werewolf serve` gateway process, together under one cgroup v1 CPU quota of --node-cpu cores
per --cpu-period-ms (children inherit it; cpuacct counts what the node spent). The curve's nodes
boot at a whole core and are capped once they serve (at 0.15 core a node's starting processes
could miss Ray's deadlines); a node added by the churn phase boots capped.

For each k of --nodes: a fresh Ray head, k nodes, a new key prefix; Locust swarms to k x each
of --steps-per-node tables through HAProxy, waits until each new table has connected, holds
--hold seconds and reads Locust's percentiles. A step breaks on p99 broadcast over --break-p99 ms,
failures over --break-errors, a lost, duplicated or reordered event, or tables that could not
all connect; rooms(k) is the largest step that held. With --repeat R the whole curve runs R
times, one run after the other (a drift of the machine spreads over every k alike), and rooms(k)
is the median of what the runs held, reported with their spread. Then, unless --no-churn: on
--churn-nodes nodes under load, a node is added (its gateway enters HAProxy's rotation when its
/readyz answers) and more tables arrive: the seconds until a room is placed on a game host of the
new node and until its gateway holds a socket. Then --probe-tables 8-seat tables of
devstack/players.py bots open through HAProxy, and the node hosting most of them is killed
(SIGKILL of its Ray node and its gateway): the seconds until each probe room answers its host seat
again (resuming its socket through HAProxy), and the probes' acknowledged chat lines missing from
the stored log.

Writes results.json, scaleout.md (the tables) and scaleout.png (rooms against k, with k x
rooms(1)) into --out.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psutil
import ray
import redis

from actors.store import Keys
from devstack.checks import lost_acks, stored_log
from devstack.netns import (FAST_HEALTH_CHECKS, HOST_RESOURCE, RAY_GCS_PORT, netns_lan,
                            ray_node, stop_node)
from devstack.processes import stop
from devstack.players import Bot, connect_all, seat_table, start
from devstack.redis_servers import redis_cluster
from devstack.stack import connect as ws_connect
from loadtest.measure import client_sockets, cpu_percent, cpu_seconds, family, rss_mb
from loadtest.runner import CHECK_NAMES, count, fmt, locust_cluster, make_row
from loadtest.stack import (GATEWAY_PORT, LOAD_LIMITS, ROOT, haproxy_config, raise_fd_limit,
                            ray_driver, tear_down_on_signals)

CGROUP_ROOT = Path("/sys/fs/cgroup")


class CpuCap:
    """A cgroup v1 CPU quota of `cores` per period of `period_us` (and a cpuacct group beside it to
    read what it spent). `enter` is a preexec_fn: the child joins before it execs, and all it
    forks inherits. A group that spent its quota early in a period waits out the rest of it: at
    0.15 core of a 100 ms period that is a stall of up to 85 ms, at 10 ms up to 8.5 ms."""

    def __init__(self, name: str, cores: float, period_us: int = 100_000) -> None:
        self.dirs = [CGROUP_ROOT / "cpu" / name, CGROUP_ROOT / "cpuacct" / name]
        for d in self.dirs:
            d.mkdir()
        self.period_us = period_us
        (self.dirs[0] / "cpu.cfs_period_us").write_text(str(period_us))
        self.limit(cores)

    def limit(self, cores: float) -> None:
        (self.dirs[0] / "cpu.cfs_quota_us").write_text(str(int(cores * self.period_us)))

    def enter(self) -> None:
        self.add(os.getpid())

    def add(self, pid: int) -> None:
        for d in self.dirs:
            (d / "cgroup.procs").write_text(str(pid))

    def used(self) -> float:
        """CPU seconds spent in the group so far."""
        return int((self.dirs[1] / "cpuacct.usage").read_text()) / 1e9

    def throttled(self) -> float:
        """Seconds the group was held back by its quota so far."""
        stat = dict(line.split() for line in (self.dirs[0] / "cpu.stat").read_text().splitlines())
        return int(stat["throttled_time"]) / 1e9

    def close(self) -> None:
        for d in self.dirs:
            for pid in (d / "cgroup.procs").read_text().split():
                try:
                    (d.parent / "cgroup.procs").write_text(pid)
                except OSError:  # gone meanwhile
                    pass
            d.rmdir()


@contextmanager
def cpu_caps(period_us: int = 100_000):
    """Make CpuCaps (each of `period_us`) through the yielded function; every one is removed on
    exit."""
    made: list[CpuCap] = []
    tag = secrets.token_hex(3)

    def make(name: str, cores: float) -> CpuCap:
        made.append(CpuCap(f"ww{tag}-{name}", cores, period_us))
        return made[-1]

    try:
        yield make
    finally:
        for cap in made:
            cap.close()


class Node:
    """One capped node: a Ray worker node with the game-host resource and a gateway process."""

    def __init__(self, lan, index: int, cap: CpuCap, redis_url: str, prefix: str, args) -> None:
        self.cap = cap
        self.ip = lan.ips[index]
        self.ray = ray_node(lan, index, head_ip=lan.ips[0], num_cpus=1,
                            resources={HOST_RESOURCE: 1000}, preexec_fn=cap.enter,
                            args=(f"--object-store-memory={200 << 20}",))
        env = {**os.environ, **LOAD_LIMITS, "WW_HOST_RESOURCE": HOST_RESOURCE,
               "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "RAY_AUTH_MODE": "disabled",
               "PYTHONUNBUFFERED": "1"}
        self.log_path = Path(self.ray.temp_dir) / "gateway.log"
        with open(self.log_path, "wb") as log:
            self.gateway = lan.popen(
                index, [sys.executable, "-m", "gateway.cli", "serve", "--host", "0.0.0.0",
                        "--port", str(GATEWAY_PORT), "--workers", "1", "--redis-url", redis_url,
                        "--ray-address", f"{lan.ips[0]}:{RAY_GCS_PORT}", "--prefix", prefix,
                        "--games-per-actor", str(args.games_per_actor), "--warm-actors", "1",
                        "--log-level", "warning"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=cap.enter)
        self.url = f"http://{self.ip}:{GATEWAY_PORT}"
        deadline = time.monotonic() + 180
        while not ready(self.url):
            if self.gateway.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"node {index}'s gateway did not start:\n"
                                   f"{self.log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.5)  # polling a process that is starting

    def processes(self) -> list[psutil.Process]:
        out = []
        for pid in (self.cap.dirs[0] / "cgroup.procs").read_text().split():
            try:
                out.append(psutil.Process(int(pid)))
            except psutil.NoSuchProcess:
                pass
        return out

    def open_sockets(self) -> int:
        try:
            with urllib.request.urlopen(self.url + "/metrics", timeout=30) as r:
                text = r.read().decode()
        except OSError:
            return 0
        return int(sum(float(line.split()[-1]) for line in text.splitlines()
                       if line.startswith("ww_ws_open_sockets")))

    def kill(self) -> None:
        """SIGKILL the whole node: its gateway and its Ray node's tree."""
        try:
            os.killpg(self.gateway.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.ray.kill()

    def close(self) -> None:
        self.kill()
        self.gateway.wait(timeout=10)
        stop_node(self.ray)


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


class Cluster:
    """Namespace 0's Ray head and HAProxy over the Redis Cluster, and the nodes added to it."""

    def __init__(self, stack: ExitStack, lan, caps, redis_url: str, args) -> None:
        self.lan, self.caps, self.redis_url, self.args = lan, caps, redis_url, args
        self.prefix = "so" + secrets.token_hex(5)
        self.nodes: dict[int, Node] = {}
        self.head = ray_node(lan, 0, num_cpus=0, env=FAST_HEALTH_CHECKS,
                             args=(f"--object-store-memory={200 << 20}",))
        stack.callback(stop_node, self.head)
        stack.callback(self._close_nodes)
        port = 18000 + secrets.randbelow(2000)
        self.url = f"http://127.0.0.1:{port}"
        config = Path(self.head.temp_dir) / "haproxy.cfg"
        config.write_text(haproxy_config(port, [(f"node{i}", lan.ips[i])
                                                for i in range(1, len(lan.ips))]))
        # Its alerts (a server marked DOWN by its health check, and why) are counted per step.
        self.balancer_log = Path(args.out) / f"haproxy-{self.prefix}.log"
        self.balancer_log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.balancer_log, "wb") as log:
            self.haproxy = subprocess.Popen(["haproxy", "-W", "-db", "-f", str(config)],
                                            stdout=subprocess.DEVNULL, stderr=log,
                                            start_new_session=True)
        stack.callback(self._stop_haproxy)

    def add_node(self, index: int, boot_cores: float | None = None) -> Node:
        """Node `index`, capped at --node-cpu; at `boot_cores` until it serves, if given (a
        curve's nodes: at 0.15 core of a 10 ms period a Ray node's starting processes missed
        the raylet's 30 s deadline to register; the curve measures nodes running, not booting)."""
        cap = self.caps(f"node{index}-{self.prefix}", boot_cores or self.args.node_cpu)
        self.nodes[index] = Node(self.lan, index, cap, self.redis_url, self.prefix, self.args)
        cap.limit(self.args.node_cpu)
        return self.nodes[index]

    def wait_balanced(self, timeout: float = 60) -> None:
        """Until HAProxy sends requests through (its health checks found a ready gateway)."""
        deadline = time.monotonic() + timeout
        while not ready(self.url):
            if time.monotonic() > deadline:
                raise RuntimeError("HAProxy serves no gateway")
            time.sleep(0.5)  # its checks run every second

    def servers_marked_down(self) -> int:
        """How many times HAProxy's health checks took a gateway out of a backend so far."""
        return self.balancer_log.read_text(errors="replace").count(" is DOWN")

    def kill_node(self, index: int) -> None:
        self.nodes[index].kill()

    def _close_nodes(self) -> None:
        for node in self.nodes.values():
            node.close()

    def _stop_haproxy(self) -> None:
        stop(self.haproxy)

    def components(self) -> dict:
        return {**{f"node{i}": n.processes() for i, n in self.nodes.items()},
                "haproxy": family(self.haproxy.pid)}

    def hosts_by_node(self) -> dict[str, int]:
        """Game host actor name -> index of the node its process runs on (alive ones)."""
        by_ip = {ip: i for i, ip in enumerate(self.lan.ips)}
        out = {}
        for info in ray._private.state.actors().values():
            if (info.get("State") == "ALIVE"
                    and info.get("Name", "").startswith(f"{self.prefix}-host-")):
                out[info["Name"]] = by_ip.get(info["Address"]["IPAddress"])
        return out


LOCUST_ENV = {"WW_LT_MODEL": "human", "WW_LT_VERIFY_SEATS": "1", "WW_LT_BROADCAST_SAMPLE": "0.25",
              "WW_LT_CHAT_INTERVAL": "", "WW_LT_NIGHT_CHAT_INTERVAL": "", "WW_LT_THINK": ""}


def loaded_cluster(stack: ExitStack, lan, caps, redis_url: str, nodes: int, args,
                   log_dir: Path):
    """A fresh cluster of `nodes` nodes, this process a Ray driver of it (to find its actors),
    and Locust aimed at its HAProxy: (cluster, Locust), both closed with `stack`."""
    cluster = Cluster(stack, lan, caps, redis_url, args)
    ray_driver(address=f"{lan.ips[0]}:{RAY_GCS_PORT}", log_to_driver=False)
    stack.callback(ray.shutdown)
    for i in range(1, nodes + 1):
        cluster.add_node(i, boot_cores=1.0)
    cluster.wait_balanced()
    env = {**LOCUST_ENV, "WW_LT_GATEWAYS": cluster.url}
    return cluster, stack.enter_context(locust_cluster(args.workers, env, log_dir, cluster.url))


def curve_point(k: int, lan, caps, redis_url: str, shards: list[CpuCap], args,
                run_dir: Path) -> list[dict]:
    """Steps of k x --steps-per-node rooms on k fresh nodes, until one breaks (this run's rows so
    far and Locust's logs in `run_dir`)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    with ExitStack() as stack:
        cluster, lc = loaded_cluster(stack, lan, caps, redis_url, k, args, run_dir)
        idle, idle_processes = idle_cores(cluster, args.settle * 4)
        print(f"k = {k}: the nodes idle spend {idle} cores; node 1 by process: {idle_processes}",
              flush=True)
        previous = 0
        for per_node in args.steps_per_node:
            rooms = per_node * k
            row = hold_step(cluster, lc, k, rooms, previous, shards, args)
            row["idle_node_cores"], row["idle_node1_processes"] = idle, idle_processes
            rows.append(row)
            print(format_row(row), flush=True)
            (run_dir / "rows.json").write_text(json.dumps(rows, indent=1))
            if row["broke"]:
                break
            previous = rooms
    return rows


def idle_cores(cluster: Cluster, seconds: float) -> tuple[dict[int, float], dict[str, float]]:
    """Cores each node spends with no room (its Ray node's own processes, its gateway, the spare
    game host), and node 1's by process (command name -> cores)."""
    before = {i: n.cap.used() for i, n in cluster.nodes.items()}
    processes = cluster.nodes[1].processes()
    a = cpu_seconds({"node1": processes})["node1"]
    time.sleep(seconds)
    b = cpu_seconds({"node1": processes})["node1"]
    by_process: dict[str, float] = {}
    for p in processes:
        if p.pid not in b:
            continue
        try:
            name = " ".join(p.cmdline()[:2])[:60]
        except psutil.Error:
            continue
        cores = (b[p.pid] - a.get(p.pid, b[p.pid])) / seconds
        by_process[name] = round(by_process.get(name, 0) + cores, 3)
    per_node = {i: round((n.cap.used() - before[i]) / seconds, 3) for i, n in cluster.nodes.items()}
    return per_node, dict(sorted(by_process.items(), key=lambda kv: -kv[1])[:8])


def hold_step(cluster: Cluster, lc, k: int, rooms: int, previous: int, shards: list[CpuCap],
              args) -> dict:
    t_step = time.monotonic()
    downs = cluster.servers_marked_down()
    lc.reset()
    lc.swarm(rooms, args.spawn_rate * k, cluster.url)
    need = 18 * (rooms - previous)
    connected = lc.wait_connected(rooms, need,
                                  args.spawn_timeout + (rooms - previous) / (args.spawn_rate * k))
    time.sleep(args.settle)
    lc.reset()
    comps = {**cluster.components(), "locust": lc.processes()}
    a = cpu_seconds(comps)
    used0 = {i: (n.cap.used(), n.cap.throttled()) for i, n in cluster.nodes.items()}
    shards0 = [shard.used() for shard in shards]
    t0 = time.monotonic()
    time.sleep(args.hold)
    held = time.monotonic() - t0
    b = cpu_seconds({**cluster.components(), "locust": lc.processes()})
    cpu, _ = cpu_percent(a, b, held)
    st = lc.stats()
    row = make_row(f"k={k}", rooms, st, lc.failures(), cpu, rss_mb(comps),
                   client_sockets(lc.processes()), held, connected >= need,
                   0.0, os.getloadavg()[0], time.monotonic() - t_step,
                   args.break_p99, args.break_errors)
    row["k"] = k
    row["node_cores"] = {i: round((n.cap.used() - used0[i][0]) / held, 3)
                         for i, n in cluster.nodes.items()}
    row["node_throttled_pct"] = {i: round(100 * (n.cap.throttled() - used0[i][1]) / held, 1)
                                 for i, n in cluster.nodes.items()}
    row["redis_shard_cores"] = [round((shard.used() - u) / held, 3)
                                for shard, u in zip(shards, shards0)]
    # The nodes' CPU (gateways, game hosts, Ray's own processes: all a node runs) per command
    # acknowledged, its fan-out and the idle sockets between commands included.
    acks = sum(count(r) for name, r in st.items() if name.startswith("ack:")) / held
    row["commands_s"] = round(acks, 1)
    row["node_ms_per_command"] = (round(1000 * sum(row["node_cores"].values()) / acks, 2)
                                  if acks else None)
    hosts = cluster.hosts_by_node()
    row["hosts_per_node"] = {i: sum(1 for v in hosts.values() if v == i) for i in cluster.nodes}
    row["sockets_per_node"] = {i: n.open_sockets() for i, n in cluster.nodes.items()}
    # A gateway taken out of rotation sends its rooms' new sockets to another: uneven nodes.
    row["balancer_downs"] = cluster.servers_marked_down() - downs
    return row


def format_row(r: dict) -> str:
    nodes = ", ".join(f"{r['node_cores'][i]:.2f}" for i in sorted(r["node_cores"]))
    return (f"| {r['k']} | {r['rooms']} | {r['sockets']} | {fmt(r['ack_chat_p50'])}/"
            f"{fmt(r['ack_chat_p99'])} | {fmt(r['bcast_p50'])}/{fmt(r['bcast_p99'])} | "
            f"{r['frames_s']} | {r['commands_s']} | {fmt(r['node_ms_per_command'], 2)} | "
            f"{sum(r['checks'].values())} | {r['failures']} | {nodes} | "
            f"{r['hosts_per_node']} | {r['sockets_per_node']} | {r.get('balancer_downs', '')} | "
            f"{', '.join(f'{c:.2f}' for c in r['redis_shard_cores'])} | "
            f"{r['cpu'].get('haproxy', 0):.0f} | "
            f"{r['cpu'].get('locust', 0):.0f} | "
            f"{r['broke'] or 'held'} |")


HEADER = ("| k | rooms | sockets | ack chat p50/p99 ms | broadcast p50/p99 ms | frames/s | "
          "commands/s | node CPU ms per command | lost, dup, "
          "reordered | failures | cores used per node | game hosts per node | sockets per node | "
          "gateways marked down | cores per Redis shard | HAProxy CPU % | Locust CPU % | |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


# Node churn --------------------------------------------------------------------------------------

async def probe_table(url: str, ws_url: str) -> dict:
    room, seats = await seat_table(url, 8)
    clients = await connect_all(ws_url, room, seats)
    await start(clients[0])
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(clients)]
    tasks = [asyncio.create_task(b.play()) for b in bots]
    return {"room": room, "seats": seats, "clients": clients, "bots": bots, "tasks": tasks,
            "used": list(clients)}


async def answered_again(table: dict, ws_url: str, killed: float, give_up: float = 120) -> float:
    """Seconds from the kill until the room answers its host seat with anything but `internal`
    (resuming its socket through HAProxy with `since` while it is dead)."""
    client = table["clients"][0]
    deadline = killed + give_up
    while time.monotonic() < deadline:
        try:
            reply = await client.request({"type": "chat", "text": f"probe {secrets.token_hex(3)}"},
                                         timeout=max(1.0, deadline - time.monotonic()))
            if reply["type"] == "ack" or reply.get("code") != "internal":
                return time.monotonic() - killed
        except Exception:  # its socket died with its gateway: resume on another replica
            try:
                client = await ws_connect(ws_url, table["room"], table["seats"][0]["token"],
                                          since=client.last_seq)
                table["used"].append(client)
                table["bots"][0].client = client
            except Exception:
                pass
        await asyncio.sleep(0.2)  # a client's retry
    return float("inf")


def churn(lan, caps, group, args, out: Path) -> dict:
    redis_url = group.url
    base = args.churn_nodes
    result: dict = {"nodes_before": base}
    with ExitStack() as stack:
        cluster, lc = loaded_cluster(stack, lan, caps, redis_url, base, args, out / "locust-churn")
        rooms = args.churn_rooms_per_node * base
        lc.swarm(rooms, args.spawn_rate * base, cluster.url)
        lc.wait_connected(rooms, 18 * rooms, args.spawn_timeout + rooms / (args.spawn_rate * base))
        print(f"churn: {rooms} rooms on {base} nodes; adding node {base + 1}", flush=True)

        new = base + 1
        t_add = time.monotonic()
        node = cluster.add_node(new)
        result["node_start_s"] = round(time.monotonic() - t_add, 1)
        ready_at = time.monotonic()
        # New rooms keep coming, as many again as the new node would hold at this load: the
        # placement gives the next one a host started on the node that joined.
        lc.swarm(rooms + args.churn_rooms_per_node, args.spawn_rate * new, cluster.url)
        first_room = first_socket = None
        keys = Keys(cluster.prefix)
        directory = redis.RedisCluster(host=lan.ips[0], port=group.nodes[0].port)
        stack.callback(directory.close)
        while time.monotonic() - ready_at < args.churn_wait and None in (first_room, first_socket):
            if first_room is None:
                on_new = [h for h, i in cluster.hosts_by_node().items() if i == new]
                if any((directory.zscore(keys.hosts(), h) or 0) > 0 for h in on_new):
                    first_room = time.monotonic() - ready_at
            if first_socket is None and node.open_sockets() > 0:
                first_socket = time.monotonic() - ready_at
            time.sleep(1)  # polling the cluster's own counters
        result.update(first_room_s=first_room, first_socket_s=first_socket)
        print(f"churn: node {new} started in {result['node_start_s']} s; first room on it after "
              f"{first_room} s, first socket after {first_socket} s", flush=True)

        async def kill_phase() -> dict:
            tables = []
            for _ in range(args.probe_tables):
                tables.append(await probe_table(cluster.url, cluster.url.replace("http", "ws", 1)))
            hosts = cluster.hosts_by_node()
            for t in tables:
                t["node"] = hosts.get(directory.hget(keys.room(t["room"]), "host").decode())
            # The node hosting the most probe rooms dies (the placement fills one host at a time).
            doomed = max(cluster.nodes, key=lambda i: sum(t["node"] == i for t in tables))
            killed = time.monotonic()
            cluster.kill_node(doomed)
            times = await asyncio.gather(*(answered_again(t, cluster.url.replace("http", "ws", 1),
                                                          killed) for t in tables))
            lost = 0
            for t in tables:
                for task in t["tasks"]:
                    task.cancel()
                log = await stored_log(redis_url, cluster.prefix, t["room"])
                lost += len(lost_acks(t["used"], log))
                for c in t["used"]:
                    await c.close()
            return {"killed_node": doomed, "probe_rooms": len(tables),
                    "answered_again_s": [round(s, 1) for s in times],
                    "answered_again_on_killed_node_s": [round(s, 1) for t, s in zip(tables, times)
                                                        if t["node"] == doomed],
                    "lost_acks": lost}

        result.update(asyncio.run(kill_phase()))
        st = lc.stats()
        result["locust_checks"] = {n: count(st.get(n), "Failure Count") for n in CHECK_NAMES}
        print(f"churn: node {result['killed_node']} killed: {result}", flush=True)
    return result


def held_rooms(runs: list[list[dict]]) -> list[int]:
    """The rooms each run of one k held: its largest step that did not break (0: none held)."""
    return [max((r["rooms"] for r in rows if not r["broke"]), default=0) for rows in runs]


def write_report(points: dict, churn_result: dict | None, args, out: Path) -> None:
    """`points`: k -> its runs, each the rows of its steps. rooms(k) is the median of what the
    runs held (with --repeat 3, the middle one), the spread their lowest and highest."""
    runs_held = {k: held_rooms(runs) for k, runs in points.items()}
    held = {k: statistics.median_low(each) for k, each in runs_held.items()}
    one = held.get(1) or 0
    lines = [f"Nodes capped at {args.node_cpu} core each, Redis shards at {args.redis_cpu} "
             f"(quotas per {args.cpu_period_ms:g} ms), "
             f"hold {args.hold:.0f} s, break at p99 broadcast > {args.break_p99:.0f} ms; "
             f"rooms(k): the median of {max(map(len, runs_held.values()), default=0)} run(s).",
             "",
             "| k | rooms held, each run | rooms(k), median | spread | k x rooms(1) | "
             "rooms(k) / (k x rooms(1)) |",
             "|---|---|---|---|---|---|"]
    for k, rooms in held.items():
        ratio = rooms / (k * one) if one else None
        each = runs_held[k]
        lines.append(f"| {k} | {', '.join(map(str, each))} | {rooms} | "
                     f"{min(each)}-{max(each)} | {k * one} | {fmt(ratio, 2)} |")
    lines += ["", HEADER]
    for runs in points.values():
        for rows in runs:
            lines += [format_row(r) for r in rows]
    if churn_result:
        lines += ["", "Node churn: " + json.dumps(churn_result)]
    (out / "scaleout.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps({"points": points, "held": held,
                                                  "runs_held": runs_held,
                                                  "churn": churn_result}, indent=1))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ks = sorted(held)
    ax.plot(ks, [held[k] for k in ks], "o-",
            label="rooms held, median of the runs (p99 broadcast within the limit)")
    ax.plot(ks, [k * one for k in ks], "--", label="k x rooms(1)")
    ax.plot(ks, [0.9 * k * one for k in ks], ":", label="0.9 k x rooms(1) (the target)")
    ax.set_xlabel(f"nodes (each {args.node_cpu} core: a gateway + a Ray worker node)")
    ax.set_ylabel("`human` rooms held")
    ax.set_xticks(ks)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "scaleout.png", dpi=110)
    print("\n".join(lines), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="1,2,3", help="the k to measure")
    ap.add_argument("--node-cpu", type=float, default=0.25, help="cores per node")
    ap.add_argument("--redis-cpu", type=float, default=0.25, help="cores per Redis shard")
    ap.add_argument("--cpu-period-ms", type=float, default=100,
                    help="the CPU quotas' period (a shorter one makes shorter stalls: at 10 ms "
                         "and 0.15 core one node saturated at 60 rooms, loadtest/README.md)")
    ap.add_argument("--steps-per-node", default="60,80", help="rooms per node of each step")
    ap.add_argument("--hold", type=float, default=300)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of the whole curve: rooms(k) is the median of what they held")
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--spawn-rate", type=float, default=0.5, help="tables per second per node")
    ap.add_argument("--spawn-timeout", type=float, default=120)
    ap.add_argument("--games-per-actor", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2, help="Locust worker processes")
    ap.add_argument("--break-p99", type=float, default=500)
    ap.add_argument("--break-errors", type=float, default=0.01)
    ap.add_argument("--no-churn", action="store_true")
    ap.add_argument("--churn-nodes", type=int, default=2, help="nodes before one is added")
    ap.add_argument("--churn-rooms-per-node", type=int, default=40)
    ap.add_argument("--churn-wait", type=float, default=120,
                    help="seconds to wait for the new node")
    ap.add_argument("--probe-tables", type=int, default=6)
    ap.add_argument("--out", default=str(ROOT / "loadtest" / "results" / "scaleout"))
    args = ap.parse_args(argv)
    args.nodes = [int(k) for k in args.nodes.split(",")]
    args.steps_per_node = [int(s) for s in args.steps_per_node.split(",")]
    if os.geteuid() != 0 or not shutil.which("haproxy"):
        print("needs root (network namespaces, cgroups) and haproxy (apt-get install haproxy)")
        return 2
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    raise_fd_limit()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    size = max(max(args.nodes), args.churn_nodes + 1)
    points: dict[int, list] = {}
    churn_result = None
    with (netns_lan(1 + size) as lan, cpu_caps(int(args.cpu_period_ms * 1000)) as caps,
          lan.entered(0)):
        with redis_cluster(bind=lan.ips[0]) as group:
            shards = []
            for n, primary in enumerate(group.primaries()):
                shards.append(caps(f"redis{n}", args.redis_cpu))
                shards[-1].add(primary.process.pid)
                shards[-1].add(group.replica_of(primary).process.pid)
            # Run after run of the whole curve, not each k's runs in a row: a drift of the
            # machine over the hour then spreads over every k alike.
            for run in range(1, args.repeat + 1):
                for k in args.nodes:
                    print(f"\n== k = {k}, run {run} of {args.repeat}", flush=True)
                    run_dir = out / f"k{k}-run{run}"
                    points.setdefault(k, []).append(
                        curve_point(k, lan, caps, group.url, shards, args, run_dir))
                    write_report(points, churn_result, args, out)
            if not args.no_churn:
                churn_result = churn(lan, caps, group, args, out)
    write_report(points, churn_result, args, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
