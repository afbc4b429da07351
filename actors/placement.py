"""Which host actor gets a new room.

Redis keeps the truth: `P:hosts`, a sorted set of host actor name -> rooms placed on it (the
persist script decrements it when a room ends). Picking a host is one Lua call that takes the
fullest host still below `games_per_actor` and counts the room in, so hosts fill up one after the
other and empty ones stay spare. `Placement` keeps `warm_actors` empty hosts started, so a new room
only waits for a process start when rooms arrive faster than hosts start, and every
`MAINTAIN_EVERY` seconds stops the empty hosts beyond those spares (hosts whose rooms all ended).
`games_per_actor=1` is the same code: every host is full with one room. Hosts are processes, so
their number is capped (`max_hosts`; by default what the Ray cluster's memory holds at
HOST_MEMORY_BYTES each): past it `place` answers None and the room is refused (server_full).

One named, detached `PlacementActor` per cluster runs it, so host starts are decided in one place.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import ray
import redis.asyncio as aioredis
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors import ownership
from actors.config import Config
from actors.host import GameHost
from actors.redis_connect import connect
from actors.store import Keys, patiently

log = logging.getLogger(__name__)

_PICK = """
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '-inf', 'LIMIT', 0, 1)
if #found == 0 then return false end
redis.call('ZINCRBY', KEYS[1], 1, found[1])
return found[1]
"""

# Counts one room in on host ARGV[1] if it has a slot free (below ARGV[2] rooms).
_TAKE_HOST = """
local rooms = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not rooms or tonumber(rooms) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZINCRBY', KEYS[1], 1, ARGV[1])
return 1
"""

# Takes empty hosts out of placement in the order ARGV[2..] names them, those still empty, until
# ARGV[1] empty ones are left (a room may have taken one since the caller read them).
_RETIRE = """
local idle = redis.call('ZCOUNT', KEYS[1], 0, 0)
local gone = {}
for i = 2, #ARGV do
  if idle <= tonumber(ARGV[1]) then break end
  if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]) or -1) == 0 then
    redis.call('ZREM', KEYS[1], ARGV[i])
    idle = idle - 1
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
"""

MAINTAIN_EVERY = 30.0
# What one host process is budgeted (measured: 50-110 MB RSS, docs/architecture.md), with room
# for its rooms' state: the default cap on hosts is the cluster's memory divided by this.
HOST_MEMORY_BYTES = 384 << 20


class AtCapacity(Exception):
    """Every host this prefix may run is started."""


class Placement:
    def __init__(self, config: Config, redis: aioredis.Redis,
                 start_host: Callable[[str, str | None], Awaitable[None]],
                 stop_host: Callable[[str], Awaitable[None]],
                 host_cap: Callable[[], int] | None = None,
                 unhosted_node: Callable[[], Awaitable[str | None]] | None = None,
                 retire_first: Callable[[list[str]], Awaitable[list[str]]] | None = None) -> None:
        self._config = config
        self._host_cap = host_cap  # hosts this prefix may run at once; None: no cap
        self._redis = redis
        self._keys = Keys(config.prefix)
        # Starts (or finds) the named host, on the given node if any; returns once it serves.
        self._start_host = start_host
        self._stop_host = stop_host
        # A live node that could run hosts and runs none of ours (one that joined), or None.
        self._unhosted_node = unhosted_node
        # Orders empty hosts, the first to stop first (None: the oldest first; names sort by age).
        self._retire_first = retire_first
        self._joined: set[str] = set()  # nodes given a host of their own by `place`
        self._pick = redis.register_script(_PICK)
        self._take_host = redis.register_script(_TAKE_HOST)
        self._retire = redis.register_script(_RETIRE)
        self._top_up_lock = asyncio.Lock()
        self._cap_lock = asyncio.Lock()
        self._top_up_task: asyncio.Task | None = None
        self._recount = False  # a room was placed since top_up last counted the spares
        self._waiting = 0  # rooms in place() that found no slot, until they try again
        self._starting = 0  # host starts those rooms are waiting for
        self._growing = 0  # host starts in progress (not in P:hosts yet)
        self._grown = 0  # host starts ended so far
        self._started = asyncio.Condition()  # notified when one of those starts ends

    async def restore(self) -> None:
        """Make sure every known host exists (after a whole-cluster restart they reload their
        rooms)."""
        names = [n.decode() for n in await self._redis.zrange(self._keys.hosts(), 0, -1)]
        await asyncio.gather(*(self._start_host(name, None) for name in names))
        await self.top_up()

    async def place(self) -> str | None:
        """Reserve a slot for one new room and return its host's actor name; None when every
        slot is taken and no more hosts may start."""
        name = await self._place_on_joined_node()
        while name is None:
            grown = self._grown
            if (name := await self._take()) is not None:
                break
            if grown != self._grown:
                # A host came up while the take was in flight: take again. Taken as a room with
                # no slot, that stale answer started a host too many (4 hosts for 10 rooms of 4).
                continue
            # No warm capacity left: this room waits for a host start. Rooms waiting together
            # start hosts side by side, as many as they fill: one host takes games_per_actor
            # of them (one start per waiting room overshot: 26 processes for 2,000 rooms). A room
            # counts as waiting only from a failed take to its next one: counted while it takes,
            # a room about to get a slot made others start a host too many.
            self._waiting += 1
            try:
                if self._starting * self._config.games_per_actor < self._waiting:
                    self._starting += 1
                    try:
                        await self._grow()
                    except AtCapacity:
                        return None
                    finally:
                        self._starting -= 1
                        async with self._started:
                            self._started.notify_all()
                else:
                    async with self._started:
                        await self._started.wait()
            finally:
                self._waiting -= 1
        self._recount = True
        if self._top_up_task is None or self._top_up_task.done():
            self._top_up_task = asyncio.create_task(self.top_up())
        return name

    async def _place_on_joined_node(self) -> str | None:
        """A node that joined takes the next room at once, on a host started there for it:
        filling the hosts that have slots first (elsewhere) would keep it idle until they are
        full, and its first host would be a spare filled after those."""
        if self._unhosted_node is None:
            return None
        node = await self._unhosted_node()
        if node is None or node in self._joined:
            return None
        self._joined.add(node)  # one host per joining node: the rooms after it fill it
        try:
            name = await self._grow(node)
        except AtCapacity:
            return None
        taken = await self._take_host(keys=[self._keys.hosts()],
                                      args=[name, self._config.games_per_actor])
        return name if taken else None

    async def settled(self) -> None:
        """Wait for the host starts already decided (ops and tests want to see the spares)."""
        if self._top_up_task is not None:
            await self._top_up_task

    async def top_up(self) -> None:
        """Start hosts until `warm_actors` of them hold no room."""
        while True:
            self._recount = False
            async with self._top_up_lock:
                if await self._redis.zcount(self._keys.hosts(), 0, 0) < self._config.warm_actors:
                    try:
                        await self._grow()
                    except AtCapacity:
                        return
                    continue
            if not self._recount:  # no room was placed while we counted
                return

    async def maintain(self) -> list[str]:
        """Start missing spares, stop surplus ones; returns the names of the hosts stopped."""
        await self.top_up()
        async with self._top_up_lock:
            idle = await self._really_empty(
                [n.decode() for n in await self._redis.zrangebyscore(self._keys.hosts(), 0, 0)])
            if len(idle) <= self._config.warm_actors:
                return []
            if self._retire_first is not None:
                idle = await self._retire_first(idle)
            gone = [n.decode() for n in await self._retire(keys=[self._keys.hosts()],
                                                           args=[self._config.warm_actors, *idle])]
            for name in gone:
                await self._stop_host(name)
                # Its inbox, if a late request made one: nobody reads it any more. (Deleted
                # here, not given a TTL on every push: that was a Redis call per request.)
                await self._redis.delete(self._keys.inbox(name))
                log.info("retired host %s", name)
        return gone

    async def _really_empty(self, idle: list[str]) -> list[str]:
        """Those of `idle` (no room counted) that list no room either: a count that went wrong
        (a creation given up while its host still opened the room, which then ended and was
        released) must not stop a host whose games still run. A room placed after this read
        counts on the host first, and `_RETIRE` checks the count again."""
        pipe = self._redis.pipeline(transaction=False)
        for name in idle:
            pipe.scard(self._keys.host_rooms(name))
        empty = []
        for name, rooms in zip(idle, await pipe.execute() if idle else []):
            if rooms:
                log.warning("host %s counts no room but lists %d: not retired", name, rooms)
            else:
                empty.append(name)
        return empty

    async def _take(self) -> str | None:
        name = await self._pick(keys=[self._keys.hosts()], args=[self._config.games_per_actor])
        return None if name is None else name.decode()

    async def _grow(self, node: str | None = None) -> str:
        # The count and the reservation under one lock: two starts (a room's, the spares') that
        # both counted before either reserved went past the cap.
        async with self._cap_lock:
            if self._host_cap is not None:
                cap = self._host_cap()
                # Starts in progress read before the hosts: a start that ends while ZCARD is in
                # flight is then counted in one or both, never in neither (read after, a ZCARD
                # answered before its ZADD and a count decremented after it let a third host
                # past a cap of two).
                growing = self._growing
                if await self._redis.zcard(self._keys.hosts()) + growing >= cap:
                    log.warning("not starting a host: %d hosts is the cap (WW_MAX_HOSTS)", cap)
                    raise AtCapacity
            self._growing += 1
        try:
            name = f"{self._config.prefix}-host-{await self._redis.incr(self._keys.host_seq()):06d}"
            try:
                # A host that fits on no node waits for one (an autoscaler's new node), but a room
                # waits no longer than this: past it the cluster is taken as full (server_full).
                await asyncio.wait_for(self._start_host(name, node), self._config.host_start_wait)
            except TimeoutError:
                log.warning("host %s did not start in %ss: no node had its room slots", name,
                            self._config.host_start_wait)
                await self._stop_host(name)
                raise AtCapacity from None
            await self._redis.zadd(self._keys.hosts(), {name: 0}, nx=True)
            self._grown += 1
        finally:
            self._growing -= 1
        log.info("started host %s", name)
        return name


def host_options(config: Config, name: str, node_id: str | None = None) -> dict:
    """The new host's actor options; `node_id`: the node to start it on (if it is still alive)."""
    # Without a node named, SPREAD: Ray's default packs actors onto one node until half its
    # resources are used, and a host asks few, so every host would run on one node.
    strategy = (NodeAffinitySchedulingStrategy(node_id, soft=True) if node_id else "SPREAD")
    options = dict(name=name, namespace=config.namespace, lifetime="detached", get_if_exists=True,
                   max_restarts=-1, max_concurrency=10_000, scheduling_strategy=strategy)
    if config.host_resource:
        # A host holds its room slots (a node offering 3000 takes 15 hosts of 200): a host that
        # fits on no node waits, and that wait is the resource demand an autoscaler adds nodes for.
        options["resources"] = {config.host_resource: config.games_per_actor}
    return options


def hosts_per_node(nodes: list[dict], actors: list[dict], prefix: str,
                   resource: str) -> dict[str, list[str]]:
    """Live nodes offering `resource` (`ray.nodes()`) -> the live hosts of `prefix` running there
    (`ray._private.state.actors()` values)."""
    hosted: dict[str, list[str]] = {n["NodeID"]: [] for n in nodes
                                    if n["Alive"] and n["Resources"].get(resource)}
    for actor in actors:
        node = actor["Address"]["NodeID"]
        if (actor["State"] == "ALIVE" and actor["Name"].startswith(f"{prefix}-host-")
                and node in hosted):
            hosted[node].append(actor["Name"])
    return hosted


def node_slots(nodes: list[dict], resource: str) -> dict[str, float]:
    """Live node -> the room slots it offers (its `resource`)."""
    return {n["NodeID"]: n["Resources"].get(resource, 0) for n in nodes if n["Alive"]}


def node_for_host(hosted: dict[str, list[str]], slots: dict[str, float], rooms: dict[str, float],
                  games_per_actor: int, seen: set[str]) -> str | None:
    """Where a new host goes: among the nodes with slots for it, the one running the fewest hosts
    (so the hosts' load spreads), leaving out the emptying nodes: those that ran hosts (`seen`) and
    hold no room now, so that the autoscaler can remove them. Only if every node with slots is
    emptying, the one running the most (packed: the others empty). None: no node has the slots,
    and the host waits for one (`rooms`: host -> rooms placed on it)."""
    free = [n for n, names in hosted.items()
            if slots.get(n, 0) - len(names) * games_per_actor >= games_per_actor]
    live = [n for n in free if n not in seen or any(rooms.get(h) for h in hosted[n])]
    if live:
        return min(live, key=lambda n: (len(hosted[n]), n))
    return min(free, key=lambda n: (-len(hosted[n]), n), default=None)


def retire_order(idle: list[str], hosted: dict[str, list[str]],
                 rooms: dict[str, float]) -> list[str]:
    """The empty hosts `idle`, the first to stop first: those on nodes that hold no room (so such
    a node empties and the autoscaler removes it), from the nodes running the fewest hosts; the
    spares kept are the last, on nodes that hold rooms (`rooms`: host -> rooms placed on it)."""
    node_of = {h: n for n, names in hosted.items() for h in names}

    def key(host: str) -> tuple:
        names = hosted.get(node_of.get(host, ""), [])
        return (any(rooms.get(h) for h in names), len(names), host)
    return sorted(idle, key=key)


def joined_node(hosted: dict[str, list[str]], seen: set[str]) -> str | None:
    """A node that joined: it runs none of our hosts and never did (`seen`: the nodes seen
    running one). A node whose hosts were all stopped is not one: it is emptying, for the
    autoscaler to remove."""
    return next((n for n, names in sorted(hosted.items()) if not names and n not in seen), None)


NODES_EVERY = 5.0  # seconds the placement trusts its count of hosts per node


@ray.remote(num_cpus=0)
class PlacementActor:
    async def __init__(self, config: Config) -> None:  # type: ignore[misc]  # Ray awaits it
        self._redis = connect(config.redis_url)
        self._config = config
        self._keys = Keys(config.prefix)
        self._session = ray.get_runtime_context().get_session_name()
        self._hosted: dict[str, list[str]] = {}  # node -> hosts, read at most every NODES_EVERY s
        self._slots: dict[str, float] = {}  # node -> room slots it offers, read with them
        self._hosting_seen: set[str] = set()  # nodes seen running a host of ours
        self._hosted_at = float("-inf")
        slotted = bool(config.host_resource)
        # Hosts holding room slots are capped by the nodes' slots (and an autoscaler's maximum),
        # not by the memory of the nodes there are now, which would stop the demand for more.
        self._placement = Placement(config, self._redis, self._start_host, self._stop_host,
                                    self._host_cap if config.max_hosts or not slotted else None,
                                    self._unhosted_node if slotted else None,
                                    self._retire_first if slotted else None)
        # Never restore (restart) hosts of a prefix another cluster owns: they are its hosts.
        await self._claim_prefix()
        await patiently(self._placement.restore, "placement restore")
        self._maintenance = asyncio.create_task(self._maintain_forever())
        self._lease = asyncio.create_task(self._keep_prefix())

    def config(self) -> Config:
        """What this cluster's placement and hosts run with (the first gateway's settings)."""
        return self._config

    def _host_cap(self) -> int:
        if self._config.max_hosts:
            return self._config.max_hosts
        return max(1, int(ray.cluster_resources().get("memory", 0) // HOST_MEMORY_BYTES))

    async def _claim_prefix(self) -> None:
        while True:
            try:
                return await patiently(lambda: ownership.claim(self._redis, self._config.prefix,
                                                               self._session), "prefix claim")
            except ownership.PrefixTaken as e:
                log.error("%s", e)
            await asyncio.sleep(ownership.STACK_LEASE / 3)

    async def _keep_prefix(self) -> None:
        while True:
            await asyncio.sleep(ownership.STACK_LEASE / 3)
            try:
                await ownership.claim(self._redis, self._config.prefix, self._session)
            except Exception as e:  # Redis away for a whole lease, then another cluster took it
                log.error("prefix lease not renewed: %s", e)

    async def _maintain_forever(self) -> None:
        while True:
            await asyncio.sleep(MAINTAIN_EVERY)
            try:
                await self._placement.maintain()
            except Exception:  # this loop must outlive a Redis or Ray hiccup
                log.exception("placement maintenance failed")

    async def _read_hosted(self) -> dict[str, list[str]]:
        def read() -> tuple[dict[str, list[str]], dict[str, float]]:
            nodes = ray.nodes()
            return (hosts_per_node(nodes, list(ray._private.state.actors().values()),
                                   self._config.prefix, self._config.host_resource),
                    node_slots(nodes, self._config.host_resource))
        self._hosted, self._slots = await asyncio.to_thread(read)
        self._hosting_seen.update(n for n, names in self._hosted.items() if names)
        self._hosted_at = asyncio.get_running_loop().time()
        return self._hosted

    async def _rooms(self) -> dict[str, float]:
        """Host -> rooms placed on it (`P:hosts`)."""
        return {n.decode(): score for n, score in
                await self._redis.zrange(self._keys.hosts(), 0, -1, withscores=True)}

    async def _retire_first(self, idle: list[str]) -> list[str]:
        return retire_order(idle, await self._read_hosted(), await self._rooms())

    async def _unhosted_node(self) -> str | None:
        if asyncio.get_running_loop().time() - self._hosted_at >= NODES_EVERY:
            await self._read_hosted()
        return joined_node(self._hosted, self._hosting_seen)

    async def _start_host(self, name: str, node: str | None) -> None:
        try:  # a known host (restore): it is where it is
            host = await asyncio.to_thread(ray.get_actor, name, namespace=self._config.namespace)
        except ValueError:
            if node is None and self._config.host_resource:
                node = node_for_host(await self._read_hosted(), self._slots, await self._rooms(),
                                     self._config.games_per_actor, self._hosting_seen)
            options = host_options(self._config, name, node)
            # ignore[attr-defined] below: @ray.remote's
            host = GameHost.options(**options).remote(  # type: ignore[attr-defined]
                name, self._config)
        await host.stats.remote()

    async def _stop_host(self, name: str) -> None:
        try:
            host = await asyncio.to_thread(ray.get_actor, name, namespace=self._config.namespace)
        except ValueError:  # already gone
            return
        ray.kill(host)

    async def place(self) -> str | None:
        return await self._placement.place()

    async def maintain(self) -> list[str]:
        return await self._placement.maintain()

    async def settled(self) -> None:
        await self._placement.settled()
