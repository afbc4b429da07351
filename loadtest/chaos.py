"""Chaos: while rooms play, kill at random a gateway, a game host, a Ray worker node and the Redis
primary, several times; then count what was lost.

    .venv/bin/python -m loadtest.chaos --rooms 6 --faults 8 --every 12     # as root

The cluster is real and on this machine only: three Ray nodes in network namespaces
(devstack/netns.py: head + two worker nodes offering the game-host resource), a Redis primary, its
replica and three sentinels (devstack/redis_servers.py) with WAIT 1, and two gateways; all of it,
and this script's own sockets, inside those namespaces. `--rooms` tables of 8 bots
(devstack/players.py, 2 s phases) play game after game; a bot whose socket dies reconnects to a live
gateway with `since`.

Every `--every` seconds one fault, the kinds taken in a shuffled cycle so each comes up:
  gateway   SIGKILL a gateway process tree, start a new one
  host      SIGKILL the Ray actor process hosting a random running room (Ray restarts it)
  node      SIGKILL a whole Ray worker node (raylet, workers, agents), start it again
  redis     SIGKILL the Redis primary; Sentinel promotes the replica; the dead one is started
            again (its supervisor's job) and rejoins as a replica
After each fault every running room's host seat sends a chat line; the seconds until the room
answered it is that room's recovery time. At the end, for every game played: acknowledged chat
lines missing from the stored log (lost acks), sockets that saw an event twice or out of order,
and rooms that did not reach game_over within --stuck-after seconds of their last event (stuck).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import signal
import time
from contextlib import ExitStack

from devstack.checks import lost_acks, stored_log
from devstack.failover import host_pid
from devstack.netns import (FAST_HEALTH_CHECKS, HOST_RESOURCE, RAY_GCS_PORT, netns_lan,
                            ray_node, run_in_namespace, stop_node)
from devstack.players import Bot, connect_all, seat_table, start
from devstack.redis_servers import sentinel_group
from devstack.stack import Stack, connect
from loadtest.stack import LOAD_LIMITS, tear_down_on_signals

KINDS = ("gateway", "host", "node", "redis")
# Every table plays game after game from one address: the per-address limits are off (LOAD_LIMITS).
GATEWAY_ENV = {**LOAD_LIMITS, "WW_HOST_RESOURCE": HOST_RESOURCE,
               "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1", "WW_REDIS_WAIT": "1"}


class Chaos:
    def __init__(self, lan, group, nodes: list, stack: Stack, args) -> None:
        self.lan, self.group, self.nodes, self.stack, self.args = lan, group, nodes, stack, args
        self.rng = random.Random(args.seed)
        self.running: dict[str, list] = {}  # room -> its clients (current sockets)
        self.games: list[dict] = []  # one per game: room, journeys, outcome
        self.recoveries: list[tuple[str, str, float]] = []  # (fault, room, seconds)
        self.stop = asyncio.Event()

    def live_gateway(self):
        return self.rng.choice([g for g in self.stack.gateways if g.process.poll() is None])

    # -- the load ------------------------------------------------------------------------

    async def table(self, n: int) -> None:
        while not self.stop.is_set():
            gateway = self.live_gateway()
            try:
                room, seats = await seat_table(gateway.url, 8)
                clients = await connect_all(gateway.ws_url, room, seats)
                await start(clients[0])
            except Exception as e:  # a fault hit the setup: that table tries again
                print(f"table {n}: could not open a game ({e!r}); again", flush=True)
                await asyncio.sleep(1)
                continue
            self.running[room] = clients
            journeys = await asyncio.gather(*(self.seat(room, c, s["token"], i)
                                              for i, (c, s) in enumerate(zip(clients, seats))))
            self.running.pop(room, None)
            self.games.append({"room": room, "journeys": journeys})

    async def seat(self, room: str, client, token: str, i: int) -> list:
        journey = [client]
        bot = Bot(client, random.Random(i))
        while True:
            try:
                await bot.play()
                return journey
            except (ConnectionError, OSError, asyncio.TimeoutError) as e:
                if isinstance(e, asyncio.TimeoutError):  # no event for the game's whole timeout
                    return journey + ["stuck"]
            except Exception:
                pass
            while True:  # the socket died with its gateway: resume on a live one
                try:
                    bot.client = await connect(self.live_gateway().ws_url, room, token,
                                               since=journey[-1].last_seq)
                    break
                except Exception:
                    await asyncio.sleep(0.5)
            if room in self.running:
                self.running[room][i] = bot.client
            journey.append(bot.client)

    # -- the faults ----------------------------------------------------------------------

    async def fault(self, kind: str) -> tuple[str, asyncio.Task]:
        """Kill one piece now; return what, and the task putting it back (its supervisor's job),
        which runs while the rooms are probed."""
        if kind == "gateway":
            victim = self.live_gateway()
            victim.kill()
            return f"gateway :{victim.port}", asyncio.create_task(
                asyncio.to_thread(self.stack.start_gateway, env=GATEWAY_ENV))
        if kind == "host":
            room = self.rng.choice(list(self.running))
            pid = await host_pid(self.stack, room)
            os.kill(pid, signal.SIGKILL)  # Ray itself restarts the actor
            return f"host of {room} (pid {pid})", asyncio.create_task(asyncio.sleep(0))
        if kind == "node":
            index = self.rng.choice([1, 2])
            self.nodes[index].kill()

            async def restart() -> None:
                stop_node(self.nodes[index])
                self.nodes[index] = await asyncio.to_thread(
                    ray_node, self.lan, index, head_ip=self.lan.ips[0],
                    resources={HOST_RESOURCE: 1000})

            return f"worker node {index}", asyncio.create_task(restart())
        primary = self.group.current_primary()
        server = next(s for s in (self.group.primary, self.group.replica) if s.port == primary[1])
        server.kill()

        async def restart() -> None:
            await asyncio.to_thread(self.group.wait_promoted, server.port)
            server.start()  # rejoins as the new primary's replica

        return f"redis primary :{server.port}", asyncio.create_task(restart())

    async def probe(self, what: str, killed: float) -> None:
        """Every running room's host seat asks until the room answers something other than
        `internal` (what a client does); the time from the kill is the room's recovery."""
        rooms = {room: clients[0] for room, clients in self.running.items()}

        async def one(room: str, client) -> None:
            give_up = time.monotonic() + 120
            while time.monotonic() < give_up:
                try:
                    reply = await client.request(
                        {"type": "chat", "text": f"probe {secrets.token_hex(3)}"}, timeout=120)
                except Exception:  # its socket died meanwhile (a gateway fault): its bot reconnects
                    return
                if reply["type"] == "ack" or reply.get("code") != "internal":
                    self.recoveries.append((what, room, time.monotonic() - killed))
                    return
                await asyncio.sleep(0.2)  # `internal`: retry, as a client would
            self.recoveries.append((what, room, float("inf")))

        await asyncio.gather(*(one(room, c) for room, c in rooms.items()))

    async def run(self) -> dict:
        for _ in range(2):
            await asyncio.to_thread(self.stack.start_gateway, env=GATEWAY_ENV)
        tables = [asyncio.create_task(self.table(n)) for n in range(self.args.rooms)]
        kinds: list[str] = []
        for k in range(self.args.faults):
            await asyncio.sleep(self.args.every)  # the load runs between two faults
            if not kinds:
                kinds = list(KINDS)
                self.rng.shuffle(kinds)
            kind = kinds.pop()
            if kind == "host" and not self.running:
                kind = "gateway"
            killed = time.monotonic()
            what, repair = await self.fault(kind)
            what = f"{k + 1}. {what}"
            await asyncio.gather(self.probe(what, killed), repair)
            print(f"fault {what}: put back after {time.monotonic() - killed:.1f} s",
                  flush=True)
        self.stop.set()
        await asyncio.wait_for(asyncio.gather(*tables), self.args.stuck_after + 120)
        return await self.report()

    async def report(self) -> dict:
        lost = duplicated = reordered = stuck = 0
        for game in self.games:
            journeys = game["journeys"]
            if any("stuck" in j for j in journeys):
                stuck += 1
                print(f"stuck: room {game['room']}", flush=True)
            log = await stored_log(self.group.url, self.stack.prefix, game["room"])
            clients = [c for j in journeys for c in j if c != "stuck"]
            lost += len(lost_acks(clients, log))
            for journey in journeys:
                seqs = [f["seq"] for c in journey if c != "stuck" for f in c.events]
                duplicated += len(seqs) - len(set(seqs))
                reordered += sum(b < a for a, b in zip(seqs, seqs[1:]))
        return {"games": len(self.games), "lost_acks": lost, "duplicated": duplicated,
                "reordered": reordered, "stuck": stuck, "recoveries": self.recoveries}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=6)
    parser.add_argument("--faults", type=int, default=8)
    parser.add_argument("--every", type=float, default=12.0, help="seconds of load between faults")
    parser.add_argument("--stuck-after", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    tear_down_on_signals()  # a `timeout` or Ctrl-C tears everything down, once
    prefix = "ch" + secrets.token_hex(5)
    with netns_lan(3) as lan, ExitStack() as stack:
        nodes: list = []
        stack.callback(lambda: [stop_node(n) for n in nodes])

        async def body() -> dict:
            group = stack.enter_context(sentinel_group(bind=lan.ips[0]))
            nodes.append(ray_node(lan, 0, env=FAST_HEALTH_CHECKS))
            for i in (1, 2):
                nodes.append(ray_node(lan, i, head_ip=lan.ips[0], resources={HOST_RESOURCE: 1000}))
            gateways = Stack(ray_address=f"{lan.ips[0]}:{RAY_GCS_PORT}", redis_url=group.url,
                             prefix=prefix)
            try:
                return await Chaos(lan, group, nodes, gateways, args).run()
            finally:  # here, in the namespace: its Ray head is not reachable from outside it
                gateways.close()

        result = run_in_namespace(lan, 0, body)
    by_room: dict[str, list] = {}
    for what, _room, seconds in result["recoveries"]:
        by_room.setdefault(what, []).append(seconds)
    print(f"\nchaos: {args.faults} faults, {result['games']} games played by {args.rooms} tables")
    for what, times in by_room.items():
        times.sort()
        print(f"  {what:<36} {len(times)} rooms answered again after "
              f"{', '.join(f'{t:.1f}' for t in times)} s")
    print(f"lost acks {result['lost_acks']}, duplicated events {result['duplicated']}, "
          f"reordered events {result['reordered']}, stuck rooms {result['stuck']}")
    bad = result["lost_acks"] + result["duplicated"] + result["reordered"] + result["stuck"]
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
