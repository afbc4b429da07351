"""Placement on the real Redis, with host starts recorded instead of performed (no Ray here)."""
import asyncio

from actors.config import Config
from actors.placement import Placement


def placement(redis, prefix, *, games_per_actor: int, warm_actors: int, unhosted_node=None,
              nodes: dict | None = None, retire_first=None):
    """`nodes`, if given, records host name -> the node it was asked to start on."""
    started: list[str] = []
    stopped: list[str] = []

    async def start_host(name: str, node: str | None) -> None:
        started.append(name)
        if nodes is not None:
            nodes[name] = node

    config = Config(prefix=prefix, games_per_actor=games_per_actor, warm_actors=warm_actors)
    async def stop_host(name: str) -> None:
        stopped.append(name)

    return (Placement(config, redis, start_host, stop_host, unhosted_node=unhosted_node,
                      retire_first=retire_first), started, stopped)


async def test_rooms_fill_one_host_before_the_next(redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=3, warm_actors=1)
    await p.restore()
    assert started == [f"{prefix}-host-000001"]  # the warm one
    hosts = []
    for _ in range(7):
        hosts.append(await p.place())
        await p.settled()
    assert hosts == ([f"{prefix}-host-000001"] * 3 + [f"{prefix}-host-000002"] * 3
                     + [f"{prefix}-host-000003"])
    assert started == [f"{prefix}-host-{i:06d}" for i in range(1, 5)]  # always one empty spare


async def test_rooms_arriving_together_start_only_the_hosts_they_fill(redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=4, warm_actors=0)
    await p.restore()
    hosts = await asyncio.gather(*(p.place() for _ in range(10)))
    assert sorted(set(hosts)) == [f"{prefix}-host-{i:06d}" for i in range(1, 4)]  # 4 + 4 + 2
    assert len(started) == 3


async def test_a_room_told_no_slot_just_before_a_host_came_up_takes_again_instead_of_starting_one(
        redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=4, warm_actors=0)
    for _ in range(8):
        await p.place()  # two hosts, full
    record, take = p._start_host, p._take
    starting, answered = asyncio.Event(), asyncio.Event()
    tenth = None

    async def start_once_answered(name: str, node: str | None) -> None:
        starting.set()
        await answered.wait()
        await record(name, node)

    async def take_answered_late() -> str | None:
        name = await take()
        if asyncio.current_task() is tenth and not answered.is_set():
            answered.set()  # "no slot": host 3 is not up yet...
            await asyncio.wait_for(asyncio.shield(ninth), 10)  # ...and is by the time this arrives
        return name

    p._start_host, p._take = start_once_answered, take_answered_late
    ninth = asyncio.create_task(p.place())
    await asyncio.wait_for(starting.wait(), 10)
    tenth = asyncio.create_task(p.place())
    assert await asyncio.wait_for(asyncio.gather(ninth, tenth), 10) == [f"{prefix}-host-000003"] * 2
    assert started == [f"{prefix}-host-{i:06d}" for i in range(1, 4)]


async def test_rooms_arriving_together_start_only_the_hosts_they_fill_the_first_start_ending_first(
        redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=4, warm_actors=0)
    gates: dict[str, asyncio.Event] = {}

    # each start ends only when the test says
    async def slow_start(name: str, node: str | None) -> None:
        started.append(name)
        await gates.setdefault(name, asyncio.Event()).wait()

    p._start_host = slow_start
    rooms = [asyncio.create_task(p.place()) for _ in range(10)]
    names = [f"{prefix}-host-{i:06d}" for i in range(1, 4)]

    async def until_placed(count: int) -> None:
        while sum(room.done() for room in rooms) < count:
            await asyncio.wait([r for r in rooms if not r.done()], timeout=10,
                               return_when=asyncio.FIRST_COMPLETED)

    await until_placed(0)
    while len(started) < 3:  # the three starts the ten rooms need, side by side
        await asyncio.sleep(0)
    # each start ends while the next still runs
    for name, placed in zip(sorted(started), (4, 8, 10)):
        gates.setdefault(name, asyncio.Event()).set()
        await asyncio.wait_for(until_placed(placed), 10)
    hosts = [room.result() for room in rooms]
    assert sorted(set(hosts)) == names and sorted(started) == names


async def test_one_game_per_actor_is_the_same_code(redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=1, warm_actors=2)
    await p.restore()
    assert len(started) == 2
    hosts = await asyncio.gather(*(p.place() for _ in range(5)))
    await p.settled()
    assert len(set(hosts)) == 5
    # hosts started side by side may overshoot
    assert await redis.zcount(f"{prefix}:hosts", 0, 0) >= 2


async def test_an_ended_room_frees_its_slot(redis, prefix):
    p, started, _ = placement(redis, prefix, games_per_actor=1, warm_actors=0)
    first = await p.place()
    await redis.zincrby(f"{prefix}:hosts", -1, first)  # what the final persist does
    assert await p.place() == first
    assert started == [first]


async def test_a_restored_placement_restarts_every_known_host(redis, prefix):
    p, _, _ = placement(redis, prefix, games_per_actor=2, warm_actors=1)
    await p.restore()
    await p.place()
    await p.settled()
    again, started, _ = placement(redis, prefix, games_per_actor=2, warm_actors=1)
    await again.restore()
    assert sorted(started) == [f"{prefix}-host-000001", f"{prefix}-host-000002"]


async def test_spares_beyond_the_warm_ones_are_stopped(redis, prefix):
    p, started, stopped = placement(redis, prefix, games_per_actor=1, warm_actors=1)
    hosts = [await p.place() for _ in range(3)]
    await p.settled()
    for name in hosts[:2]:  # two rooms end: their hosts are empty again
        await redis.zincrby(f"{prefix}:hosts", -1, name)
    gone = await p.maintain()
    assert len(gone) == 2 and stopped == gone
    assert await redis.zcount(f"{prefix}:hosts", 0, 0) == 1
    assert await redis.zscore(f"{prefix}:hosts", hosts[2]) == 1  # the live room's host stays


async def test_no_host_starts_past_the_cap(redis, prefix):
    started: list[str] = []

    async def start_host(name: str, node: str | None) -> None:
        started.append(name)

    async def stop_host(name: str) -> None:
        pass

    config = Config(prefix=prefix, games_per_actor=2, warm_actors=1)
    p = Placement(config, redis, start_host, stop_host, host_cap=lambda: 2)
    await p.restore()
    hosts = [await p.place() for _ in range(5)]
    await p.settled()
    assert hosts == [f"{prefix}-host-000001"] * 2 + [f"{prefix}-host-000002"] * 2 + [None]
    assert len(started) == 2  # the spare was not topped up past the cap either


def node(node_id, alive=True, resource=1000.0):
    return {"NodeID": node_id, "Alive": alive,
            "Resources": {"werewolf_host": resource} if resource else {}}


def test_the_hosts_of_each_live_node_offering_the_resource_are_read_with_its_slots():
    from actors.placement import hosts_per_node, node_slots

    def actor(name, node_id, state="ALIVE"):
        return {"Name": name, "State": state, "Address": {"NodeID": node_id}}

    nodes = [node("a"), node("b"), node("gateway", resource=0), node("dead", alive=False)]
    actors = [actor("p-host-000001", "a"), actor("p-host-000002", "b"), actor("p-host-000003", "a"),
              actor("q-host-000001", "b"), actor("q-host-000002", "b"),  # another prefix's
              actor("p-host-000004", "b", state="DEAD"), actor("p-placement", "b")]
    assert hosts_per_node(nodes, actors, "p", "werewolf_host") == {
        "a": ["p-host-000001", "p-host-000003"], "b": ["p-host-000002"]}
    assert node_slots(nodes, "werewolf_host") == {"a": 1000, "b": 1000, "gateway": 0}


def test_a_new_host_spreads_over_the_nodes_with_slots_but_not_onto_an_emptying_one():
    from actors.placement import node_for_host

    slots = {"a": 6, "b": 6, "c": 6}  # three hosts of 2 rooms each
    seen = {"a", "b", "c"}
    hosted = {"a": ["h1", "h2"], "b": ["h3"], "c": ["h4", "h5"]}
    rooms = {"h1": 2, "h2": 1, "h3": 1, "h4": 0, "h5": 0}  # c ran hosts and holds no room
    assert node_for_host(hosted, slots, rooms, 2, seen) == "b"  # the fewest hosts
    assert node_for_host({**hosted, "b": ["h3", "h6", "h7"]}, slots, rooms, 2, seen) == "a"
    # A node that joins (never ran a host) takes the next one: the load spreads onto it.
    assert node_for_host({**hosted, "d": []}, {**slots, "d": 6}, rooms, 2, seen) == "d"
    # The others full: the emptying node takes it rather than the cluster growing.
    full = {"a": ["h1", "h2", "h8"], "b": ["h3", "h6", "h7"], "c": ["h4", "h5"]}
    assert node_for_host(full, slots, rooms, 2, seen) == "c"
    # No room anywhere: packed on the node running the most, so the others can be removed.
    assert node_for_host({"a": ["h1"], "b": ["h2"], "c": []}, slots, {}, 2, seen) == "a"
    assert node_for_host({"a": [], "b": []}, slots, {}, 2, set()) == "a"  # a new cluster
    # No slots anywhere: none named, the host waits for a node (the autoscaler's demand).
    assert node_for_host({**full, "c": ["h4", "h5", "h9"]}, slots, rooms, 2, seen) is None
    assert node_for_host({}, {}, {}, 2, set()) is None


def test_spares_on_nodes_without_rooms_are_stopped_first():
    from actors.placement import retire_order

    hosted = {"a": ["h1", "h2"], "b": ["h3", "h4"], "c": ["h5"]}
    rooms = {"h1": 3, "h2": 0, "h3": 0, "h4": 0, "h5": 0}
    # b and c hold no room: theirs go first (c's single host before b's two); a's spare is kept.
    assert retire_order(["h2", "h3", "h4", "h5", "gone"], hosted, rooms) == [
        "gone", "h5", "h3", "h4", "h2"]


def test_a_node_that_joined_is_one_that_never_ran_a_host_not_one_emptied_for_removal():
    from actors.placement import joined_node

    hosted = {"a": ["h1"], "b": [], "c": []}
    assert joined_node(hosted, {"a", "b"}) == "c"  # b ran hosts once: it is emptying
    assert joined_node(hosted, {"a", "b", "c"}) is None


async def test_a_host_that_still_lists_a_room_is_not_stopped_whatever_its_count(redis, prefix):
    # A count can go wrong (a creation given up while its host still opened the room): a host
    # whose games run must not be stopped for it, or every one of them is lost.
    p, _, stopped = placement(redis, prefix, games_per_actor=1, warm_actors=0)
    hosts = [await p.place() for _ in range(2)]
    await p.settled()
    for name in hosts:
        await redis.zincrby(f"{prefix}:hosts", -1, name)
    await redis.sadd(f"{prefix}:host:{{{hosts[0]}}}:rooms", "ABCDEF")  # still running there
    assert await p.maintain() == [hosts[1]] == stopped
    assert await redis.zscore(f"{prefix}:hosts", hosts[0]) == 0


async def test_maintenance_stops_the_spares_in_the_order_given_keeping_the_warm_ones(redis, prefix):
    asked: list[list[str]] = []

    async def retire_first(idle: list[str]) -> list[str]:
        asked.append(idle)
        return list(reversed(idle))  # the newest first

    p, started, stopped = placement(redis, prefix, games_per_actor=1, warm_actors=1,
                                    retire_first=retire_first)
    hosts = [await p.place() for _ in range(3)]
    await p.settled()
    for name in hosts:
        await redis.zincrby(f"{prefix}:hosts", -1, name)
    gone = await p.maintain()
    every = sorted(started)  # the rooms' three hosts and the spare, all empty now
    assert asked == [every]  # oldest first
    assert gone == stopped == every[:0:-1]  # the newest three: one spare is kept, the oldest
    assert [n.decode() for n in await redis.zrange(f"{prefix}:hosts", 0, -1)] == every[:1]
    assert await p.maintain() == [] and len(asked) == 1  # nothing beyond the spare: not asked


async def test_a_host_that_finds_no_node_in_time_is_given_up_and_its_room_refused(redis, prefix):
    stopped: list[str] = []

    async def start_host(name: str, node: str | None) -> None:
        await asyncio.Event().wait()  # no node has its slots and none is added

    async def stop_host(name: str) -> None:
        stopped.append(name)

    config = Config(prefix=prefix, games_per_actor=2, warm_actors=0, host_start_wait=0.01)
    p = Placement(config, redis, start_host, stop_host)
    assert await p.place() is None
    assert stopped == [f"{prefix}-host-000001"]
    assert await redis.zcard(f"{prefix}:hosts") == 0


async def test_a_node_that_joins_takes_the_next_room_on_a_host_of_its_own(redis, prefix):
    unhosted: list[str | None] = [None]

    async def unhosted_node() -> str | None:
        return unhosted[0]

    nodes: dict = {}
    p, started, _ = placement(redis, prefix, games_per_actor=3, warm_actors=1,
                              unhosted_node=unhosted_node, nodes=nodes)
    await p.restore()
    first = [await p.place() for _ in range(2)]
    assert first == [f"{prefix}-host-000001"] * 2  # filling the first host, one slot left
    await p.settled()
    unhosted[0] = "node-c"  # a node joined: it runs none of our hosts
    joined = await p.place()
    assert nodes[joined] == "node-c" and joined not in first
    # Its host fills like any other (the fullest with a slot first: host 1's last slot, then it),
    # with no second start there, even while the count of hosts per node still says none.
    assert [await p.place() for _ in range(3)] == [f"{prefix}-host-000001", joined, joined]
    assert list(nodes.values()).count("node-c") == 1


async def test_a_start_that_ends_while_the_hosts_are_counted_still_counts(
        redis, prefix, monkeypatch):
    started: list[str] = []
    spare_starting, release = asyncio.Event(), asyncio.Event()

    async def start_host(name: str, node: str | None) -> None:
        started.append(name)
        if len(started) == 2:  # the spare after the first room: still starting when a room asks
            spare_starting.set()
            await release.wait()

    async def stop_host(name: str) -> None:
        pass

    config = Config(prefix=prefix, games_per_actor=1, warm_actors=1)
    p = Placement(config, redis, start_host, stop_host, host_cap=lambda: 2)
    await p.restore()
    await p.place()  # fills the first host; the top-up starts the second
    await asyncio.wait_for(spare_starting.wait(), 5)
    count_hosts = redis.zcard

    async def count_then_let_the_spare_finish(key):
        hosts = await count_hosts(key)  # answered before the spare's ZADD
        release.set()
        await asyncio.wait_for(p.settled(), 5)  # its ZADD done, its start no longer in progress
        return hosts

    monkeypatch.setattr(redis, "zcard", count_then_let_the_spare_finish)
    await p.place()
    await p.settled()
    assert started == [f"{prefix}-host-000001", f"{prefix}-host-000002"]  # the cap is two
