"""The seats that have sockets in this gateway process: counted, so that a seat with two tabs is
reported gone from this process only when its last local socket leaves.

Nothing here is game state: it is forgotten with the last socket of the seat.
"""
from __future__ import annotations


class LocalSeats:
    def __init__(self) -> None:
        self._seats: dict[tuple[str, int], int] = {}  # (room, seat) -> sockets here
        self._rooms: dict[str, int] = {}  # room -> sockets here

    @property
    def room_count(self) -> int:
        return len(self._rooms)

    def held(self) -> list[tuple[str, int]]:
        """Every (room, seat) with a socket here."""
        return list(self._seats)

    def count(self, room: str, seat: int) -> int:
        """Sockets of this seat here (of spectators, for the WATCHER seat)."""
        return self._seats.get((room, seat), 0)

    def enter(self, room: str, seat: int, limit: int | None = None) -> bool:
        """Count one more socket of the seat; False (nothing counted) if it has `limit` here."""
        held = self._seats.get((room, seat), 0)
        if limit is not None and held >= limit:
            return False
        self._seats[(room, seat)] = held + 1
        self._rooms[room] = self._rooms.get(room, 0) + 1
        return True

    def leave(self, room: str, seat: int) -> bool:
        """Forget one socket; True if it was the seat's last one in this process."""
        self._rooms[room] -= 1
        if not self._rooms[room]:
            del self._rooms[room]
        self._seats[(room, seat)] -= 1
        if self._seats[(room, seat)]:
            return False
        del self._seats[(room, seat)]
        return True
