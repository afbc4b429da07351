"""Private redis-server processes for tests and scripts: never the shared 6379, each on a free port
with its own directory, killed (their own pids only) on exit.

    RedisServer(port, dir, *extra_args).start() / .kill() (SIGKILL: a crash) / .stop() / .url
    redis_server(appendonly=True, appendfsync="everysec")      context manager -> RedisServer
    sentinel_group(quorum=2, down_after_ms=1000) -> SentinelGroup (context manager):
        a primary, one replica and three sentinels; .url is the `redis+sentinel://` URL the
        project connects with, .primary / .replica the RedisServers, .current_primary() asks
        the sentinels, .wait_promoted(old_port) waits until they name another one.
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

from tests.ray_head import free_port

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
        return ["redis-server", "--port", str(self.port), "--bind", self.bind, "--dir", str(self.dir),
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
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

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
                    if int(master.get("num-slaves", 0)) >= 1 and int(master.get("num-other-sentinels", 0)) >= 2:
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
                          [*aof_args(appendfsync), "--replicaof", bind, str(primary.port)], bind=bind)
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
