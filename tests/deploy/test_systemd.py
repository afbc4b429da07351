"""deploy/systemd as an operator installs them: three machines (containers with systemd as PID 1:
the head, a game-host worker, a gateway) from the deployment image with the units and
/etc/werewolf/env, plus Redis. The head's unit makes Ray's token; it is copied to the others as the
README says; the units come up; a room plays a whole game; a raylet killed with SIGKILL is
restarted by systemd and its node rejoins (a second room plays on it)."""
from __future__ import annotations

import asyncio
import random
import subprocess

import pytest

from devstack.players import Bot, connect_all, seat_table, start
from devstack.stack import TEST_DURATIONS
from tests.deploy.docker import (READY_TIMEOUT, ROOT, Network, build_image, remove_leftovers)
from tests.helpers import until_sync

pytestmark = [pytest.mark.deploy, pytest.mark.timeout(900)]

SYSTEMD_IMAGE = "werewolf-deploy-systemd:test"
TOKEN = "/var/lib/werewolf/.ray/auth_token"
UNITS = {"head": ["werewolf-ray-head"], "worker": ["werewolf-ray-worker"],
         "gateway": ["werewolf-ray-gateway-node", "werewolf-gateway"]}
# systemd in a container: no --privileged here, SYS_ADMIN is enough for its mounts.
SYSTEMD_OPTIONS = ("--cap-add", "SYS_ADMIN", "--tmpfs", "/run", "--tmpfs", "/run/lock",
                   "-v", "/sys/fs/cgroup:/sys/fs/cgroup:ro", "-e", "container=docker",
                   "--stop-signal", "SIGRTMIN+3")


def build_systemd_image(base: str) -> str:
    dockerfile = (f"FROM {base}\n"
                  "COPY deploy/systemd/*.service /etc/systemd/system/\n"
                  "RUN mkdir -p /etc/werewolf && systemctl mask redis-server.service\n"
                  'CMD ["/sbin/init"]\n')
    subprocess.run(["docker", "build", "-q", "-t", SYSTEMD_IMAGE, "-f", "-", str(ROOT)],
                   input=dockerfile, text=True, check=True, capture_output=True, timeout=600)
    return SYSTEMD_IMAGE


def env_file() -> str:
    lines = (ROOT / "deploy/systemd/env.example").read_text().splitlines()
    settings = {"RAY_HEAD": "head", "REDIS_URL": "redis://redis:6379/0", "WW_WARM_ACTORS": "1",
                "WW_METRICS_TOKEN": "systemd-test-scrape",
                **{f"WW_DURATION_{k.upper()}": str(v) for k, v in TEST_DURATIONS.items()}}
    out = [line for line in lines if line.split("=", 1)[0] not in settings]
    return "\n".join(out + [f"{k}={v}" for k, v in settings.items()]) + "\n"


def put(net: Network, alias: str, path: str, text: str, mode: str) -> None:
    subprocess.run(["docker", "exec", "-i", net.containers[alias], "sh", "-c",
                    f"umask 077; mkdir -p $(dirname {path}) && cat > {path}"
                    f" && chmod {mode} {path}"],
                   input=text, text=True, check=True, timeout=60)


def active(net: Network, alias: str, unit: str) -> bool:
    return net.exec(alias, "systemctl", "is-active", unit, check=False) == "active"


def alive_nodes(net: Network) -> set[str]:
    """The IDs of the nodes the head's GCS counts alive (none while it cannot be asked)."""
    out = net.exec("head", "sh", "-c", f"RAY_AUTH_TOKEN_PATH={TOKEN} RAY_AUTH_MODE=token "
                   "/opt/werewolf/.venv/bin/python -c \"import ray; ray.init(address='auto', "
                   "log_to_driver=False); print('nodes', *(n['NodeID'] for n in ray.nodes() "
                   "if n['Alive']))\"", check=False)
    line = next((line for line in out.splitlines() if line.startswith("nodes")), "nodes")
    return set(line.split()[1:])


async def play_a_game(url: str) -> None:
    room, seats = await seat_table(url, 6)
    clients = await connect_all(url.replace("http", "ws", 1), room, seats)
    bots = [Bot(c, random.Random(i)) for i, c in enumerate(clients)]
    await start(clients[0])
    endings = await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), 240)
    assert all(e["kind"] == "game_over" for e in endings)
    for client in clients:
        await client.close()


def print_journals(net: Network) -> None:
    for alias in UNITS:
        print(f"--- {alias}\n" + net.exec(alias, "journalctl", "--no-pager", "-n", "120",
                                          check=False))


@pytest.fixture(scope="module")
def machines(docker_engine):
    remove_leftovers()
    image = build_image()
    systemd_image = build_systemd_image(image)
    net = Network()
    try:
        net.run("redis", "redis-server", "--bind", "0.0.0.0", "--protected-mode", "no",
                "--save", "", "--appendonly", "no", image=image)
        for alias in UNITS:
            net.run(alias, image=systemd_image, options=SYSTEMD_OPTIONS,
                    publish="127.0.0.1::8000" if alias == "gateway" else None)
            until_sync(lambda: net.exec(alias, "systemctl", "is-system-running", check=False)
                       in ("running", "degraded"), READY_TIMEOUT, f"systemd runs in {alias}")
            put(net, alias, "/etc/werewolf/env", env_file(), "640")
        yield net
    except BaseException:
        print_journals(net)
        raise
    finally:
        net.close()


def test_the_units_come_up_a_room_plays_and_a_killed_raylet_rejoins(machines):
    try:
        come_up_play_kill_and_play_again(machines)
    except BaseException:
        print_journals(machines)
        raise


def come_up_play_kill_and_play_again(net: Network) -> None:
    net.exec("head", "systemctl", "start", "werewolf-ray-head")
    until_sync(lambda: len(alive_nodes(net)) == 1, READY_TIMEOUT, "the head is up")
    assert net.exec("head", "stat", "-c", "%a", TOKEN) == "600"
    token = net.exec("head", "cat", TOKEN)
    for alias in ("worker", "gateway"):
        put(net, alias, TOKEN, token, "600")
        net.exec(alias, "systemctl", "start", *UNITS[alias])
    until_sync(lambda: len(alive_nodes(net)) == 3, READY_TIMEOUT,
               "the worker and gateway nodes join")
    before = alive_nodes(net)
    url = f"http://{net.published('gateway', 8000)}"
    until_sync(lambda: net.exec("gateway", "curl", "-sf", "localhost:8000/readyz", check=False),
               READY_TIMEOUT, "the gateway is ready")
    assert all(active(net, alias, unit) for alias, units in UNITS.items() for unit in units)
    asyncio.run(play_a_game(url))

    raylet = net.exec("worker", "pgrep", "-x", "raylet")
    net.exec("worker", "kill", "-KILL", raylet)
    until_sync(lambda: int(net.exec("worker", "systemctl", "show", "-p", "NRestarts", "--value",
                                    "werewolf-ray-worker")) >= 1,
               READY_TIMEOUT, "systemd restarts the worker")
    until_sync(lambda: active(net, "worker", "werewolf-ray-worker")
               and net.exec("worker", "pgrep", "-x", "raylet", check=False) not in ("", raylet),
               READY_TIMEOUT, "a new raylet runs")
    # Rejoined: the GCS has marked the killed node dead (its health checks take a while to fail,
    # and until then it still counts three nodes, the dead one's hosts among them) and counts the
    # restarted raylet as a new node.
    until_sync(lambda: len(now := alive_nodes(net)) == 3 and now != before, READY_TIMEOUT,
               "the restarted worker rejoins as a new node")
    # The only node offering werewolf_host is the restarted one: a new room plays on it.
    asyncio.run(play_a_game(url))
