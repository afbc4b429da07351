"""Locust: simulated tables of 18 players playing real games through the gateway's protocol.

One Locust user = one table: it creates a room over HTTP, seats 17 more players, opens 18 real
WebSockets (hello since=0; `loadtest/wire.py`'s light client), the host starts, every seat answers
its prompts after a think time, living players chat by day and wolves at night, until `game_over`
reaches every seat; then the table checks the streams (no duplicate, no reorder, every public event
at every seat, and a since=0 replay of `--ww-verify-seats` seats equal to what they got live) and
starts a new game. How a table plays is a named load model (`loadtest/core.py` MODELS, `--ww-model`):
`human` (think 2-15 s, a line per living player every 20-40 s by day, wolves alike at night,
ask-to-vote late in the discussion, on the server's default durations) or `rush` (the stress ramp).

    locust -f loadtest/locustfile.py --headless -u 5 -r 1 -t 60s --host http://127.0.0.1:8000
    locust -f loadtest/locustfile.py --host http://127.0.0.1:8000          # web UI on :8089

Custom Locust rows (request_type / name):
  WS connect          connect + hello -> welcome, ms
  WS ack:<frame>      client frame sent -> its ack (chat, act, start, settings), ms
  WS broadcast        chat line sent -> its arrival at each other reader, ms (one row per delivery)
  GAME completed      one per finished game (response_time = game length, ms)
  WS frames           every 2 s per worker; response_length = frames received in that period
  CHECK lost / duplicated / reordered / replay_mismatch   failures: must stay at 0
  WS error:<code>     error frames answering a client frame (failures)
  WS late_act         an act answered `not_your_turn` after its prompt had closed (a race, not a fault)
  WS late_chat        a chat line refused because the phase changed while it was in flight (a race)
"""
from __future__ import annotations

import locust  # noqa: F401  (first: gevent monkey-patching must precede ssl/urllib3)

import dataclasses
import itertools
import json
import logging
import os
import random
import resource
import time

import gevent
import gevent.event
import orjson
from locust import User, argument_parser, constant, events, task
from locust.contrib.fasthttp import FastHttpSession
from locust.runners import LocalRunner, MasterRunner

from loadtest.core import (
    MODELS, SeatState, StreamCheck, answer_delay, chat_text, choose_targets, compare_replay,
    lost_public_events, now_ms, parse_chat_text,
)
from loadtest.wire import LightSocket

log = logging.getLogger("loadtest")

# Locust's worker rebuilds its whole argument parser once per option of every spawn message
# (`WorkerRunner`: `k not in argument_parser.default_args_dict()` inside a comprehension): 60 % of
# a worker's samples while tables arrive. The defaults cannot change within a process.
_LOCUST_DEFAULTS = argument_parser.default_args_dict()
argument_parser.default_args_dict = lambda: _LOCUST_DEFAULTS


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


@events.init_command_line_parser.add_listener
def _options(parser):
    g = parser
    g.add_argument("--ww-gateways", default=_env("WW_LT_GATEWAYS", ""), include_in_web_ui=True,
                   help="comma-separated gateway base URLs; tables round-robin over them "
                        "(default: --host)")
    g.add_argument("--ww-players", type=int, default=int(_env("WW_LT_PLAYERS", "18")))
    g.add_argument("--ww-model", default=_env("WW_LT_MODEL", "human"), choices=sorted(MODELS),
                   include_in_web_ui=True, help="how tables play (loadtest/core.py MODELS)")
    g.add_argument("--ww-chat-interval", default=_env("WW_LT_CHAT_INTERVAL", ""),
                   include_in_web_ui=True,
                   help="override: mean seconds between two lines of a living player by day")
    g.add_argument("--ww-night-chat-interval", default=_env("WW_LT_NIGHT_CHAT_INTERVAL", ""),
                   include_in_web_ui=True, help="override: the same for a wolf at night")
    g.add_argument("--ww-think", default=_env("WW_LT_THINK", ""),
                   help="override: min,max seconds before answering a prompt")
    g.add_argument("--ww-settings", default=_env("WW_LT_SETTINGS", ""), include_in_web_ui=True,
                   help='JSON {"roles": [...], "durations": {...}} the host sends before start '
                        '(empty: server defaults)')
    g.add_argument("--ww-broadcast-sample", type=float,
                   default=float(_env("WW_LT_BROADCAST_SAMPLE", "1")),
                   help="share of chat deliveries timed as 'WS broadcast' (each one costs the "
                        "generator a Locust event; a uniform sample keeps the percentiles)")
    g.add_argument("--ww-verify-seats", type=int, default=int(_env("WW_LT_VERIFY_SEATS", "1")),
                   help="seats per game re-read with hello since=0 after game_over and compared")
    g.add_argument("--ww-max-game", default=_env("WW_LT_MAX_GAME", ""),
                   help="seconds before a game counts as timed out (default: the model's)")
    g.add_argument("--ww-games", type=int, default=int(_env("WW_LT_GAMES", "0")),
                   help="games per table before it stops (0: until the run ends)")


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 200_000), max(hard, 200_000)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


_raise_fd_limit()

FRAMES = [0]   # frames received by this process since the last report


@events.init.add_listener
def _on_init(environment, **_kw):
    if isinstance(environment.runner, MasterRunner):
        return

    def report():
        while True:
            gevent.sleep(2.0)
            n, FRAMES[0] = FRAMES[0], 0
            if n:
                environment.events.request.fire(request_type="WS", name="frames", response_time=0,
                                                 response_length=n, exception=None, context={})

    gevent.spawn(report)


class CheckFailure(Exception):
    pass


_table_ids = itertools.count()


class Seat:
    def __init__(self, game: "Game", seat: int, token: str):
        self.game, self.seat, self.token = game, seat, token
        self.state = SeatState(seat)
        self.stream = StreamCheck()
        self.ws: LightSocket | None = None
        self.reader: gevent.Greenlet | None = None
        self.pending: dict = {}      # frame id -> (name, sent ms, AsyncResult|None, action)
        self.ids = itertools.count(1)
        self.closing = False
        self.url = ""

    # -- sending ------------------------------------------------------------------------------
    def send(self, frame: dict, name: str, waiter: bool = False):
        fid = f"{self.seat}.{next(self.ids)}"
        frame["id"] = fid
        res = gevent.event.AsyncResult() if waiter else None
        self.pending[fid] = (name, now_ms(), res, frame.get("action"), self.state.phase)
        try:
            self.ws.send(orjson.dumps(frame).decode())
        except Exception as e:  # noqa: BLE001
            self.pending.pop(fid, None)
            if not self.closing:  # a table being stopped closes its sockets under its own sends
                self.game.fire("WS", f"send:{name}", 0, exc=e)
            if res:
                res.set(None)
        return res

    # -- receiving ----------------------------------------------------------------------------
    def connect(self, url: str) -> bool:
        t0 = now_ms()
        self.url = url
        try:
            self.ws = LightSocket(url, timeout=30)
            self.ws.send(orjson.dumps({"type": "hello", "token": self.token, "since": 0}).decode())
            while True:
                msg = orjson.loads(self.ws.recv())
                if msg.get("type") == "welcome":
                    break
                raise CheckFailure(f"first frame {msg.get('type')}")
            self.ws.settimeout(None)
        except Exception as e:  # noqa: BLE001
            self.game.fire("WS", "connect", now_ms() - t0, exc=e)
            return False
        self.game.fire("WS", "connect", now_ms() - t0)
        self.reader = gevent.spawn(self.read_loop)
        return True

    def read_loop(self):
        g = self.game
        try:
            while True:
                raw = self.ws.recv()
                FRAMES[0] += 1
                msg = orjson.loads(raw)
                typ = msg.get("type")
                if typ == "event":
                    self.on_event(msg)
                elif typ == "ack":
                    p = self.pending.pop(msg.get("id"), None)
                    if p:
                        g.fire("WS", f"ack:{p[0]}", now_ms() - p[1])
                        if p[2]:
                            p[2].set(msg)
                elif typ == "error":
                    self.on_error(msg)
        except Exception as e:  # noqa: BLE001
            if not self.closing and not self.state.over:
                g.fire("WS", "ws_closed", 0, exc=e)
                g.broken.set()

    def on_event(self, ev: dict):
        g = self.game
        bad = self.stream.add(ev["seq"], ev.get("kind"))
        if bad:
            g.fire("CHECK", bad, 0, exc=CheckFailure(f"seat {self.seat} seq {ev['seq']} {bad}"))
        kind = ev.get("kind")
        self.state.on_event(ev)
        if kind == "chat":
            if g.rng.random() < g.broadcast_sample:
                parsed = parse_chat_text(ev.get("text") or "")
                if parsed and parsed[1] != self.seat:
                    g.fire("WS", "broadcast", now_ms() - parsed[0])
        elif kind == "prompt":
            if self.state.alive and not self.state.over:
                delay = answer_delay(ev, g.rng, g.think, time.time(), g.model.ask_fraction)
                gevent.spawn_later(delay, self.answer, ev)
        elif kind == "game_started":
            g.started.set()
        elif kind == "game_over":
            g.seat_over(self)

    def answer(self, prompt: dict):
        if self.game.finished or self.state.prompts.get(prompt.get("action")) is not prompt:
            return  # closed, replaced or the game ended meanwhile
        targets = choose_targets(prompt, self.game.rng)
        self.send({"type": "act", "action": prompt["action"], "targets": targets}, "act")

    def on_error(self, msg: dict):
        p = self.pending.pop(msg.get("id"), None)
        if p and p[2]:
            p[2].set(msg)
        code = msg.get("code")
        if p and p[0] in ("act", "chat") and code in ("not_your_turn", "illegal_target", "room_closed"):
            # The reply can overtake the pub/sub event that explains it (prompt closed, phase
            # changed): judge a second later.
            gevent.spawn_later(1.0, self.judge_refusal, p, msg, now_ms() - p[1])
        else:
            self.game.fire("WS", f"error:{code}", now_ms() - p[1] if p else 0,
                           exc=CheckFailure(f"{code}: {msg.get('message')} ({p[0] if p else '-'})"))

    def judge_refusal(self, p, msg, ms):
        name, action, phase = p[0], p[3], p[4]
        st = self.state
        if name == "act" and action not in st.prompts:
            self.game.fire("WS", "late_act", ms)      # the prompt closed while we thought
        elif name == "chat" and (phase != st.phase or st.over or not st.alive):
            self.game.fire("WS", "late_chat", ms)     # the phase moved on while the line flew
        else:
            self.game.fire("WS", f"error:{msg.get('code')}", ms,
                           exc=CheckFailure(f"{msg.get('code')}: {msg.get('message')} ({name})"))

    def close(self):
        self.closing = True
        try:
            if self.ws:
                self.ws.close()
        except Exception:  # noqa: BLE001
            pass
        if self.reader:
            self.reader.kill(block=False)


class Game:
    def __init__(self, user: "Table", base: str):
        self.user, self.base = user, base
        opts = user.environment.parsed_options
        self.opts = opts
        self.rng = random.Random()
        self.model = model_of(opts)
        self.think = self.model.think
        self.broadcast_sample = opts.ww_broadcast_sample
        self.seats: list[Seat] = []
        self.started = gevent.event.Event()
        self.all_over = gevent.event.Event()
        self.broken = gevent.event.Event()
        self.finished = False
        self.chats = itertools.count(1)

    def fire(self, rtype: str, name: str, ms: float, exc: Exception | None = None, length: int = 0):
        self.user.environment.events.request.fire(request_type=rtype, name=name, response_time=ms,
                                                  response_length=length, exception=exc, context={})

    def seat_over(self, seat: Seat):
        if all(s.state.over for s in self.seats):
            self.all_over.set()

    # -- the game -------------------------------------------------------------------------------
    def run(self):
        tag = f"{next(_table_ids) % 100000}{random.randrange(1000)}"
        http: FastHttpSession = self.user.client
        n = self.opts.ww_players
        with http.post(f"{self.base}/api/rooms", json={"name": f"P0x{tag}"}, name="create_room",
                       catch_response=True) as r:
            if r.status_code != 201:
                r.failure(f"create_room {r.status_code}")
                gevent.sleep(1)
                return
            created = r.json()
        room = created["room"]
        creds = [created]
        for i in range(1, n):
            with http.post(f"{self.base}/api/rooms/{room}/join", json={"name": f"P{i}x{tag}"},
                           name="join", catch_response=True) as r:
                if r.status_code != 200:
                    r.failure(f"join {r.status_code}")
                    gevent.sleep(1)
                    return
                creds.append(r.json())
        self.seats = [Seat(self, c["seat"], c["token"]) for c in creds]
        ws_url = self.base.replace("http://", "ws://").replace("https://", "wss://") + f"/ws/{room}"
        try:
            oks = [g.value for g in gevent.joinall([gevent.spawn(s.connect, ws_url) for s in self.seats])]
            if not all(oks):
                gevent.sleep(1)
                return
            self.play()
        finally:
            self.finished = True
            for s in self.seats:
                s.close()

    def play(self):
        host = self.seats[0]
        t0 = now_ms()
        if self.opts.ww_settings:
            settings = json.loads(self.opts.ww_settings)
            r = host.send({"type": "settings", **settings}, "settings", waiter=True).get(timeout=30)
            if not r or r.get("type") != "ack":
                log.warning("settings refused: %s", r)
        r = host.send({"type": "start"}, "start", waiter=True).get(timeout=30)
        if not r or r.get("type") != "ack":
            return
        self.started.wait(timeout=30)
        chatter = gevent.spawn(self.chat_loop)
        deadline = time.monotonic() + self.model.max_game
        try:
            while not self.all_over.is_set():
                if self.broken.is_set():
                    return
                if time.monotonic() > deadline:
                    self.fire("GAME", "timeout", now_ms() - t0, exc=CheckFailure("game timed out"))
                    return
                self.all_over.wait(timeout=1.0)
        finally:
            chatter.kill(block=False)
        self.fire("GAME", "completed", now_ms() - t0)
        self.check()

    def chat_loop(self):
        """Each seat with a channel (by day the living, at night the wolves) says a line, waits a
        gap of the model, says the next; a seat that gets a channel starts part-way into a gap."""
        model, rng = self.model, self.rng
        next_at: dict = {}  # seat -> (channel, when it speaks next)
        while not self.all_over.is_set():
            now = time.monotonic()
            for s in self.seats:
                channel = s.state.chat_channel()
                planned = next_at.get(s.seat)
                if channel is None:
                    next_at.pop(s.seat, None)
                elif planned is None or planned[0] != channel:
                    next_at[s.seat] = (channel, now + rng.uniform(0, 1) * model.chat_gap(channel, rng))
                elif planned[1] <= now:
                    s.send({"type": "chat", "text": chat_text(s.seat, next(self.chats))}, "chat")
                    next_at[s.seat] = (channel, now + model.chat_gap(channel, rng))
            soonest = min((when for _, when in next_at.values()), default=now + 1.0)
            gevent.sleep(min(1.0, max(0.0, soonest - time.monotonic())))  # re-read channels often

    # -- the checks ---------------------------------------------------------------------------------
    def check(self):
        upto = max(s.state.over_seq or 0 for s in self.seats)
        streams = {s.seat: s.stream for s in self.seats}
        for seat, missing in lost_public_events(streams, upto).items():
            for seq in missing:
                self.fire("CHECK", "lost", 0, exc=CheckFailure(f"seat {seat} missed public seq {seq}"))
        k = min(self.opts.ww_verify_seats, len(self.seats))
        for s in self.rng.sample(self.seats, k):
            self.verify_replay(s, upto)

    def verify_replay(self, seat: Seat, upto: int):
        url = seat.url
        seat.close()
        t0 = now_ms()
        seqs = []
        try:
            ws = LightSocket(url, timeout=20)
            try:
                ws.send(orjson.dumps({"type": "hello", "token": seat.token, "since": 0}).decode())
                while True:
                    msg = orjson.loads(ws.recv())
                    if msg.get("type") == "event":
                        seqs.append(msg["seq"])
                        if msg["seq"] >= (seat.state.over_seq or upto):
                            break
            finally:
                ws.close()
        except Exception as e:  # noqa: BLE001
            self.fire("CHECK", "replay", now_ms() - t0, exc=e)
            return
        missing, extra = compare_replay(seat.stream, seqs, seat.state.over_seq or upto)
        dup = len(seqs) - len(set(seqs))
        if missing or extra or dup or seqs != sorted(seqs):
            self.fire("CHECK", "replay_mismatch", now_ms() - t0, exc=CheckFailure(
                f"seat {seat.seat}: live missed {missing[:5]}, live extra {extra[:5]}, replay dup {dup}"))
        else:
            self.fire("CHECK", "replay", now_ms() - t0)


def model_of(opts):
    """The table's load model, with the command line's overrides."""
    model = MODELS[opts.ww_model]
    changes = {}
    if opts.ww_think:
        changes["think"] = tuple(float(x) for x in str(opts.ww_think).split(","))
    if opts.ww_chat_interval:
        changes["day_gap"] = float(opts.ww_chat_interval)
    if opts.ww_night_chat_interval:
        changes["night_gap"] = float(opts.ww_night_chat_interval)
    if opts.ww_max_game:
        changes["max_game"] = float(opts.ww_max_game)
    return dataclasses.replace(model, **changes)


class Table(User):
    """One 18-player table, playing games back to back."""

    wait_time = constant(0)
    host = "http://127.0.0.1:8000"
    _rr = itertools.count()

    def __init__(self, environment):
        super().__init__(environment)
        gws = [g.strip().rstrip("/") for g in (environment.parsed_options.ww_gateways or "").split(",")
               if g.strip()]
        self.base = (gws[next(Table._rr) % len(gws)] if gws else (self.host or "").rstrip("/"))
        self.client = FastHttpSession(base_url=self.base, request_event=environment.events.request,
                                      user=self, connection_timeout=30, network_timeout=60)
        self.games = 0

    @task
    def play_game(self):
        limit = self.environment.parsed_options.ww_games
        if limit and self.games >= limit:
            gevent.sleep(1)
            return
        self.games += 1
        Game(self, self.base).run()
        if limit and self.games >= limit:
            _TABLES_DONE[0] += 1
            runner = self.environment.runner
            # A local (headless, single process) run ends by itself once every table is done.
            if isinstance(runner, LocalRunner) and _TABLES_DONE[0] >= runner.target_user_count:
                gevent.spawn_later(3.0, runner.quit)   # after the periodic CSV writer saw all


_TABLES_DONE = [0]
