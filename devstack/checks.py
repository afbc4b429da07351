"""Assertions shared by the end-to-end tests and the load scripts: exact streams, no leaks, no lost
acks, frames match the schemas."""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import orjson
from jsonschema import Draft202012Validator

from actors import EVENTS
from actors.redis_connect import connect
from actors.store import Keys

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schema"
ROLE_OF_ACTION = {"seer": "seer", "witch": "witch", "wolves": "werewolf", "cupid": "cupid",
                  "hunter": "hunter"}


async def stored_log(redis_url: str, prefix: str, room: str) -> list[dict]:
    """The room's stored events (the ground truth): [{"seq", "to", "frame"}], seq from 1."""
    redis = connect(redis_url)  # a redis+sentinel:// URL too
    try:
        return [orjson.loads(raw) for raw in await redis.lrange(Keys(prefix).log(room), 0, -1)]
    finally:
        await redis.aclose()


def lost_acks(clients, log: list[dict]) -> list[dict]:
    """The chat lines the room acknowledged to a client that the stored log does not hold. An
    ack promises durability: after any failure this must stay empty."""
    stored = {(f["seat"], f["text"]) for f in (orjson.loads(e["frame"]) for e in log)
              if f["kind"] == "chat"}
    lost = []
    for client in clients:
        acked = {f["id"] for f in client.frames if f.get("type") == "ack"}
        lost += [frame for frame in client.sent if frame.get("type") == "chat"
                 and frame.get("id") in acked and (client.seat, frame["text"]) not in stored]
    return lost


def assert_exact_stream(client, log: list[dict], first: int | None = None,
                        last: int | None = None) -> None:
    """The client got every event of seqs first..last whose audience holds its seat, once each,
    in order, byte for byte as stored, and nothing else. Defaults: after its welcome, to the end."""
    seat = client.seat
    first = client.welcome["seq"] + 1 if first is None else first
    last = log[-1]["seq"] if last is None else last
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    expected = [orjson.loads(e["frame"]) for e in log[first - 1:last]
                if e["to"] is None or seat in e["to"]]
    got = [f for f in client.events if first <= f["seq"] <= last]
    got_seqs, expected_seqs = [f["seq"] for f in got], [f["seq"] for f in expected]
    assert got_seqs == expected_seqs, (
        f"seat {seat}: stream differs (welcome {client.welcome['seq']}, seqs {first}..{last}): "
        f"missing {sorted(set(expected_seqs) - set(got_seqs))}, "
        f"not its own {sorted(set(got_seqs) - set(expected_seqs))}, got {got_seqs}")
    assert got == expected


def assert_no_leak(client, roles: dict[int, str]) -> None:
    """Against the true roles: the socket saw only its own card, its own night information, the
    channels it could read when each line was said, and public events."""
    seat = client.seat
    role = roles[seat]
    dead: set[int] = set()
    for frame in client.frames:
        assert "to" not in frame, frame
        if frame["type"] == "welcome":
            assert_view_is_own(frame["view"], seat, role)
            dead |= {s["seat"] for s in frame["view"].get("seats", []) if not s["alive"]}
            continue
        if frame["type"] != "event":
            continue
        kind = frame["kind"]
        if kind == "role":
            assert frame["role"] == role, frame
        elif kind in ("wolves", "pointed"):
            assert role == "werewolf", frame
        elif kind == "lovers":
            assert seat in frame["lovers"] or role == "cupid", frame
        elif kind == "seer_result":
            assert role == "seer", frame
        elif kind == "witch_victim":
            assert role == "witch", frame
        elif kind in ("prompt", "prompt_closed"):
            owner = ROLE_OF_ACTION.get(frame["action"].split(".")[0])
            assert owner is None or owner == role, frame
        elif kind == "chat":
            if frame["channel"] == "wolves":
                assert role == "werewolf" and seat not in dead, frame
            elif frame["channel"] == "dead":
                assert seat in dead, frame
        elif kind == "death":
            dead.add(frame["seat"])
        elif kind == "cards":  # dead_see_roles: only to the dead, after their death
            assert seat in dead, frame
        elif kind == "game_over":
            break  # from here on everything is public


# What a spectator never gets before the end: every kind declared for some seats only (each
# EventKind says who hears it: cards, prompts, night results, the pack's news...); a chat line
# goes by its channel.
PRIVATE_KINDS = frozenset(kind for kind, declared in EVENTS.items() if declared.public is False)


def assert_spectator_sees_public_only(client, log: list[dict]) -> None:
    """A watch socket got exactly the events for everybody after its welcome, and before
    game_over no card, no private event, no line of the wolves or the dead."""
    assert client.welcome["seat"] is None
    view = client.welcome["view"]
    if view.get("phase") not in (None, "over"):
        assert view["me"] is None and view["prompts"] == [] and set(view["chat"]) <= {"day"}
        assert all(s["role"] is None or not s["alive"] for s in view["seats"]), view["seats"]
    audience = {e["seq"]: e["to"] for e in log}
    leaks = []
    for frame in client.events:
        if frame["kind"] == "game_over":
            break
        if audience[frame["seq"]] is not None or frame["kind"] in PRIVATE_KINDS or (
                frame["kind"] == "chat" and frame["channel"] != "day"):
            leaks.append(frame)
    assert leaks == []
    # Up to game_over: the room may log more (a seat leaving) after the socket's last frame read.
    over = max(f["seq"] for f in client.events if f["kind"] == "game_over")
    got = [f["seq"] for f in client.events if f["seq"] <= over]
    expected = [e["seq"] for e in log
                if client.welcome["seq"] < e["seq"] <= over and e["to"] is None]
    assert got == expected, (f"missing {sorted(set(expected) - set(got))}, "
                             f"not for everybody {sorted(set(got) - set(expected))}, got {got}")


def assert_view_is_own(view: dict, seat: int, role: str) -> None:
    if "me" not in view or view.get("phase") == "over":
        return
    assert view["me"]["role"] == role
    for s in view["seats"]:
        assert s["role"] is None or s["seat"] == seat or not s["alive"], s
    if role != "werewolf":
        assert not view.get("wolves") and not view.get("pointing"), view
    if role != "seer":
        assert not view.get("seer_results"), view
    if role != "witch":
        assert not view.get("witch"), view


def validators() -> dict[str, Draft202012Validator]:
    return {path.stem: Draft202012Validator(json.loads(path.read_text()))
            for path in SCHEMAS.glob("*.json")}


def assert_frames_match_schemas(streams: Iterable[list[dict]]) -> None:
    """Every frame captured on real sockets validates against docs/schema/<type>.json."""
    schemas = validators()
    for frames in streams:
        for frame in frames:
            schemas[frame["type"]].validate(frame)
