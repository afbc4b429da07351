"""deploy/haproxy/haproxy.cfg run for real: the room-hashed socket backend spreads room codes
evenly over the replicas (the busiest replica limits a cluster: loadtest/README.md), and no
spelling of `/metrics` reaches a replica."""
from __future__ import annotations

import http.client
import random
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from actors.client import CODE_ALPHABET, CODE_LENGTH
from devstack.processes import stop
from devstack.ray_head import free_port
from loadtest.stack import haproxy_config

REPLICAS = 4
CODES = 3000
WAIT_S = 30.0


class Replica(ThreadingHTTPServer):
    """A stand-in gateway: answers every request with its name, and notes its health checks."""

    def __init__(self, name: str, address: tuple[str, int]) -> None:
        self.name = name
        self.checked = threading.Event()
        self.paths: list[str] = []  # every request's path but the health checks'
        replica = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/readyz":
                    replica.checked.set()
                else:
                    replica.paths.append(self.path)
                body = replica.name.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        super().__init__(address, Handler)

    def handle_error(self, request, client_address) -> None:
        pass  # HAProxy cuts its health checks' connections short


HAPROXY = pytest.mark.skipif(not shutil.which("haproxy"),
                             reason="the balancer is haproxy (scripts/bootstrap)")


@contextmanager
def balancer(tmp_path, replicas: int) -> Iterator[tuple[int, list[Replica]]]:
    """The shipped config in front of `replicas` stand-ins, each checked healthy once; yields
    the balancer's port and the stand-ins."""
    port, replica_port = free_port(), free_port()
    # One port, several loopback addresses: the shipped config names replicas by address.
    stand_ins = [Replica(f"gateway{i}", (f"127.0.0.{i + 1}", replica_port))
                 for i in range(1, replicas + 1)]
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config(port, [(r.name, r.server_address[0]) for r in stand_ins],
                                     replica_port))
    with ExitStack() as stack:
        for replica in stand_ins:
            threading.Thread(target=replica.serve_forever, daemon=True).start()
            stack.callback(replica.server_close)
            stack.callback(replica.shutdown)
        process = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
        stack.callback(stop, process)
        until = time.monotonic() + WAIT_S
        # Checked once each: HAProxy listens (it binds before it checks) and sees every replica.
        for replica in stand_ins:
            assert replica.checked.wait(max(0.0, until - time.monotonic())), replica.name
        yield port, stand_ins


@HAPROXY
def test_the_socket_backend_gives_each_replica_an_even_share_of_the_room_codes(tmp_path):
    with balancer(tmp_path, REPLICAS) as (port, _):
        rng = random.Random(20)
        served: Counter[str] = Counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        for _ in range(CODES):
            code = "".join(rng.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            connection.request("GET", f"/ws/{code}")
            response = connection.getresponse()
            assert response.status == 200
            served[response.read().decode()] += 1
    shares = {name: count / CODES for name, count in served.items()}
    assert len(shares) == REPLICAS, shares
    # At HAProxy's default weight the four shares came out 18-29 %.
    assert all(0.85 / REPLICAS < share < 1.15 / REPLICAS for share in shares.values()), shares


# Spellings of /metrics a gateway (uvicorn decodes the path) or a client's URL handling would
# take for it; `/%6detrics` passed a rule on the raw path.
METRICS = ["/metrics", "/metrics?x=1", "/%6detrics", "/%6Detrics", "/%6D%65%74rics",
           "/METRICS", "//metrics", "/./metrics", "/x/../metrics", "/%2e/metrics",
           "/%2fmetrics", "/metrics/", "/ws/../metrics"]


@HAPROXY
def test_no_spelling_of_metrics_reaches_a_replica(tmp_path):
    with balancer(tmp_path, 1) as (port, (replica,)):
        for path in METRICS + ["/healthz"]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            connection.close()
            assert response.status == (200 if path == "/healthz" else 404), path
    assert replica.paths == ["/healthz"]
