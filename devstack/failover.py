"""Playing through a failure: a bot whose socket dies reconnects elsewhere and plays on, and the
pid of the Ray actor hosting a room (to kill it)."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from websockets.exceptions import ConnectionClosed

from devstack.players import Bot
from devstack.stack import connect


async def play_through_failover(bot: Bot, room: str, token: str, ws_url: str) -> list:
    """Play to game_over; if the socket dies, reconnect to `ws_url` with `since` and go on.
    Returns the clients used, in order."""
    clients = [bot.client]
    try:
        await bot.play()
    except (ConnectionError, ConnectionClosed):
        bot.client = await connect(ws_url, room, token, since=clients[0].last_seq)
        clients.append(bot.client)
        await bot.play()
    return clients


async def host_pid(stack, room: str) -> int:
    """Ask Ray (from a separate driver process) for the pid of the actor hosting `room`."""
    script = (
        "import asyncio, sys, ray\n"
        "from actors.redis_connect import connect\n"  # a redis+sentinel:// URL too
        "from actors.store import Keys\n"
        "key = Keys(sys.argv[3]).room(sys.argv[4])\n"
        "host = asyncio.run(connect(sys.argv[2]).hget(key, 'host')).decode()\n"
        "ray.init(address=sys.argv[1], namespace='werewolf', log_to_driver=False)\n"
        "print(ray.get(ray.get_actor(host).stats.remote())['pid'])\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stack.ray_address, stack.redis_url, stack.prefix, room,
        stdout=subprocess.PIPE, env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                                     "RAY_AUTH_MODE": "disabled"})
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return int(out.decode().split()[-1])
