"""A Ray head restart while games run (as root; not in CI: the GCS's reconnect takes a while).

    .venv/bin/python -m loadtest.head_restart [--rooms 2]

Three Ray nodes in network namespaces (devstack/netns.py): the head (no games, GCS fault tolerance:
its tables in a private Redis, `RAY_REDIS_ADDRESS`), one worker node offering the game-host
resource, and a gateway node with 0 CPUs where the gateway, the game Redis (append-only file) and
this script run, as deploy/README.md lays a cluster out. Rooms of 8 bots play; mid-game the whole
head node is killed (SIGKILL: GCS, raylet, agents) and started again on the same address. It
prints how long until the head answered again and every node was back, whether each room kept
playing meanwhile (commands travel by Redis inboxes, not Ray calls), and the lost acks (0).
"""
from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import time
from contextlib import ExitStack

from devstack.checks import lost_acks, stored_log
from devstack.failover import play_through_failover
from devstack.netns import (FAST_HEALTH_CHECKS, HOST_RESOURCE, RAY_GCS_PORT, alive_nodes,
                            netns_lan, ray_node, run_in_namespace, stop_node)
from devstack.players import Bot, connect_all, is_phase, seat_table, start
from devstack.redis_servers import redis_server
from devstack.stack import Stack
from loadtest.stack import tear_down_on_signals

HEAD, WORKER, GATEWAY = 0, 1, 2


async def run(lan, stack: ExitStack, nodes: dict, args) -> dict:
    games_redis = stack.enter_context(redis_server(bind=lan.ips[GATEWAY]))
    gcs_redis = stack.enter_context(redis_server(bind=lan.ips[GATEWAY]))
    head_env = {**FAST_HEALTH_CHECKS, "RAY_REDIS_ADDRESS": f"{lan.ips[GATEWAY]}:{gcs_redis.port}",
                "RAY_external_storage_namespace": "ww-head-restart"}
    nodes[HEAD] = ray_node(lan, HEAD, num_cpus=0, env=head_env)
    nodes[WORKER] = ray_node(lan, WORKER, head_ip=lan.ips[HEAD], resources={HOST_RESOURCE: 1000})
    nodes[GATEWAY] = ray_node(lan, GATEWAY, head_ip=lan.ips[HEAD], num_cpus=0)
    gateways = Stack(ray_address=f"{lan.ips[HEAD]}:{RAY_GCS_PORT}", redis_url=games_redis.url,
                     prefix="hr" + secrets.token_hex(4))
    stack.callback(gateways.close)
    gateway = gateways.start_gateway(env={"WW_HOST_RESOURCE": HOST_RESOURCE,
                                          "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"})
    tables = []
    for r in range(args.rooms):
        room, seats = await seat_table(gateway.url, 8)
        clients = await connect_all(gateway.ws_url, room, seats)
        await start(clients[0])
        games = [asyncio.create_task(play_through_failover(Bot(c, random.Random(100 * r + i)), room,
                                                           s["token"], gateway.ws_url))
                 for i, (c, s) in enumerate(zip(clients, seats))]
        tables.append((room, clients, games))
    await tables[-1][1][0].wait_for(is_phase)
    killed = time.monotonic()
    nodes[HEAD].kill()
    stop_node(nodes[HEAD])
    seqs_at_kill = {room: clients[0].last_seq for room, clients, _ in tables}
    await asyncio.sleep(args.down)  # the head stays down this long, games running
    moved_on = {room: clients[0].last_seq > seqs_at_kill[room] for room, clients, _ in tables}
    nodes[HEAD] = await asyncio.to_thread(ray_node, lan, HEAD, num_cpus=0, env=head_env)
    head_back = time.monotonic() - killed
    while await asyncio.to_thread(alive_nodes, lan, HEAD) < 3:
        await asyncio.sleep(0.5)  # polling the GCS while the nodes reconnect
    nodes_back = time.monotonic() - killed
    lost = finished = 0
    for room, _, games in tables:
        journeys = await asyncio.wait_for(asyncio.gather(*games), 300)
        log = await stored_log(games_redis.url, gateways.prefix, room)
        lost += len(lost_acks([c for j in journeys for c in j], log))
        finished += b'"game_over"' in log[-1]["frame"].encode()
    return {"head_back_s": head_back, "nodes_back_s": nodes_back, "moved_on": moved_on,
            "lost_acks": lost, "finished": finished, "rooms": len(tables)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=2)
    parser.add_argument("--down", type=float, default=8.0, help="seconds the head stays dead")
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    with netns_lan(3) as lan, ExitStack() as stack:
        nodes: dict = {}
        stack.callback(lambda: [stop_node(n) for n in nodes.values()])
        result = run_in_namespace(lan, GATEWAY, lambda: run(lan, stack, nodes, args))
    print(f"head killed and started again: it answered after {result['head_back_s']:.1f} s, "
          f"all three nodes alive after {result['nodes_back_s']:.1f} s")
    print(f"rooms that played on during the {args.down:.0f} s the head was down: "
          f"{sum(result['moved_on'].values())} of {result['rooms']}; "
          f"{result['finished']} of {result['rooms']} reached game_over; "
          f"lost acks {result['lost_acks']}")
    return 0 if result["lost_acks"] == 0 and result["finished"] == result["rooms"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
