"""The bare baseline: a minimal FastAPI WebSocket room server with no game logic.

It speaks just enough of docs/protocol.md for the same Locust table to drive it at the same rates:
rooms and joins over HTTP, `hello` -> `welcome` (+ replay with `since`), every `chat` appended to
the room's in-memory log and fanned out to every socket of the room, `act`/`settings`/`ping` acked,
`start` -> `game_started` + one `phase` (day.discussion) and, `game_seconds` later, `game_over`.
No Ray, no Redis, no rules: what is left is FastAPI + uvicorn + orjson, one frame encoded once per
event and sent to every reader, i.e. the framework's own cost.

    python -m loadtest.baseline --port 8700 [--game-seconds 90]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import resource
import secrets
import time

import orjson
from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import ORJSONResponse, PlainTextResponse

from gateway.serve.workers import WS_IMPLEMENTATIONS, uvicorn_ws

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class Room:
    def __init__(self, code: str, game_seconds: float):
        self.code = code
        self.names: list[str] = []
        self.tokens: dict[str, int] = {}
        self.log: list[bytes] = []          # encoded event frames, element i has seq i + 1
        self.sockets: dict[int, WebSocket] = {}
        self.status = "lobby"
        self.game_seconds = game_seconds
        self.timer: asyncio.Task | None = None

    def seat(self, name: str) -> dict:
        if len(self.names) >= 18:
            raise HTTPException(409, {"code": "room_full"})
        if self.status != "lobby":
            raise HTTPException(409, {"code": "room_started"})
        if name.strip().lower() in (n.lower() for n in self.names):
            raise HTTPException(409, {"code": "name_taken"})
        seat = len(self.names)
        self.names.append(name.strip())
        token = secrets.token_urlsafe(32)
        self.tokens[token] = seat
        return {"room": self.code, "seat": seat, "token": token}

    async def emit(self, kind: str, **payload) -> None:
        seq = len(self.log) + 1
        frame = orjson.dumps({"type": "event", "seq": seq, "kind": kind, **payload})
        self.log.append(frame)
        text = frame.decode()
        for ws in list(self.sockets.values()):
            try:
                await ws.send_text(text)
            except Exception:  # a closing socket: its reader loop cleans up
                pass

    def view(self) -> dict:
        return {"room": self.code, "status": self.status, "host": 0,
                "players": [{"seat": i, "name": n, "connected": i in self.sockets}
                            for i, n in enumerate(self.names)],
                "settings": {"roles": [], "durations": {}}, "roles_in_play": {}}

    async def _end_later(self) -> None:
        await asyncio.sleep(self.game_seconds)
        self.status = "finished"
        await self.emit("game_over", winners=[], alive=list(range(len(self.names))), roles={},
                        chat=[], reason="baseline")


def create_app(game_seconds: float = 90.0) -> FastAPI:
    app = FastAPI(default_response_class=ORJSONResponse)
    rooms: dict[str, Room] = {}

    @app.get("/healthz")
    async def healthz():
        return PlainTextResponse("ok")

    @app.post("/api/rooms", status_code=201)
    async def create_room(body: dict):
        code = "".join(secrets.choice(ALPHABET) for _ in range(6))
        room = rooms[code] = Room(code, game_seconds)
        out = room.seat(body.get("name", "host"))
        await room.emit("joined", seat=0, name=room.names[0])
        return out

    @app.post("/api/rooms/{code}/join")
    async def join(code: str, body: dict):
        room = rooms.get(code)
        if room is None:
            raise HTTPException(404, {"code": "no_such_room"})
        out = room.seat(body.get("name", "p"))
        await room.emit("joined", seat=out["seat"], name=room.names[-1])
        return out

    @app.get("/api/rooms/{code}")
    async def lobby(code: str):
        room = rooms.get(code)
        if room is None:
            raise HTTPException(404, {"code": "no_such_room"})
        return room.view()

    @app.websocket("/ws/{code}")
    async def ws(websocket: WebSocket, code: str):
        await websocket.accept()
        room = rooms.get(code)
        try:
            hello = orjson.loads(await websocket.receive_text())
        except WebSocketDisconnect:  # the generator gave up on it (a step past the box's limit)
            return
        seat = room.tokens.get(hello.get("token")) if room else None
        if seat is None or hello.get("type") != "hello":
            await websocket.close(1008)
            return
        since = hello.get("since")
        seq = len(room.log)
        await websocket.send_text(orjson.dumps(
            {"type": "welcome", "seat": seat, "seq": seq, "view": room.view()}).decode())
        if since is not None:
            for frame in room.log[since:seq]:
                await websocket.send_text(frame.decode())
        room.sockets[seat] = websocket
        try:
            while True:
                msg = orjson.loads(await websocket.receive_text())
                typ, fid = msg.get("type"), msg.get("id")
                if typ == "chat":
                    await room.emit("chat", channel="day", seat=seat, name=room.names[seat],
                                    text=str(msg.get("text", ""))[:500], ts=int(time.time() * 1000))
                elif typ == "start" and room.status == "lobby":
                    room.status = "running"
                    await room.emit("game_started",
                                    seats=[{"seat": i, "name": n}
                                           for i, n in enumerate(room.names)],
                                    roles_in_play={})
                    await room.emit("phase", phase="day.discussion", day=1, deadline=None)
                    room.timer = asyncio.create_task(room._end_later())
                await websocket.send_text(orjson.dumps({"type": "ack", "id": fid}).decode())
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: sending after the close
            pass
        finally:
            if room.sockets.get(seat) is websocket:
                del room.sockets[seat]
            if not room.sockets and room.status == "finished":
                # keep a finished room a little for late readers (replay checks), then forget it
                asyncio.get_running_loop().call_later(60, rooms.pop, code, None)

    return app


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 200_000
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), max(hard, want)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# For ASGI servers started by module path (loadtest/compare.py runs it under granian).
app = create_app(float(os.environ.get("WW_BASELINE_GAME_SECONDS", "90")))


def main(argv=None) -> None:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8700)
    ap.add_argument("--game-seconds", type=float,
                    default=float(os.environ.get("WW_BASELINE_GAME_SECONDS", "90")))
    ap.add_argument("--ws", default="websockets-sansio", choices=WS_IMPLEMENTATIONS,
                    help="uvicorn's WebSocket implementation (as werewolf serve --ws)")
    args = ap.parse_args(argv)
    raise_fd_limit()
    uvicorn.run(create_app(args.game_seconds), host=args.host, port=args.port, log_level="warning",
                loop="uvloop", ws=uvicorn_ws(args.ws), ws_max_size=1 << 20,  # as werewolf serve
                ws_per_message_deflate=False)


if __name__ == "__main__":
    main()
