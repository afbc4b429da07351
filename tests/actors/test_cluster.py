"""The real thing: RoomClient -> placement -> GameHost Ray actors -> Redis, on a private Ray
head."""
import asyncio
import itertools
import os
import signal
import sys

import orjson
import pytest
import ray

from actors.client import RoomClient
from actors.config import Config
from actors.room import RATE_LIMITS
from actors.refusals import NameTaken, RoomFull, RoomNotFound, RoomStarted
from actors.store import StorageUnavailable
from actors.subscriptions import Since
from devstack.redis_servers import redis_server
from devstack.stack import drop_actors, durations
from tests.actors.conftest import REDIS_URL
from tests.actors.players import act_frames
from tests.helpers import until

pytestmark = pytest.mark.e2e

SHORT = durations(1)


@pytest.fixture
async def cluster(ray_address, prefix, request):
    """A RoomClient on its own prefix and namespace; its actors are killed afterwards."""
    config = Config(redis_url=REDIS_URL, ray_address=ray_address, prefix=prefix, namespace=prefix,
                    games_per_actor=request.param, warm_actors=1, durations=SHORT)
    async with RoomClient(config) as rc:
        yield rc
        drop_actors(ray_address, prefix)


async def open_table(rc: RoomClient, players: int) -> tuple[str, list[str]]:
    created = await rc.create_room("Host")
    tokens = [created["token"]]
    for i in range(1, players):
        joined = await rc.join(created["room"], f"Player{i}")
        assert joined["seat"] == i
        tokens.append(joined["token"])
    return created["room"], tokens


async def play(rc: RoomClient, room: str, seats: int, queue: asyncio.Queue) -> list[dict]:
    """Answer every prompt until game_over; when nobody can act, wait for the next event."""
    ids = itertools.count()
    seen = []
    while True:
        acted = False
        for seat in range(seats):
            view = (await rc.welcome(room, seat))["view"]
            if view["status"] != "running":
                return seen
            for frame in act_frames(view, ids):
                acted |= (await rc.command(room, seat, frame))["type"] == "ack"
        taken = [await asyncio.wait_for(queue.get(), 30)] if not acted else []
        while not queue.empty():
            taken.append(queue.get_nowait())
        seen += [item for item in taken if not isinstance(item, Since)]  # the queue's start mark
        if any(orjson.loads(e["frame"])["kind"] == "game_over" for e in seen):
            return seen


def kinds(events: list[dict]) -> list[str]:
    return [orjson.loads(e["frame"])["kind"] for e in events]


@pytest.mark.parametrize("cluster", [1, 4], indirect=True, ids=["actor-per-game", "shared-actor"])
async def test_a_game_runs_from_lobby_to_game_over(cluster):
    rc = cluster
    room, tokens = await open_table(rc, 6)
    assert [await rc.authenticate(room, t) for t in tokens] == list(range(6))
    assert await rc.authenticate(room, "forged") is None
    with pytest.raises(NameTaken):
        await rc.join(room, "player1")
    lobby = await rc.lobby(room.lower())
    assert lobby["status"] == "lobby" and len(lobby["players"]) == 6
    async with rc.listen(room) as queue:
        welcome = await rc.welcome(room, 0)
        assert welcome["seq"] == 6
        assert await rc.command(room, 0,
                                {"type": "start", "id": "go"}) == {"type": "ack", "id": "go"}
        with pytest.raises(RoomStarted):
            await rc.join(room, "Late")
        await play(rc, room, 6, queue)
    log = await rc.events_after(room, 0)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    assert kinds(log)[-1] == "game_over"
    # game_over is published by the write that stores it, a moment before the room takes it as done
    async def caught_up() -> bool:
        return (await rc.welcome(room, 3))["seq"] == len(log)
    await until(caught_up, 10, "a welcome at the log's end")
    assert (await rc.welcome(room, 3))["view"]["status"] == "finished"
    assert (await rc.command(room, 0,
                             {"type": "chat", "id": 1, "text": "gg"}))["code"] == "room_closed"


@pytest.mark.parametrize("cluster", [1], indirect=True, ids=["actor-per-game"])
async def test_each_game_gets_its_own_actor_and_a_warm_one_waits(cluster):
    rc = cluster
    rooms = [(await rc.create_room(f"Host{i}"))["room"] for i in range(3)]
    pids = {(await rc.host_stats(room))["pid"] for room in rooms}
    assert len(pids) == 3
    await ray.get_actor(f"{rc.config.prefix}-placement",
                        namespace=rc.config.namespace).settled.remote()
    hosts = await rc.redis.zrange(rc.keys.hosts(), 0, -1, withscores=True)
    scores = [score for _, score in hosts]
    assert scores.count(1) == 3 and 0 in scores  # and a spare one is started


@pytest.mark.parametrize("cluster", [3], indirect=True, ids=["shared-actor"])
async def test_rooms_share_an_actor_up_to_the_setting(cluster):
    rc = cluster
    rooms = [(await rc.create_room(f"Host{i}"))["room"] for i in range(4)]
    names = [(await rc.host_stats(room))["name"] for room in rooms]
    assert names[0] == names[1] == names[2] != names[3]
    with pytest.raises(RoomNotFound):
        await rc.lobby("ZZZZZZ")
    room = rooms[0]
    for i in range(1, 18):
        await rc.join(room, f"P{i}")
    with pytest.raises(RoomFull):
        await rc.join(room, "P18")


@pytest.mark.parametrize("cluster", [2], indirect=True, ids=["shared-actor"])
async def test_a_killed_host_comes_back_with_every_acknowledged_action(cluster):
    rc = cluster
    room, _ = await open_table(rc, 6)
    neighbour, _ = await open_table(rc, 6)
    assert (await rc.host_stats(room))["name"] == (await rc.host_stats(neighbour))["name"]
    epoch = int(await rc.redis.hget(rc.keys.room(room), "epoch"))
    async with rc.listen(room) as queue:
        await rc.command(room, 0, {"type": "start", "id": "go"})
        # Chats keep flowing from the host seat while its process is killed under them.
        acked = []

        async def chatter():
            for n in itertools.count():
                view = (await rc.welcome(room, 0))["view"]
                if view["status"] != "running":
                    return
                if not view["channels"]:
                    continue  # a sleeping villager: the rate limit counts every line sent
                reply = await rc.command(room, 0,
                                         {"type": "chat", "id": f"c{n}", "text": f"line {n}"})
                if reply["type"] == "ack":
                    acked.append(f"line {n}")
                if len(acked) >= 8:  # the burst of 5, then one a second
                    return

        talking = asyncio.create_task(chatter())
        pid = (await rc.host_stats(room))["pid"]
        os.kill(pid, signal.SIGKILL)
        after = (await rc.host_stats(room))["pid"]
        assert after != pid
        await asyncio.wait_for(talking, 60)
        # With nobody acting, only the re-armed timers can move the game on.
        seq = (await rc.welcome(room, 0))["seq"]
        while True:
            event = await asyncio.wait_for(queue.get(), 30)
            if isinstance(event, Since) or event["seq"] <= seq:
                continue
            if orjson.loads(event["frame"])["kind"] == "phase":
                break
        await play(rc, room, 6, queue)
    log = await rc.events_after(room, 0)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    said = [orjson.loads(e["frame"])["text"]
            for e in log if orjson.loads(e["frame"])["kind"] == "chat"]
    for text in acked:
        assert said.count(text) == 1
    assert kinds(log)[-1] == "game_over"
    assert int(await rc.redis.hget(rc.keys.room(neighbour), "epoch")) == epoch + 1
    assert (await rc.lobby(neighbour))["status"] == "lobby"


@pytest.mark.parametrize("cluster", [2], indirect=True, ids=["shared-actor"])
async def test_concurrent_commands_to_a_room_apply_in_the_order_sent(cluster):
    rc = cluster
    room, _ = await open_table(rc, 1)
    count, _ = RATE_LIMITS["settings"]  # as many as a host may send at once
    frames = [{"type": "settings", "id": i, "durations": {"vote": 10 + i}} for i in range(count)]
    replies = await asyncio.gather(*(rc.command(room, 0, frame) for frame in frames))
    assert replies == [{"type": "ack", "id": i} for i in range(count)]
    applied = [orjson.loads(e["frame"])["settings"]["durations"]["vote"]
               for e in await rc.events_after(room, 1)]
    assert applied == [10 + i for i in range(count)]


GATEWAY_SCRIPT = """
import asyncio, json
from actors.client import RoomClient
from actors.config import Config

async def main():
    async with RoomClient(Config.from_env()) as rc:
        room = (await rc.create_room("Host"))["room"]
        for i in range(1, 6):
            await rc.join(room, f"P{i}")
        await rc.command(room, 0, {"type": "start", "id": 1})
        print(json.dumps({"room": room, "pid": (await rc.host_stats(room))["pid"]}))

asyncio.run(main())
"""


@pytest.mark.parametrize("cluster", [1], indirect=True, ids=["actor-per-game"])
async def test_games_outlive_the_gateway_that_created_them(cluster):
    rc = cluster
    config = rc.config
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "disabled",
           "REDIS_URL": config.redis_url, "RAY_ADDRESS": config.ray_address,
           "WW_PREFIX": config.prefix, "WW_NAMESPACE": config.namespace, "WW_GAMES_PER_ACTOR": "1",
           # the cluster's own durations: another value would be refused (ConfigMismatch)
           **{f"WW_DURATION_{phase.upper()}": str(s) for phase, s in config.durations.items()}}
    gateway = await asyncio.create_subprocess_exec(
        sys.executable, "-c", GATEWAY_SCRIPT, env=env, stdout=asyncio.subprocess.PIPE)
    out, _ = await asyncio.wait_for(gateway.communicate(), 120)
    assert gateway.returncode == 0
    created = orjson.loads(out.splitlines()[-1])
    # That driver is gone; its game is not.
    assert (await rc.host_stats(created["room"]))["pid"] == created["pid"]
    welcome = await rc.welcome(created["room"], 0)
    assert welcome["view"]["status"] == "running"


# Waits on a loaded machine: the ended game's host slot was released later than 10 s in two CI
# runs (88a8a66, dc95cb6), and not in 60 s once (b22780a): a release lost with its write's reply,
# or failed, was never tried again (fixed in 1ece4dc; the mark stays until CI runs show it gone).
@pytest.mark.flaky(reruns=1)
@pytest.mark.parametrize("cluster", [1], indirect=True, ids=["actor-per-game"])
async def test_hosts_emptied_by_ended_games_are_stopped_and_their_rooms_still_read(cluster):
    rc = cluster
    ended, _ = await open_table(rc, 6)
    live, _ = await open_table(rc, 6)
    async with rc.listen(ended) as queue:
        await rc.command(ended, 0, {"type": "start", "id": "go"})
        await play(rc, ended, 6, queue)
    ended_host = (await rc.host_stats(ended))["name"]
    # The store releases the host slot after the script that published game_over; the
    # placement's own maintenance (every MAINTAIN_EVERY s) may retire the emptied host first (None).
    seen = []  # the slot counts read, for the failure's message

    async def released() -> bool:
        seen.append(rooms := await rc.redis.zscore(rc.keys.hosts(), ended_host))
        return rooms in (0, None)
    try:
        await until(released, 60, f"{ended_host}'s slot released")
    except TimeoutError:
        pytest.fail(f"{ended_host}'s slot count stayed {sorted(set(seen))}; its rooms: "
                    f"{await rc.redis.smembers(rc.keys.host_rooms(ended_host))}, ended: {ended}")
    placement = ray.get_actor(f"{rc.config.prefix}-placement", namespace=rc.config.namespace)
    await placement.maintain.remote()
    assert await rc.redis.zscore(rc.keys.hosts(), ended_host) is None
    assert (await rc.welcome(ended, 2))["view"]["status"] == "finished"
    assert (await rc.lobby(ended))["status"] == "finished"
    assert (await rc.command(ended, 0,
                             {"type": "chat", "id": 9, "text": "gg"}))["code"] == "room_closed"
    await rc.presence(ended, 0, False)
    with pytest.raises(RoomStarted):
        await rc.join(ended, "Late")
    assert await rc.command(live, 0, {"type": "start", "id": "go"}) == {"type": "ack", "id": "go"}


@pytest.fixture
async def outage(ray_address, prefix, request):
    """A RoomClient whose Redis is a private redis-server (append-only file) that the test kills
    and starts again; its requests retry for `request.param` seconds."""
    with redis_server() as server:
        config = Config(redis_url=server.url, ray_address=ray_address, prefix=prefix,
                        namespace=prefix, games_per_actor=10, warm_actors=1,
                        request_patience=request.param)
        async with RoomClient(config) as rc:
            yield server, rc
            if server.process.poll() is not None:
                await asyncio.to_thread(server.start)
            drop_actors(ray_address, prefix)


async def slots_taken(rc: RoomClient) -> float:
    return sum(score for _, score in await rc.redis.zrange(rc.keys.hosts(), 0, -1, withscores=True))


async def room_keys(rc: RoomClient) -> set[bytes]:
    return {key async for key in rc.redis.scan_iter(match=rc.keys.room("*"))}


@pytest.mark.parametrize("outage", [60.0], indirect=True)  # longer than any restart
async def test_a_creation_that_redis_interrupts_waits_for_it(outage):
    server, rc = outage
    place = rc._place
    restarted = []

    async def place_then_redis_restarts():
        host = await place()
        server.kill()  # just after the host slot was reserved
        restarted.append(asyncio.create_task(asyncio.to_thread(server.start)))
        return host
    rc._place = place_then_redis_restarts
    created = await rc.create_room("Layla")
    await restarted[0]
    assert (await rc.join(created["room"], "Omar"))["seat"] == 1
    assert await slots_taken(rc) == 1


@pytest.mark.parametrize("outage", [1.0], indirect=True)
async def test_a_creation_given_up_leaves_nothing_half_made(outage):
    server, rc = outage
    assert (await rc.create_room("Layla"))["seat"] == 0
    kept = await room_keys(rc)
    place, claim_code = rc._place, rc._claim_code

    async def place_then_redis_dies():
        host = await place()
        server.kill()
        return host

    async def claim_then_redis_dies(host):
        code = await claim_code(host)
        server.kill()
        return code
    # Redis dies after the slot, or after the slot and the code, and stays away: the request gives
    # up, and once Redis is back the slot and the code are free again.
    for rc._place, rc._claim_code in ((place_then_redis_dies, claim_code),
                                      (place, claim_then_redis_dies)):
        with pytest.raises(StorageUnavailable):
            await rc.create_room("Ines")
        await asyncio.to_thread(server.start)
        await until(lambda: slots_are(rc, 1), 30, "the client's slot given back")
        assert await room_keys(rc) == kept
    rc._place, rc._claim_code = place, claim_code
    assert (await rc.create_room("Tariq"))["seat"] == 0
    assert await slots_taken(rc) == 2


async def slots_are(rc: RoomClient, count: int) -> bool:
    return await slots_taken(rc) == count
