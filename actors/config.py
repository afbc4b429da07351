"""Cluster configuration, built once (from the environment or CLI flags) and passed explicitly.

Ray actors receive a `Config` as a constructor argument; nothing under `actors/` reads the
environment after that, so a test can run several differently configured clusters side by side.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import rules

_DURATION_PREFIX = "WW_DURATION_"
# What the placement actor and the host actors run with: one value per cluster, the first
# gateway's (a gateway whose values differ refuses to start: actors.refusals.ConfigMismatch).
CLUSTER_SETTINGS = (
    ("games_per_actor", "WW_GAMES_PER_ACTOR"), ("warm_actors", "WW_WARM_ACTORS"),
    ("durations", "WW_DURATION_*"), ("finished_ttl", "WW_FINISHED_TTL"),
    ("idle_close", "WW_IDLE_CLOSE"), ("lobby_idle_close", "WW_LOBBY_IDLE_CLOSE"),
    ("lobby_max_age", "WW_LOBBY_MAX_AGE"), ("public_countdown", "WW_PUBLIC_COUNTDOWN"),
    ("lobby_away", "WW_LOBBY_AWAY"), ("max_hosts", "WW_MAX_HOSTS"),
    ("host_resource", "WW_HOST_RESOURCE"), ("host_start_wait", "WW_HOST_START_WAIT"),
    ("redis_wait", "WW_REDIS_WAIT"),
    ("presence_lease", "WW_PRESENCE_LEASE"), ("game_idle_close", "WW_GAME_IDLE_CLOSE"),
    ("max_game_age", "WW_MAX_GAME_AGE"), ("vote_settled", "WW_VOTE_SETTLED"),
)


def origins(text: str) -> tuple[str, ...]:
    """WW_ALLOWED_ORIGINS: comma separated, compared lower-case without a trailing slash."""
    return tuple(o.strip().rstrip("/").lower() for o in text.split(",") if o.strip())


@dataclass(frozen=True)
class Config:
    redis_url: str = "redis://127.0.0.1:6379/0"
    ray_address: str | None = None  # None: start or attach a local Ray
    prefix: str = "ww"  # Redis key and channel prefix; also prefixes Ray actor names
    # Rooms per Ray host actor. A Ray actor is a process (~50-110 MB, ~0.4 s to start): packed
    # hosts are what lets one box hold thousands of rooms. 1 = one actor per game (isolation).
    games_per_actor: int = 200
    warm_actors: int = 1  # empty host actors kept started so a new room never waits for one
    namespace: str = "werewolf"  # Ray namespace of the named actors
    # phase name -> seconds, room defaults
    durations: Mapping[str, int] = field(default_factory=dict)
    finished_ttl: int = 3600  # seconds a finished or broken room's state and log stay readable
    idle_close: int = 1800  # seconds a room with nobody connected stays open
    # Seconds a lobby with nobody connected stays open (0: idle_close): a room made and never
    # used (a script creating rooms) must not hold a host slot for idle_close.
    lobby_idle_close: int = 300
    # Seconds a lobby stays open whoever is connected (0: no limit): a lobby held by one socket
    # must not hold a host slot for ever (docs/architecture.md, "Abuse limits").
    lobby_max_age: int = 1800
    # Seconds a running game goes on with no command its whole table sees, sockets connected or
    # not, before it ends as unplayed (0: never), and seconds a room lives at most, its lobby and
    # game together (0: no limit): a game held by one socket must not hold its host slot for ever
    # (rules/RULES.md, "Unplayed games"). 4 h: some 20 days and nights at the default durations.
    game_idle_close: int = 600
    max_game_age: int = 14400
    # Abuse limits (docs/architecture.md, "Abuse limits"); 0 turns a per-address limit off.
    rooms_per_address: int = 20  # rooms one client address may create per limit window
    quick_plays_per_address: int = 120  # quick-play presses one address may make per window
    joins_per_address: int = 120  # joins by link one address may make per window (leave, rejoin...)
    # What one address may hold at once (an IPv6 /56: 4 times as much), so that rooms held open
    # cannot fill the server: rooms it opened (by link or quick play), and seats it took, in rooms
    # not over yet (lobbies and running games).
    # Generous: a school or a carrier-grade NAT puts many players behind one address.
    open_lobbies_per_address: int = 5
    lobby_seats_per_address: int = 40
    lookup_failures_per_address: int = 30  # unknown room codes one address may try per window
    limit_window: int = 600  # seconds of one fixed window of the per-address limits
    # Host actors (processes) this prefix may run at once; past it room creation answers 503.
    # 0: as many as the Ray cluster's memory holds at HOST_MEMORY_BYTES each.
    max_hosts: int = 0
    sockets_per_seat: int = 4  # sockets one seat may hold on one gateway process
    # Seconds a gateway process's presence lease lasts unless renewed (every third of it): a
    # gateway that dies unannounced shows its seats disconnected within about 1.3 leases.
    presence_lease: int = 15
    # A custom Ray resource that game hosts require, so that on a cluster they land only on the
    # nodes that offer it (never on a gateway's zero-CPU node: 0-CPU actors fit anywhere). It
    # counts room slots: a node offers the rooms it may hold, a host holds games_per_actor of them
    # (an autoscaler adds a node when a host fits nowhere: docs/capacity.md, "Elastic").
    host_resource: str | None = None
    # Seconds a new host may take to start, waiting for a node with its slots (an autoscaler's new
    # node boots in that time); past it the host is given up and its room refused (server_full).
    host_start_wait: float = 120.0
    # Replicas that must have a room's write (Redis WAIT) before it is acknowledged: with 1, a
    # Sentinel failover to that replica loses no acknowledged command (docs/architecture.md).
    redis_wait: int = 0
    # Seconds an HTTP call (create, join, again, a lobby) retries while Redis is unreachable: a
    # Sentinel failover promotes a replica in 2-3 s here; past it the call answers 503.
    request_patience: float = 10.0
    # Seconds a public table waits, from its first seat, before bots fill it and it starts by
    # itself.
    public_countdown: int = 30
    # Seconds a seat of a public lobby may hold no socket before the table lets it go.
    lobby_away: int = 60
    # Seconds a seat of a public lobby sits there before it votes to remove, or is voted on.
    vote_settled: int = 20
    reports_per_address: int = 20  # reports of players one address may file per limit window
    # finished games' reviews one address may read per limit window (each answers up to 8 MB)
    reviews_per_address: int = 30
    reports_per_seat: int = 5  # reports one seat may file in a room (of as many other seats)
    reports_per_room: int = 30  # reports a room holds at most (each points at its chat)
    report_ttl: int = 30 * 86400  # seconds a report is kept for the operators
    # Of the quick-play presses and the reports above, how many one address may make at once,
    # then one per how many seconds; each gateway process counts its own (gateway.limits.Bursts).
    # Off with its per-address limit, or at 0.
    quick_play_burst: int = 10
    quick_play_pace: float = 1.0
    report_burst: int = 5
    report_pace: float = 10.0
    # The operators' secret for /api/admin/* (Authorization: Bearer ...); None: no admin API.
    admin_secret: str | None = field(default=None, repr=False)
    # The bearer token Prometheus must send for /metrics; None: /metrics is open (to be kept to
    # the private network by the balancer: deploy/README.md).
    metrics_token: str | None = field(default=None, repr=False)
    # A WebSocket whose unsent bytes (its queue and its connection's write buffer) pass this, or
    # whose write buffer has not drained for ws_drain_seconds, is dropped (close 1013;
    # gateway/ws.py).
    ws_unsent_bytes: int = 1 << 20
    ws_drain_seconds: float = 30.0
    # Origins ("https://host[:port]") a browser's WebSocket may come from besides the one served
    # (the Host header's); "*": any. A socket without Origin (not a browser) is always let in.
    allowed_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.games_per_actor < 1:
            raise ValueError("games_per_actor must be >= 1")
        if self.presence_lease < 1:
            raise ValueError("presence_lease must be >= 1")
        if self.warm_actors < 0:
            raise ValueError("warm_actors must be >= 0")
        for name in ("lobby_idle_close", "lobby_max_age", "game_idle_close", "max_game_age",
                     "rooms_per_address",
                     "quick_plays_per_address",
                     "joins_per_address", "open_lobbies_per_address", "lobby_seats_per_address",
                     "reports_per_address", "reports_per_seat", "reports_per_room",
                     "reviews_per_address", "quick_play_burst", "report_burst",
                     "lookup_failures_per_address",
                     "max_hosts"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.sockets_per_seat < 1:
            raise ValueError("sockets_per_seat must be >= 1")
        if self.limit_window < 1:
            raise ValueError("limit_window must be >= 1")
        if self.redis_wait < 0:
            raise ValueError("redis_wait must be >= 0")
        if self.public_countdown < 0 or self.lobby_away < 1 or self.vote_settled < 0:
            raise ValueError("public_countdown and vote_settled must be >= 0, lobby_away >= 1")
        if self.host_start_wait <= 0:
            raise ValueError("host_start_wait must be > 0")
        if self.request_patience < 0:
            raise ValueError("request_patience must be >= 0")
        if self.quick_play_pace <= 0 or self.report_pace <= 0:
            raise ValueError("quick_play_pace and report_pace must be > 0")
        if self.ws_unsent_bytes < 1 or self.ws_drain_seconds <= 0:
            raise ValueError("ws_unsent_bytes must be >= 1 and ws_drain_seconds > 0")
        try:  # refuse bad durations here, not later inside every host actor that starts
            self.room_settings()
        except rules.RulesError as e:
            raise ValueError(str(e)) from None

    def cluster_differences(self, running: Config) -> list[str]:
        """The cluster-wide settings (CLUSTER_SETTINGS: read by the placement actor and the host
        actors, which the first gateway of a cluster started) where this gateway's differ from
        `running`'s, each as "VARIABLE: here X, the cluster runs Y"."""
        return [f"{variable}: here {getattr(self, name)!r}, the cluster runs "
                f"{getattr(running, name)!r}"
                for name, variable in CLUSTER_SETTINGS
                if getattr(self, name) != getattr(running, name)]

    def room_max_age(self) -> int:
        """Seconds a room lives at most, its lobby and its game (0: no limit): the longest an
        address's rooms and seats can be held (gateway.limits)."""
        if not (self.lobby_max_age and self.max_game_age):
            return 0
        return max(self.lobby_max_age, self.max_game_age)

    def room_settings(self) -> rules.Settings:
        """The settings a new room starts with."""
        return rules.Settings.from_json({"durations": dict(self.durations)})

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> Config:
        """Read the WW_* variables; keyword overrides (e.g. from CLI flags) win."""
        env = os.environ if env is None else env
        values: dict = {}
        if "REDIS_URL" in env:
            values["redis_url"] = env["REDIS_URL"]
        if env.get("RAY_ADDRESS"):
            values["ray_address"] = env["RAY_ADDRESS"]
        for key, name, kind in (
            ("WW_PREFIX", "prefix", str),
            ("WW_GAMES_PER_ACTOR", "games_per_actor", int),
            ("WW_WARM_ACTORS", "warm_actors", int),
            ("WW_NAMESPACE", "namespace", str),
            ("WW_FINISHED_TTL", "finished_ttl", int),
            ("WW_IDLE_CLOSE", "idle_close", int),
            ("WW_LOBBY_IDLE_CLOSE", "lobby_idle_close", int),
            ("WW_LOBBY_MAX_AGE", "lobby_max_age", int),
            ("WW_GAME_IDLE_CLOSE", "game_idle_close", int),
            ("WW_MAX_GAME_AGE", "max_game_age", int),
            ("WW_ROOMS_PER_ADDRESS", "rooms_per_address", int),
            ("WW_QUICK_PLAYS_PER_ADDRESS", "quick_plays_per_address", int),
            ("WW_JOINS_PER_ADDRESS", "joins_per_address", int),
            ("WW_OPEN_LOBBIES_PER_ADDRESS", "open_lobbies_per_address", int),
            ("WW_LOBBY_SEATS_PER_ADDRESS", "lobby_seats_per_address", int),
            ("WW_LOOKUP_FAILURES_PER_ADDRESS", "lookup_failures_per_address", int),
            ("WW_LIMIT_WINDOW", "limit_window", int),
            ("WW_MAX_HOSTS", "max_hosts", int),
            ("WW_SOCKETS_PER_SEAT", "sockets_per_seat", int),
            ("WW_PRESENCE_LEASE", "presence_lease", int),
            ("WW_HOST_RESOURCE", "host_resource", str),
            ("WW_HOST_START_WAIT", "host_start_wait", float),
            ("WW_REDIS_WAIT", "redis_wait", int),
            ("WW_REQUEST_PATIENCE", "request_patience", float),
            ("WW_PUBLIC_COUNTDOWN", "public_countdown", int),
            ("WW_LOBBY_AWAY", "lobby_away", int),
            ("WW_VOTE_SETTLED", "vote_settled", int),
            ("WW_REPORTS_PER_ADDRESS", "reports_per_address", int),
            ("WW_REVIEWS_PER_ADDRESS", "reviews_per_address", int),
            ("WW_REPORTS_PER_SEAT", "reports_per_seat", int),
            ("WW_REPORTS_PER_ROOM", "reports_per_room", int),
            ("WW_REPORT_TTL", "report_ttl", int),
            ("WW_QUICK_PLAY_BURST", "quick_play_burst", int),
            ("WW_QUICK_PLAY_PACE", "quick_play_pace", float),
            ("WW_REPORT_BURST", "report_burst", int),
            ("WW_REPORT_PACE", "report_pace", float),
            ("WW_ADMIN_SECRET", "admin_secret", str),
            ("WW_METRICS_TOKEN", "metrics_token", str),
            ("WW_WS_UNSENT_BYTES", "ws_unsent_bytes", int),
            ("WW_WS_DRAIN_SECONDS", "ws_drain_seconds", float),
            ("WW_ALLOWED_ORIGINS", "allowed_origins", origins),
        ):
            if key in env:
                values[name] = kind(env[key])
        durations = {
            key[len(_DURATION_PREFIX):].lower(): int(value)
            for key, value in env.items()
            if key.startswith(_DURATION_PREFIX)
        }
        if durations:
            values["durations"] = durations
        values.update(overrides)
        return cls(**values)
