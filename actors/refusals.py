"""What `RoomClient` raises when a room or the cluster refuses a request: a join refused (its
`code` is the error the gateway answers with), `again` refused, no host slot left, a host retired,
settings that differ from the cluster's."""
from __future__ import annotations


class JoinRefused(Exception):
    code = "join_refused"


class RoomNotFound(JoinRefused, LookupError):
    code = "room_not_found"


class RoomFull(JoinRefused):
    code = "room_full"


class RoomStarted(JoinRefused):
    code = "room_started"


class NameTaken(JoinRefused):
    code = "name_taken"


class AgainRefused(Exception):
    """`again` refused; `.code`: not_authenticated, not_host or not_your_turn (not over yet)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ConfigMismatch(Exception):
    """This gateway's cluster-wide settings differ from those the cluster runs with."""


class ServerFull(Exception):
    """Every host slot is taken and no more hosts may start (WW_MAX_HOSTS)."""


class HostRetired(Exception):
    """The room's host actor was stopped: all its rooms had ended (see placement.maintain)."""


# The message of the `internal` error a room answers when a newer owner fenced it (its epoch) with
# the command unapplied: the gateway sends the command again, to the room where it goes on.
ROOM_MOVED = "the room moved, retry"
