"""The seats that have sockets in this gateway process: counted, so that a seat with two tabs is
reported disconnected only when its last local socket leaves, and sharing one chat rate limit.

Nothing here is game state: it is forgotten with the last socket of the seat.
"""
from __future__ import annotations

from gateway.ratelimit import TokenBucket

CHAT_BURST, CHAT_RATE = 5, 1.0  # 5 lines at once, then one a second


class LocalSeat:
    __slots__ = ("sockets", "chat")

    def __init__(self) -> None:
        self.sockets = 0
        self.chat = TokenBucket(rate=CHAT_RATE, burst=CHAT_BURST)


class LocalSeats:
    def __init__(self) -> None:
        self._seats: dict[tuple[str, int], LocalSeat] = {}
        self._rooms: dict[str, int] = {}  # room -> sockets here

    @property
    def room_count(self) -> int:
        return len(self._rooms)

    def held(self) -> list[tuple[str, int]]:
        """Every (room, seat) with a socket here."""
        return list(self._seats)

    def enter(self, room: str, seat: int) -> LocalSeat:
        local = self._seats.get((room, seat))
        if local is None:
            local = self._seats[(room, seat)] = LocalSeat()
        local.sockets += 1
        self._rooms[room] = self._rooms.get(room, 0) + 1
        return local

    def leave(self, room: str, seat: int) -> bool:
        """Forget one socket; True if it was the seat's last one in this process."""
        local = self._seats[(room, seat)]
        local.sockets -= 1
        self._rooms[room] -= 1
        if not self._rooms[room]:
            del self._rooms[room]
        if local.sockets:
            return False
        del self._seats[(room, seat)]
        return True
