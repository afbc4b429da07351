"""Errors by cause; each `code` is a protocol error code the gateway sends as is."""


class RulesError(Exception):
    code = "internal"


class NotYourTurn(RulesError):
    """The seat has no open prompt for this command, or may not write now."""

    code = "not_your_turn"


class IllegalTarget(RulesError):
    """Well-formed command whose targets the prompt does not allow."""

    code = "illegal_target"


class BadFrame(RulesError):
    """Malformed command: unknown action, targets not a list of seats, bad text."""

    code = "bad_frame"


class BadSettings(BadFrame):
    pass


class RoomClosed(RulesError):
    """The game is over."""

    code = "room_closed"
