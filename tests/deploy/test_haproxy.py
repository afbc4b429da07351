"""deploy/haproxy/haproxy.cfg run for real: the room-hashed socket backend spreads room codes
evenly over the replicas (the busiest replica limits a cluster: loadtest/README.md)."""
from __future__ import annotations

import http.client
import random
import shutil
import subprocess
import threading
import time
from collections import Counter
from contextlib import ExitStack
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
        replica = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/readyz":
                    replica.checked.set()
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


@pytest.mark.skipif(not shutil.which("haproxy"),
                    reason="the balancer is haproxy (scripts/bootstrap)")
def test_the_socket_backend_gives_each_replica_an_even_share_of_the_room_codes(tmp_path):
    port, replica_port = free_port(), free_port()
    # One port, four loopback addresses: the shipped config names replicas by address.
    replicas = [Replica(f"gateway{i}", (f"127.0.0.{i + 1}", replica_port))
                for i in range(1, REPLICAS + 1)]
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config(port, [(r.name, r.server_address[0]) for r in replicas],
                                     replica_port))
    with ExitStack() as stack:
        for replica in replicas:
            threading.Thread(target=replica.serve_forever, daemon=True).start()
            stack.callback(replica.server_close)
            stack.callback(replica.shutdown)
        balancer = subprocess.Popen(["haproxy", "-db", "-f", str(config)])
        stack.callback(stop, balancer)
        until = time.monotonic() + WAIT_S
        # Checked once each: HAProxy listens (it binds before it checks) and sees every replica.
        for replica in replicas:
            assert replica.checked.wait(max(0.0, until - time.monotonic())), replica.name
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
