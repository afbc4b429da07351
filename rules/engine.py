"""The public API: every function returns (new_state, events) or raises, never mutating input."""

import random
from collections.abc import Sequence
from dataclasses import replace

from rules.errors import BadFrame, IllegalTarget, NotYourTurn, RoomClosed
from rules.events import check
from rules.registry import (ACTIONS, CARDS, DECKS, EVENTS, FILLER_CARD, OVERHEARS, STARTS, STEPS,
                            VIEW_FIELDS, WOLF_CARD)
from rules.role import is_wolf, living_wolves
from rules.settings import Settings, deal as deal_for, player_range
from rules.state import GameState
from rules.table import PHONE_TURN, Table, is_night
from rules.text import chat_text

MAX_CHAT = 500


def start_game(names: list, settings: Settings, seed: int, now: int, deal: list | None = None,
               phone: bool = False, online: Sequence[int] = ()):
    """Deal the cards from `seed` and open the first night; `phone`: the table is played on one
    phone passed around, whose round of turns paces the nights (RULES.md, "One phone"), but for
    the seats `online`, each on its own device (RULES.md, "One phone + online").

    `deal` sets the cards in seat order instead of shuffling (a set-up position, like a chess
    FEN, for tests); it must hold exactly the cards of the table's deal, then the cards a role
    sets aside (the Thief's extra cards). A table the settings cannot fill is refused
    (BadSettings).
    """
    lo, hi = player_range(settings)
    if not isinstance(names, list) or not lo <= len(names) <= hi:
        raise BadFrame(f"start: {lo}-{hi} players needed")
    if not all(isinstance(n, str) for n in names):
        raise BadFrame("start: names must be strings")
    if type(seed) is not int or type(now) is not int:
        raise BadFrame("start: seed and now must be integers")
    online = sorted(set(online))
    if online and (not phone or not set(online) < set(range(len(names)))):
        raise BadFrame("start: the seats online are some of a table with a phone, not all")
    in_play = deal_for(len(names), settings)
    deck = [role for role, count in in_play.items() for _ in range(count)]
    rules = settings.rules
    # the roles dealing more cards than seats (their cards set aside are theirs to know)
    extra = {role: DECKS[role][0](rules) for role in settings.roles if role in DECKS}
    extra = {role: cards for role, cards in extra.items() if cards}
    deck += [card for cards in extra.values() for card in cards]
    aside: list = []
    if deal is None:
        rng = random.Random(f"{seed}/0")
        rng.shuffle(deck)
        for role in extra:
            deck, aside = DECKS[role][1](rules, deck, rng)
    elif sorted(deal) != sorted(deck):
        raise BadFrame(f"start: the deal must hold exactly {sorted(deck)}")
    else:
        deck, aside = list(deal[:len(names)]), list(deal[len(names):])
    # The public deal (`in_play`): with `missing_role` one of its special cards is not dealt.
    specials = sorted(r for r in in_play if r not in (WOLF_CARD, FILLER_CARD) and in_play[r])
    if settings.rules["missing_role"] == "on":
        deck = _withdraw_one(deck, specials, random.Random(f"{seed}/missing"))
    state = GameState(
        seed=seed, draws=0, settings=settings.to_json(), names=list(names), roles=deck,
        alive=[True] * len(names), phase="start", day=1, deadline=None, mayor=None, prompts=[],
        memo={"vote": {"elected": False, "votes": {}, "requests": []}, "in_play": specials,
              **{role: {"aside": aside} for role in extra},
              **({"turn": PHONE_TURN} if phone else {}),
              **({"online": online} if online else {})},
        pending=[], resume=None, chat=[], outcome=None)
    t = Table(state, now)
    t.emit("game_started", None, seats=[{"seat": i, "name": n} for i, n in enumerate(names)],
           roles_in_play=in_play, **({"turn": PHONE_TURN} if phone else {}))
    for seat, role in enumerate(deck):
        t.emit("role", [seat], role=role)
    wolves = [seat for seat in range(len(deck)) if is_wolf(state, seat)]
    t.emit("wolves", wolves, wolves=wolves)
    for start in STARTS:
        start(t)
    t.start_night()
    t.run()
    return t.s, t.events


def _withdraw_one(deck: list, specials: list, rng: random.Random) -> list:
    """004's missing role: before the deal one enabled role becomes a Villager (both seats of
    the Lover pair); never a wolf card, and never a card that says so itself (`withdrawable`:
    the Fox, the Baker whose first morning would tell)."""
    pool = [r for r in specials if not CARDS[r].wolf and CARDS[r].withdrawable]
    if not pool:
        return deck
    gone = rng.choice(pool)
    return [FILLER_CARD if card == gone else card for card in deck]


def _check_seat(state: GameState, seat, command: str) -> None:
    if state.phase == "over":
        raise RoomClosed(f"{command}: the game is over")
    if type(seat) is not int or not 0 <= seat < len(state.roles):
        raise BadFrame(f"{command}: no seat {seat!r} at this table")


def act(state: GameState, seat: int, action: str, targets: list, now: int):
    """Answer an open prompt; targets=[] passes where the prompt's `min` is 0."""
    _check_seat(state, seat, str(action))
    if not isinstance(action, str) or action not in ACTIONS:
        raise BadFrame(f"{action!r}: unknown action")
    if not isinstance(targets, list) or not all(type(x) is int for x in targets):
        raise BadFrame(f"{action}: targets must be a list of seat numbers")
    prompt = next((p for p in state.prompts if p["seat"] == seat and p["action"] == action),
                  None)
    if prompt is None:
        raise NotYourTurn(f"{action}: seat {seat} has no open {action} prompt "
                          f"in phase {state.phase}")
    if not prompt["min"] <= len(targets) <= prompt["max"]:
        raise IllegalTarget(f"{action}: {prompt['min']}-{prompt['max']} targets expected "
                            f"in phase {state.phase}, got {len(targets)}")
    if len(set(targets)) != len(targets) or any(x not in prompt["choices"] for x in targets):
        raise IllegalTarget(f"{action}: targets {targets} not among the choices "
                            f"{prompt['choices']} in phase {state.phase}")
    t = Table(state, now)
    t.act(seat, action, targets)
    t.run()
    return t.s, t.events


def channel_of(state: GameState, seat: int) -> tuple[str, list | None] | None:
    """The channel `seat` may write now and its readers (None = everybody), or None."""
    if not state.alive[seat]:
        return "dead", [s for s, alive in enumerate(state.alive) if not alive]
    if not is_night(state.phase):
        return "day", None
    if is_wolf(state, seat):
        return "wolves", living_wolves(state)
    return None


def say(state: GameState, seat: int, text: str, now: int, channel: str | None = None):
    """Chat on the channel the seat's state gives it (day, wolves at night, the dead).

    `channel`, when given, is the one the writer was shown: a line the phase has moved to another
    channel meanwhile is refused rather than posted where its writer did not mean it to go.
    """
    _check_seat(state, seat, "chat")
    if not isinstance(text, str) or not 1 <= len(text.strip()) <= MAX_CHAT:
        raise BadFrame(f"chat: text must be 1-{MAX_CHAT} characters")
    text = chat_text(text)  # what a reader would see: no escapes, overrides, hidden text
    if channel is not None and not isinstance(channel, str):
        raise BadFrame("chat: channel must be a channel name")
    current = channel_of(state, seat)
    if current is None:
        raise NotYourTurn(f"chat: villagers sleep and keep quiet in phase {state.phase}")
    name, readers = current
    if channel is not None and channel != name:
        raise NotYourTurn(f"chat: seat {seat} writes to {name!r} in phase {state.phase}, "
                          f"not to {channel!r}")
    line = {"channel": name, "seat": seat, "name": state.names[seat], "text": text,
            "ts": now}
    stored = {**line, "to": readers}
    copies = [copy for overhear in OVERHEARS for copy in overhear(state, stored)]
    new = replace(state, chat=state.chat + [stored] + copies)
    return new, check(EVENTS, [{"kind": "chat", "to": readers, **line}] + [
        {"kind": "chat", "to": copy["to"], **{k: v for k, v in copy.items() if k != "to"}}
        for copy in copies])


def advance(state: GameState, now: int):
    """Fire the current deadline if it is due; phases the timeout ends chain on at once. The
    deadline of a day waiting for the phone's dawn (seats online) starts its clock instead."""
    if state.phase == "over" or state.deadline is None or state.deadline > now:
        return state, []
    t = Table(state, now)
    if "dawn_clock" in t.s.memo:
        t.start_clock()
    else:
        t.finish()
    t.run()
    return t.s, t.events


def round_done(state: GameState, now: int, phase: str, day: int):
    """One phone: the phone has called every living player for night step `phase` of `day`,
    which ends now as if its time were up. Refused (NotYourTurn) at any other table (with seats
    online too, a step lasts its time: its end must not tell them the phone's pace), and when
    that step is not the current one (its time ran out first)."""
    if "turn" not in state.memo or "online" in state.memo:
        raise NotYourTurn("round_done: this table is not played on one phone alone")
    if state.phase != phase or state.day != day or not is_night(phase):
        raise NotYourTurn(f"round_done: night step {phase!r} of day {day!r} is not the current "
                          f"one ({state.phase} of day {state.day})")
    t = Table(state, now)
    t.finish()
    t.run()
    return t.s, t.events


def dawn_shown(state: GameState, now: int, day: int):
    """One phone: the phone shows the dawn of `day`; the day's first phase, waiting for it,
    starts its clock now (a `clock` event). Refused (NotYourTurn) at any other table, and when
    no clock waits for that dawn (shown already, or the day moved on)."""
    if "turn" not in state.memo:
        raise NotYourTurn("dawn_shown: this table is not played on one phone")
    if "dawn_clock" not in state.memo or state.day != day:
        raise NotYourTurn(f"dawn_shown: no clock waits for the dawn of day {day!r}")
    t = Table(state, now)
    t.start_clock()
    t.run()  # a majority that asked to vote before the dawn (online seats) starts it now
    return t.s, t.events


def next_deadline(state: GameState) -> int | None:
    return state.deadline


def prompts_for(state: GameState, seat: int) -> list:
    return [{"kind": "prompt", "action": p["action"], "choices": p["choices"], "min": p["min"],
             "max": p["max"], "deadline": p["deadline"]}
            for p in state.prompts if p["seat"] == seat]


def _chat_seen(state: GameState, sees, chat_lines: int | None) -> tuple[dict, dict]:
    """({channel: the lines `sees` lets through, without their audience}, {channel: lines left
    out}): with `chat_lines`, only the last that many of each channel are built (a chatty room's
    whole chat is thousands of lines, and a welcome needs its end)."""
    shown: dict = {}
    for at, line in enumerate(state.chat):
        if sees(line):
            shown.setdefault(line["channel"], []).append(at)
    omitted: dict = {}
    if chat_lines is not None:
        for channel, ats in shown.items():
            if len(ats) > chat_lines:
                omitted[channel] = len(ats) - chat_lines
                shown[channel] = ats[len(ats) - chat_lines:]  # [-0:] would keep all
    return {channel: [{k: v for k, v in state.chat[at].items() if k != "to"} for at in ats]
            for channel, ats in shown.items()}, omitted


def view(state: GameState, seat: int, chat_lines: int | None = None) -> dict:
    """Everything `seat` may know now, and nothing more. With `chat_lines`, each chat channel
    holds its last that many lines and `chat_omitted` counts the others ({channel: lines})."""
    if type(seat) is not int or not 0 <= seat < len(state.roles):
        raise BadFrame(f"view: no seat {seat!r} at this table")
    over = state.phase == "over"
    me_alive = state.alive[seat]
    revealed = state.memo.get("revealed", ())
    hidden = state.memo.get("hidden", ())  # dead whose card stays hidden until the end (004)
    seats = [{"seat": i, "name": name, "alive": alive, "mayor": i == state.mayor,
              "role": state.roles[i] if over or i == seat or i in revealed
              or (not alive and i not in hidden) else None}
             for i, (name, alive) in enumerate(zip(state.names, state.alive))]
    # once over, every line of every channel, without the copies some readers were sent
    chat, omitted = _chat_seen(state, lambda line: not line.get("overheard") if over
                               else line["to"] is None or seat in line["to"], chat_lines)
    channel = None if over else channel_of(state, seat)
    result = {
        "phase": state.phase,
        "day": state.day,
        "deadline": state.deadline,
        "turn": state.memo.get("turn"),
        "seats": seats,
        "me": {"seat": seat, "role": state.roles[seat], "alive": me_alive},
        "waiting": None if over else _waiting(state),
        "mayor": state.mayor,
        "chat": chat,
        "channels": [channel[0]] if channel else [],
        "prompts": prompts_for(state, seat),
        "outcome": state.outcome,
    }
    for fields in VIEW_FIELDS:
        result.update(fields(state, seat))
    if chat_lines is not None:
        result["chat_omitted"] = omitted
    return result


# What a spectator's view keeps of the role-owned fields: the day's public votes and requests.
PUBLIC_FIELDS = ("votes", "tally", "requests")


def public_view(state: GameState, chat_lines: int | None = None) -> dict:
    """What a spectator (no seat) may know now: the public table only. Shaped like a seat's view,
    every field present: the cards of the dead and of revealed seats, day chat (every channel once
    over), the public votes and requests; everything that belongs to a seat is null or empty."""
    over = state.phase == "over"
    revealed = state.memo.get("revealed", ())
    hidden = state.memo.get("hidden", ())  # dead whose card stays hidden until the end (004)
    fields: dict = {}
    for role_fields in VIEW_FIELDS:
        fields.update(role_fields(state, 0))
    result = {field: fields[field] if field in PUBLIC_FIELDS else None for field in fields}
    if requests := result.get("requests"):
        result["requests"] = {**requests, "mine": False}
    chat, omitted = _chat_seen(state, lambda line: over or line["to"] is None, chat_lines)
    result.update({
        "phase": state.phase,
        "day": state.day,
        "deadline": state.deadline,
        "turn": state.memo.get("turn"),
        "seats": [{"seat": i, "name": name, "alive": alive, "mayor": i == state.mayor,
                   "role": state.roles[i] if over or i in revealed
                   or (not alive and i not in hidden) else None}
                  for i, (name, alive) in enumerate(zip(state.names, state.alive))],
        "me": None,
        "waiting": None if over else _waiting(state),
        "mayor": state.mayor,
        "chat": chat,
        "channels": [],
        "prompts": [],
        "outcome": state.outcome,
    })
    if chat_lines is not None:
        result["chat_omitted"] = omitted
    return result


def _waiting(state: GameState) -> dict:
    step = STEPS[state.phase]
    seats = None
    if step.names_waiting_seats:
        if state.phase in ("day.election", "day.vote"):
            voted = state.memo["vote"]["votes"]
            seats = [p["seat"] for p in state.prompts if str(p["seat"]) not in voted]
        else:
            seats = sorted({p["seat"] for p in state.prompts})
    return {"action": step.waiting_action, "seats": seats}
