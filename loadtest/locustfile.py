"""Locust: simulated tables of 18 players playing real games through the gateway's protocol.

One Locust user = one table: it creates a room over HTTP, seats 17 more players, opens 18 real
WebSockets (hello since=0; `loadtest/wire.py`'s light client), the host starts, every seat answers
its prompts after a think time, living players chat by day and wolves at night, until `game_over`
reaches every seat; then the table checks the streams (no duplicate, no reorder, every public event
at every seat, and a since=0 replay of `--ww-verify-seats` seats equal to what they got live) and
starts a new game. How a table plays is a named load model (`loadtest/core.py` MODELS,
`--ww-model`): `human` (think 2-15 s, a line per living player every 20-40 s by day, wolves alike at
night, ask-to-vote late in the discussion, on the server's default durations), `rush` (the stress
ramp) or `bots` (issue 33: each seat a `bots.Bot` fed exactly its socket's welcome and event frames,
`loadtest/core.py` BotSeat; it claims, accuses and votes like the bots and sends each act and line
when its think time is up, one command in flight at a time; no timer chat).

`--ww-model quickplay` (issue 23): one Locust user = one *player*, not a table. It arrives at a
random moment of `--ww-arrival-window` (from `--ww-arrive-at`, or its spawn), loads the home page
(GET / and one GET /api/tables), presses play (POST /api/quickplay with a press id of its own;
`--ww-double-press` of them click twice, sending the same id twice at once), opens its WebSocket
(on the gateway the room's code hashes to, as deploy/haproxy does) and plays its seat as a `human`
seat plays, until its game ends; nobody sends `start` (a public table starts by itself). A table is
whoever pressed at about the same time. `--ww-press-log DIR` keeps one JSON line per press and per
game end (loadtest/quickplay.py reads them: tables formed, overfilled, doubly seated, lost events).

    locust -f loadtest/locustfile.py --headless -u 5 -r 1 -t 60s --host http://127.0.0.1:8000
    locust -f loadtest/locustfile.py --host http://127.0.0.1:8000          # web UI on :8089

Custom Locust rows (request_type / name):
  WS connect          connect + hello -> welcome, ms
  WS ack:<frame>      client frame sent -> its ack (chat, act, start, settings), ms
  WS broadcast        chat line sent -> its arrival at each other reader, ms (one row per delivery)
  GAME completed      one per finished game (response_time = game length, ms; response_length =
                      chat lines our seats sent in it); quickplay: one per player, from its
                      `game_started`
  POST quickplay      quickplay: one press -> its seat (each retry and second click is a request)
  GET home / tables   quickplay: the home page and the open tables' list a player loads first
  GAME not_started    quickplay: a public lobby past its countdown (+START_GRACE_S) not started
  CHECK double_seated quickplay: the two clicks of one press were given different seats
  WS frames           every 2 s per worker; response_length = frames received in that period
  CHECK lost / duplicated / reordered / replay_mismatch   failures: must stay at 0
  WS error:<code>     error frames answering a client frame (failures)
  WS late_act         an act answered `not_your_turn` after its prompt had closed (a race, not a
                      fault)
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
import secrets
import time
import zlib

import gevent
import gevent.event
import orjson
from locust import User, argument_parser, constant, events, task
from locust.contrib.fasthttp import FastHttpSession
from locust.runners import LocalRunner, MasterRunner

from loadtest.core import (
    MODELS, BotSeat, SeatState, StreamCheck, answer_delay, chat_text, choose_targets,
    compare_replay, lost_public_events, now_ms, parse_chat_text,
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
                   help="games per table (quickplay: per player) before it stops (0: until the "
                        "run ends)")
    # quickplay only
    g.add_argument("--ww-preset", default=_env("WW_LT_PRESET", "seed_000"), include_in_web_ui=True,
                   help="quickplay: the preset pressed for")
    g.add_argument("--ww-language", default=_env("WW_LT_LANGUAGE", "en"), include_in_web_ui=True,
                   help="quickplay: the table language pressed for")
    g.add_argument("--ww-arrival-window", type=float,
                   default=float(_env("WW_LT_ARRIVAL_WINDOW", "0")), include_in_web_ui=True,
                   help="quickplay: each player presses at a uniform random moment of this many "
                        "seconds (0: as soon as it is spawned)")
    g.add_argument("--ww-arrive-at", default=_env("WW_LT_ARRIVE_AT", ""), include_in_web_ui=True,
                   help="quickplay: the window's start, epoch seconds (a swarm sends it to every "
                        "worker; empty: each player's spawn)")
    g.add_argument("--ww-double-press", type=float, default=float(_env("WW_LT_DOUBLE_PRESS", "0")),
                   help="quickplay: share of players who click play twice (the same press id "
                        "sent twice at once): both answers must be one seat")
    g.add_argument("--ww-press-log", default=_env("WW_LT_PRESS_LOG", ""),
                   help="quickplay: a directory; each process appends a JSON line per press and "
                        "per game end to players-<pid>.jsonl")


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 200_000), max(hard, 200_000)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


_raise_fd_limit()

REFUSAL_WAIT = 15.0  # s: how long a refusal waits for the prompt or phase event that explains it
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
        # `bots` model: the seat's bot, fed this socket's frames, and its driver (`drive`)
        self.bot = BotSeat(seat, game.rng.randrange(2**31)) if game.model.brain == "bots" else None
        self.poke = gevent.event.Event()  # a frame came: the bot may have something due
        self.driver: gevent.Greenlet | None = None

    # -- sending ------------------------------------------------------------------------------
    def send(self, frame: dict, name: str, waiter: bool = False):
        fid = f"{self.seat}.{next(self.ids)}"
        frame["id"] = fid
        res = gevent.event.AsyncResult() if waiter else None
        self.pending[fid] = (name, now_ms(), res, frame.get("action"), self.state.phase)
        if name == "chat":
            self.game.lines_sent += 1
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
                    if self.bot:
                        self.bot.welcome(msg)
                    break
                raise CheckFailure(f"first frame {msg.get('type')}")
            self.ws.settimeout(None)
        except Exception as e:  # noqa: BLE001
            self.game.fire("WS", "connect", now_ms() - t0, exc=e)
            return False
        self.game.fire("WS", "connect", now_ms() - t0)
        self.reader = gevent.spawn(self.read_loop)
        if self.bot:
            self.driver = gevent.spawn(self.drive)
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
        if self.bot:
            self.bot.event(ev)
            self.poke.set()
        if kind == "chat":
            if g.rng.random() < g.broadcast_sample:
                sent = g.sent_at(ev)
                if sent is not None and ev.get("seat") != self.seat:
                    g.fire("WS", "broadcast", now_ms() - sent)
        elif kind == "prompt":
            if self.state.alive and not self.state.over and not self.bot:
                delay = answer_delay(ev, g.rng, g.think, time.time(), g.model.ask_fraction)
                gevent.spawn_later(delay, self.answer, ev)
        elif kind == "game_started":
            g.started.set()
        elif kind == "game_over":
            g.seat_over(self)

    def drive(self):
        """`bots`: send the frames the bot has due, one command in flight at a time (the next
        waits for its ack or error), then sleep until its next wake or the next frame."""
        bot, g = self.bot, self.game
        while not (g.finished or self.closing or bot.over):
            wake = bot.wake_at()
            self.poke.wait(timeout=None if wake is None else max(0.0, (wake - now_ms()) / 1000))
            self.poke.clear()
            for frame in bot.due(int(now_ms())):
                if frame["type"] == "chat":
                    g.lines[(self.seat, frame["text"])] = now_ms()
                self.send(frame, frame["type"], waiter=True).wait(timeout=30)

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
        if (p and p[0] in ("act", "chat")
                and code in ("not_your_turn", "illegal_target", "room_closed")):
            # The reply can overtake the pub/sub event that explains it (prompt closed, phase
            # changed), by seconds on a loaded box: judge once it came, or after REFUSAL_WAIT.
            gevent.spawn(self.judge_refusal, p, msg, now_ms() - p[1])
        else:
            self.game.fire("WS", f"error:{code}", now_ms() - p[1] if p else 0,
                           exc=CheckFailure(f"{code}: {msg.get('message')} ({p[0] if p else '-'})"))

    def judge_refusal(self, p, msg, ms):
        name, action, phase = p[0], p[3], p[4]
        st = self.state
        waited = 0.0
        while waited < REFUSAL_WAIT and not (
                st.over or not st.alive
                or (action not in st.prompts if name == "act" else phase != st.phase)):
            gevent.sleep(0.25)  # the event that explains the refusal is on its way, or never comes
            waited += 0.25
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
        if self.driver:
            self.driver.kill(block=False)


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
        self.lines: dict = {}  # `bots`: (seat, text) -> when it was last sent (ms)
        self.lines_sent = 0  # chat lines our seats sent this game

    def sent_at(self, chat: dict) -> float | None:
        """When a chat line of ours was sent (ms): a load-test line says so, a bot's is looked up
        (by its seat and text: the last one sent)."""
        parsed = parse_chat_text(chat.get("text") or "")
        if parsed:
            return parsed[0]
        return self.lines.get((chat.get("seat"), chat.get("text")))

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
            oks = [g.value for g in gevent.joinall([gevent.spawn(s.connect, ws_url)
                                                    for s in self.seats])]
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
        self.play_out(t0)

    def play_out(self, t0: float) -> str:
        """Chat and answer prompts until `game_over` reached every seat of ours, then check the
        streams: "completed", "broken" (a socket closed under us) or "timeout"."""
        # the bots say their own lines
        chatter = gevent.spawn(self.chat_loop) if self.model.brain == "random" else None
        deadline = time.monotonic() + self.model.max_game
        try:
            while not self.all_over.is_set():
                if self.broken.is_set():
                    return "broken"
                if time.monotonic() > deadline:
                    self.fire("GAME", "timeout", now_ms() - t0, exc=CheckFailure("game timed out"))
                    return "timeout"
                self.all_over.wait(timeout=1.0)
        finally:
            if chatter:
                chatter.kill(block=False)
        self.fire("GAME", "completed", now_ms() - t0, length=self.lines_sent)
        self.check()
        return "completed"

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
                    next_at[s.seat] = (channel,
                                       now + rng.uniform(0, 1) * model.chat_gap(channel, rng))
                elif planned[1] <= now:
                    s.send({"type": "chat", "text": chat_text(s.seat, next(self.chats))}, "chat")
                    next_at[s.seat] = (channel, now + model.chat_gap(channel, rng))
            soonest = min((when for _, when in next_at.values()), default=now + 1.0)
            gevent.sleep(min(1.0, max(0.0, soonest - time.monotonic())))  # re-read channels often

    # -- the checks -------------------------------------------------------------------------------
    def check(self):
        upto = max(s.state.over_seq or 0 for s in self.seats)
        streams = {s.seat: s.stream for s in self.seats}
        for seat, missing in lost_public_events(streams, upto).items():
            for seq in missing:
                self.fire("CHECK", "lost", 0,
                          exc=CheckFailure(f"seat {seat} missed public seq {seq}"))
        for s in self.replayed_seats():
            self.verify_replay(s, upto)

    def replayed_seats(self) -> list:
        """The seats re-read with since=0 after the game: `--ww-verify-seats` of the table."""
        return self.rng.sample(self.seats, min(self.opts.ww_verify_seats, len(self.seats)))

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
                f"seat {seat.seat}: live missed {missing[:5]}, live extra {extra[:5]}, "
                f"replay dup {dup}"))
        else:
            self.fire("CHECK", "replay", now_ms() - t0)


START_GRACE_S = 30  # a public lobby past its countdown by this much has failed to start by itself
PRESS_TRIES = 3  # a press answered 503 or not at all is sent again, with the same id
_names = itertools.count()


class Player(Game):
    """`quickplay`: one stranger, seated by a press, playing only its own seat (a Game of one
    seat: the same Seat, chat and checks as a table's). Its table is whoever else pressed at
    about the same time; the public table starts by itself when full or after its countdown."""

    def __init__(self, user: "Table", base: str):
        super().__init__(user, base)
        # Unique across Locust processes on this machine (the pid) and within one (the count).
        self.name = f"Q{os.getpid() % 100000}x{next(_names)}"
        self.press_id = secrets.token_urlsafe(12)  # 16 chars of [A-Za-z0-9_-]

    def run(self):
        opts, http = self.opts, self.user.client
        if self.user.games == 1:
            self.arrive()
        http.get(f"{self.base}/", name="home")
        http.get(f"{self.base}/api/tables", name="tables",
                 params={"state": "open", "preset": opts.ww_preset, "language": opts.ww_language})
        t0 = now_ms()
        seated = self.press()
        self.log({"type": "press", "press": self.press_id, "name": self.name, "t0": t0,
                  "ms": (seated["at"] - t0) if seated else None, "clicks": self.clicks,
                  "answers": self.answers})
        if not seated:
            gevent.sleep(1)
            return
        room = seated["room"]
        seat = Seat(self, seated["seat"], seated["token"])
        self.seats = [seat]
        outcome, connected = "stopped", False  # "stopped": the run ended while we waited or played
        try:
            connected = seat.connect(self.ws_base(room) + f"/ws/{room}")
            outcome = self.play() if connected else "connect_failed"
        finally:
            self.finished = True
            seat.close()
            over = seat.state.over_seq
            self.log({"type": "over", "press": self.press_id, "room": room,
                      "seat": seated["seat"], "outcome": outcome, "connected": connected,
                      "over_seq": over,
                      "public": sorted(seat.stream.public(over)) if over else []})

    def arrive(self):
        """Wait for this player's moment: uniform over the window, so presses are independent."""
        window = self.opts.ww_arrival_window
        if window > 0:
            start = (float(self.opts.ww_arrive_at) if self.opts.ww_arrive_at
                     else self.user.spawned_at)
            gevent.sleep(max(0.0, start + self.rng.uniform(0.0, window) - time.time()))

    def press(self) -> dict | None:
        """POST /api/quickplay (twice at once for a double click): the seat, or None. Every
        answer is kept in `self.answers` for the doubly-seated count."""
        self.answers: list = []
        self.clicks = 2 if self.rng.random() < self.opts.ww_double_press else 1
        got = [g.value for g in gevent.joinall([gevent.spawn(self.send_press)
                                                for _ in range(self.clicks)])]
        seats = {(g["room"], g["seat"]) for g in got if g}
        if len(seats) > 1:
            self.fire("CHECK", "double_seated", 0,
                      exc=CheckFailure(f"press {self.press_id} seated at {sorted(seats)}"))
        return min((g for g in got if g), key=lambda g: g["at"], default=None)

    def send_press(self) -> dict | None:
        body = {"name": self.name, "preset": self.opts.ww_preset,
                "language": self.opts.ww_language, "press": self.press_id}
        for _ in range(PRESS_TRIES):
            with self.user.client.post(f"{self.base}/api/quickplay", json=body, name="quickplay",
                                       catch_response=True) as r:
                if r.status_code == 200:
                    seated = {**r.json(), "at": now_ms()}
                    self.answers.append([seated["room"], seated["seat"]])
                    return seated
                self.answers.append([r.status_code])
                r.failure(f"quickplay {r.status_code}")
                if r.status_code not in (0, 502, 503, 504):
                    return None
                retry = (r.headers or {}).get("Retry-After") if r.status_code else None
            gevent.sleep(min(5.0, float(retry)) if retry and retry.isdigit() else 1.0)
        return None

    def ws_base(self, room: str) -> str:
        """The gateway holding the room's sockets: deploy/haproxy hashes /ws/{room}, so every
        seat of a table shares one (zlib.crc32, not hash(): the same in every process)."""
        gws = self.user.gateways or [self.base]
        base = gws[zlib.crc32(room.encode()) % len(gws)]
        return base.replace("http://", "ws://").replace("https://", "wss://")

    def play(self) -> str:
        """Wait for the table to start by itself (nobody sends `start`), then play it out."""
        seat = self.seats[0]
        while not self.started.is_set():
            if self.broken.is_set():
                return "broken"
            starts_at = seat.state.starts_at
            if starts_at and now_ms() > starts_at + START_GRACE_S * 1000:
                self.fire("GAME", "not_started", now_ms() - starts_at, exc=CheckFailure(
                    f"public lobby past its countdown by {START_GRACE_S}+ s"))
                return "not_started"
            self.started.wait(timeout=1.0)  # a lobby short of its minimum waits for ever
        return self.play_out(now_ms())

    def replayed_seats(self) -> list:
        """Our seat, for `--ww-verify-seats` of a table's `--ww-players` players on average."""
        share = self.opts.ww_verify_seats / max(1, self.opts.ww_players)
        return self.seats if self.rng.random() < share else []

    def log(self, record: dict) -> None:
        f = _press_log(self.opts.ww_press_log)
        if f is not None:
            f.write(orjson.dumps(record) + b"\n")


_PRESS_LOG: list = []


def _press_log(directory: str):
    """This process's press log (unbuffered appends: one write per line), or None."""
    if not directory:
        return None
    if not _PRESS_LOG:
        os.makedirs(directory, exist_ok=True)
        _PRESS_LOG.append(open(os.path.join(directory, f"players-{os.getpid()}.jsonl"), "ab",
                               buffering=0))
    return _PRESS_LOG[0]


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
    """One 18-player table, playing games back to back; under a model whose unit is a player
    (`quickplay`), one player, pressing play for each game."""

    wait_time = constant(0)
    host = "http://127.0.0.1:8000"
    _rr = itertools.count()

    def __init__(self, environment):
        super().__init__(environment)
        gws = [g.strip().rstrip("/")
               for g in (environment.parsed_options.ww_gateways or "").split(",")
               if g.strip()]
        self.gateways = gws
        self.base = (gws[next(Table._rr) % len(gws)] if gws else (self.host or "").rstrip("/"))
        self.client = FastHttpSession(base_url=self.base, request_event=environment.events.request,
                                      user=self, connection_timeout=30, network_timeout=60)
        self.games = 0
        self.spawned_at = time.time()

    @task
    def play_game(self):
        limit = self.environment.parsed_options.ww_games
        if limit and self.games >= limit:
            gevent.sleep(1)
            return
        self.games += 1
        unit = Player if model_of(self.environment.parsed_options).arrives == "player" else Game
        unit(self, self.base).run()
        if limit and self.games >= limit:
            _TABLES_DONE[0] += 1
            runner = self.environment.runner
            # A local (headless, single process) run ends by itself once every table is done.
            if isinstance(runner, LocalRunner) and _TABLES_DONE[0] >= runner.target_user_count:
                gevent.spawn_later(3.0, runner.quit)   # after the periodic CSV writer saw all


_TABLES_DONE = [0]
