"""Private redis-server processes for tests and scripts: never the shared 6379, each on a free port
with its own directory, killed (their own pids only) on exit.

    RedisServer(port, dir, *extra_args).start() / .kill() (SIGKILL: a crash) / .stop() / .url
    redis_server(appendonly=True, appendfsync="everysec")      context manager -> RedisServer
    sentinel_group(quorum=2, down_after_ms=1000) -> SentinelGroup (context manager):
        a primary, one replica and three sentinels; .url is the `redis+sentinel://` URL the
        project connects with, .primary / .replica the RedisServers, .current_primary() asks
        the sentinels, .wait_promoted(old_port) waits until they name another one.
    redis_cluster(node_timeout_ms=2000) -> ClusterGroup (context manager): a Redis Cluster of
        three primaries and three replicas; .url is its `redis+cluster://` URL, .primary_of(key),
        .replica_of(primary), .failover(replica) (manual), .migrate_slot(slot, to), .wait_ok().
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from devstack.processes import stop
from devstack.ray_head import free_port

SERVICE = "wwtest"
START_TIMEOUT = 30.0


@dataclass
class RedisServer:
    port: int
    dir: Path
    args: list[str] = field(default_factory=list)
    bind: str = "127.0.0.1"
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.bind}:{self.port}/0"

    def command(self) -> list[str]:
        # Protected mode refuses every non-loopback client of a server without a password: the
        # servers bound inside a test's network namespace serve the other nodes' namespaces.
        return ["redis-server", "--port", str(self.port), "--bind", self.bind,
                "--dir", str(self.dir),
                "--save", "", "--protected-mode", "no" if self.bind != "127.0.0.1" else "yes",
                *self.args]

    def start(self) -> RedisServer:
        self.dir.mkdir(parents=True, exist_ok=True)
        log = open(self.dir / f"redis-{self.port}.log", "ab")
        self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        log.close()
        wait_answers(self.bind, self.port, self.process)
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync: what a crash of the process looks like."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.bind, port=self.port)


def wait_answers(host: str, port: int, process: subprocess.Popen | None = None,
                 timeout: float = START_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"redis-server on {port} exited with {process.returncode}")
        try:
            with redis.Redis(host=host, port=port, socket_timeout=1) as r:
                if r.ping():
                    return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing answers on {host}:{port}")
        time.sleep(0.1)  # polling a server that is starting


def wait_replica_online(primary: RedisServer, timeout: float = 30.0) -> None:
    """Until the primary has a replica in sync (WAIT 1 can then succeed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with primary.client() as r:
            if r.info("replication").get("slave0", {}).get("state") == "online":
                return
        time.sleep(0.1)  # polling the replication handshake
    raise TimeoutError("the replica never linked")


def aof_args(appendfsync: str = "everysec") -> list[str]:
    return ["--appendonly", "yes", "--appendfsync", appendfsync]


@contextmanager
def redis_server(*, appendonly: bool = True, appendfsync: str = "everysec", bind: str = "127.0.0.1",
                 extra: list[str] | None = None):
    directory = Path(tempfile.mkdtemp(prefix="ww-redis-"))
    args = (aof_args(appendfsync) if appendonly else ["--appendonly", "no"]) + (extra or [])
    server = RedisServer(free_port(), directory, args, bind=bind)
    try:
        yield server.start()
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class SentinelGroup:
    primary: RedisServer
    replica: RedisServer
    sentinels: list[RedisServer]
    bind: str = "127.0.0.1"

    @property
    def url(self) -> str:
        hosts = ",".join(f"{self.bind}:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def servers(self) -> list[RedisServer]:
        return [self.primary, self.replica, *self.sentinels]

    def current_primary(self) -> tuple[str, int] | None:
        for sentinel in self.sentinels:
            try:
                with redis.Redis(host=self.bind, port=sentinel.port, socket_timeout=1) as r:
                    host, port = r.sentinel_get_master_addr_by_name(SERVICE)
                    return host, int(port)
            except (redis.RedisError, TypeError):
                continue
        return None

    def wait_promoted(self, old_port: int, timeout: float = 60.0) -> tuple[str, int]:
        """Wait until the sentinels name a primary other than `old_port` and it takes writes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = self.current_primary()
            if now is not None and now[1] != old_port:
                try:
                    with redis.Redis(host=now[0], port=now[1], socket_timeout=1) as r:
                        if r.info("replication")["role"] == "master":
                            return now
                except redis.RedisError:
                    pass
            time.sleep(0.1)  # polling the sentinels' view
        raise TimeoutError(f"no failover away from {old_port} in {timeout}s")

    def wait_replica_linked(self, timeout: float = 30.0) -> None:
        wait_replica_online(self.primary, timeout)

    def wait_sentinels_see_replica(self, timeout: float = 30.0) -> None:
        """Until every sentinel knows the replica and its peers (a failover needs both)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready = 0
            for sentinel in self.sentinels:
                with redis.Redis(host=self.bind, port=sentinel.port, socket_timeout=1) as r:
                    master = r.sentinel_master(SERVICE)
                    if (int(master.get("num-slaves", 0)) >= 1
                            and int(master.get("num-other-sentinels", 0)) >= 2):
                        ready += 1
            if ready == len(self.sentinels):
                return
            time.sleep(0.2)
        raise TimeoutError("the sentinels never saw the replica and each other")


@contextmanager
def sentinel_group(*, quorum: int = 2, down_after_ms: int = 1000, failover_timeout_ms: int = 5000,
                   bind: str = "127.0.0.1", appendfsync: str = "everysec"):
    """A primary, a replica and three sentinels, all private (free ports, temp dirs)."""
    root = Path(tempfile.mkdtemp(prefix="ww-sentinel-"))
    primary = RedisServer(free_port(), root / "primary", aof_args(appendfsync), bind=bind)
    replica = RedisServer(free_port(), root / "replica",
                          [*aof_args(appendfsync), "--replicaof", bind, str(primary.port)],
                          bind=bind)
    sentinels = []
    group = SentinelGroup(primary, replica, sentinels, bind=bind)
    try:
        primary.start()
        replica.start()
        for i in range(3):
            directory = root / f"sentinel{i}"
            directory.mkdir(parents=True)
            conf = directory / "sentinel.conf"  # a sentinel rewrites its file: one each
            port = free_port()
            conf.write_text(
                f"port {port}\nbind {bind}\ndir {directory}\n"
                f"sentinel monitor {SERVICE} {bind} {primary.port} {quorum}\n"
                f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}\n"
                f"sentinel failover-timeout {SERVICE} {failover_timeout_ms}\n"
                f"sentinel parallel-syncs {SERVICE} 1\n")
            sentinel = _Sentinel(port, directory, [], bind=bind, conf=conf)
            sentinels.append(sentinel.start())
        group.wait_replica_linked()
        group.wait_sentinels_see_replica()
        yield group
    finally:
        for server in group.servers():
            server.kill()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class _Sentinel(RedisServer):
    conf: Path | None = None

    def command(self) -> list[str]:
        return ["redis-server", str(self.conf), "--sentinel"]


@dataclass
class ClusterGroup:
    """A local Redis Cluster: three primaries, a replica each (`redis-cli --cluster create`)."""
    nodes: list[RedisServer]
    bind: str = "127.0.0.1"

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"{self.bind}:{n.port}" for n in self.nodes)

    def _live(self) -> list[RedisServer]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    def topology(self) -> dict[int, dict]:
        """port -> {"id", "primary": bool, "of": the primary's id, "slots": [(lo, hi)]}, as a
        live node sees it."""
        for node in self._live():
            try:
                with node.client() as r:
                    text = r.execute_command("CLUSTER", "NODES")
            except redis.RedisError:
                continue
            text = text.decode() if isinstance(text, bytes) else text
            out = {}
            for line in text.splitlines():
                fields = line.split()
                port = int(fields[1].split("@")[0].rpartition(":")[2])
                slots = [tuple(map(int, (s.split("-") * 2)[:2])) for s in fields[8:]
                         if not s.startswith("[")]
                out[port] = {"id": fields[0], "primary": "master" in fields[2], "of": fields[3],
                             "slots": slots, "failed": "fail" in fields[2]}
            return out
        raise RuntimeError("no cluster node answers")

    def node(self, port: int) -> RedisServer:
        return next(n for n in self.nodes if n.port == port)

    def primary_of(self, key: str) -> RedisServer:
        return self.primary_of_slot(self.slot(key))

    def replica_of(self, primary: RedisServer) -> RedisServer:
        topology = self.topology()
        primary_id = topology[primary.port]["id"]
        return self.node(next(p for p, i in topology.items() if i["of"] == primary_id))

    def slot(self, key: str) -> int:
        with self._live()[0].client() as r:
            return int(r.execute_command("CLUSTER", "KEYSLOT", key))

    def wait_ok(self, timeout: float = 60.0) -> None:
        """Until every live node says cluster_state:ok and every slot has a live primary."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                states = []
                for node in self._live():
                    with node.client() as r:
                        states.append(r.cluster("INFO")["cluster_state"] == "ok")
                covered = sum(hi - lo + 1 for i in self.topology().values()
                              if i["primary"] and not i["failed"] for lo, hi in i["slots"])
                if all(states) and covered == 16384:
                    return
            except redis.RedisError:
                pass
            time.sleep(0.1)  # polling the cluster's own view
        raise TimeoutError("the cluster never came back to state ok")

    def failover(self, replica: RedisServer, timeout: float = 30.0) -> None:
        """A manual CLUSTER FAILOVER: the replica takes over once it has every write."""
        with replica.client() as r:
            r.execute_command("CLUSTER", "FAILOVER")
        deadline = time.monotonic() + timeout
        while not self.topology()[replica.port]["primary"]:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{replica.port} was not promoted")
            time.sleep(0.05)
        self.wait_ok(timeout)

    def wait_promoted(self, replica: RedisServer, timeout: float = 60.0) -> None:
        """Until the cluster has made `replica` a primary (its primary failed) and is ok again."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.topology()[replica.port]["primary"]:
                    break
            except (RuntimeError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{replica.port} was not promoted")
            time.sleep(0.05)  # polling the cluster's view
        self.wait_ok(timeout)

    def migrate_slot(self, slot: int, to: RedisServer) -> None:
        """Move one slot, key by key (MIGRATE), while clients keep writing to it: they are sent
        ASK / TRYAGAIN meanwhile and MOVED after."""
        topology = self.topology()
        source = self.primary_of_slot(slot, topology)
        src_id, dst_id = topology[source.port]["id"], topology[to.port]["id"]
        with to.client() as dst, source.client() as src:
            dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
            src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
            while keys := src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
                src.execute_command("MIGRATE", self.bind, to.port, "", 0, 5000, "KEYS", *keys)
            dst.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
            src.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
        for node in self._live():
            if node not in (source, to):
                try:  # the other primaries; a replica refuses and learns it from the bus
                    with node.client() as r:
                        r.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
                except redis.ResponseError:
                    pass
        self.wait_ok()

    def primary_of_slot(self, slot: int, topology: dict | None = None) -> RedisServer:
        for port, info in (topology or self.topology()).items():
            if (info["primary"] and not info["failed"]
                    and any(lo <= slot <= hi for lo, hi in info["slots"])):
                return self.node(port)
        raise RuntimeError(f"no primary serves slot {slot}")

    def primaries(self) -> list[RedisServer]:
        return [self.node(p) for p, i in self.topology().items()
                if i["primary"] and not i["failed"] and i["slots"]]


@contextmanager
def redis_cluster(*, node_timeout_ms: int = 2000, bind: str = "127.0.0.1"):
    """Six private nodes made a cluster of three primaries and three replicas."""
    root = Path(tempfile.mkdtemp(prefix="ww-cluster-"))
    nodes = [RedisServer(free_port(), root / f"node{i}",
                         ["--appendonly", "no", "--cluster-enabled", "yes",
                          "--cluster-config-file", "nodes.conf",
                          "--cluster-port", str(free_port()),  # not port + 10000: past 65535
                          "--cluster-node-timeout", str(node_timeout_ms)], bind=bind)
             for i in range(6)]
    group = ClusterGroup(nodes, bind=bind)
    try:
        for node in nodes:
            node.start()
        subprocess.run(["redis-cli", "--cluster", "create", *(f"{bind}:{n.port}" for n in nodes),
                        "--cluster-replicas", "1", "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        group.wait_ok()
        for primary in group.primaries():
            wait_replica_online(primary)
        yield group
    finally:
        for node in nodes:
            node.kill()
        shutil.rmtree(root, ignore_errors=True)
