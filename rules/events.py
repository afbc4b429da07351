"""What the table is told, declared once: each event kind, the fields it carries and who hears it.

A kind is declared by the module that owns it (a role's `Role.events`; the flow's own below) and
emitted by any module. The engine checks every event it emits against its declaration
(`check`): an undeclared kind or field, a missing field, or a public event declared private (or
the reverse) is a bug, raised at once. The gateway's frame schema (docs/schema/event.json) and
the client's list of kinds (`/api/rules`, "events") are made from these declarations.
"""
from __future__ import annotations

from dataclasses import dataclass, field

ROUTING = frozenset({"kind", "to", "unseat"})  # how the server routes an event: never in its frame
EVERYONE = "everyone"  # `to` None: every seat and spectator
BY_CHANNEL = "the channel's readers"  # a chat line: the day's channel is everyone's, the others not


class UndeclaredEvent(AssertionError):
    """An event that its declaration does not allow: a bug in the module that emitted it."""


@dataclass(frozen=True)
class EventKind:
    kind: str
    fields: tuple[str, ...]  # carried by every event of the kind (a value may be null)
    audience: str  # EVERYONE, or who among the seats hears it ("the Seer", "the pack"...)
    doc: str
    optional: tuple[str, ...] = ()  # carried by some events of the kind only
    # JSON Schema of fields a client relies on (the others are documented in RULES.md)
    types: dict = field(default_factory=dict)

    @property
    def public(self) -> bool | None:
        """Heard by everyone (True), by some seats only (False), or by the channel (None)."""
        return None if self.audience == BY_CHANNEL else self.audience == EVERYONE

    def check(self, event: dict) -> None:
        carried = set(event) - ROUTING
        missing = set(self.fields) - carried
        extra = carried - set(self.fields) - set(self.optional)
        if missing or extra:
            raise UndeclaredEvent(f"{self.kind} event: missing {sorted(missing)}, "
                                  f"undeclared {sorted(extra)}")
        if self.public is not None and (event.get("to") is None) != self.public:
            raise UndeclaredEvent(f"{self.kind} event is heard by {self.audience}, "
                                  f"sent to {event.get('to')!r}")

    def to_json(self) -> dict:
        return {"fields": list(self.fields), "optional": list(self.optional),
                "audience": self.audience, "doc": self.doc}


def check(declared: dict[str, EventKind], events: list[dict]) -> list[dict]:
    """`events`, each checked against its kind's declaration (UndeclaredEvent if one fails)."""
    for event in events:
        kind = declared.get(event["kind"])
        if kind is None:
            raise UndeclaredEvent(f"no module declares the event kind {event['kind']!r}")
        kind.check(event)
    return events


_SEATS = {"type": "array", "items": {"type": "integer", "minimum": 0}}
_BY_SEAT = {"type": "object", "propertyNames": {"pattern": "^[0-9]+$"},
            "additionalProperties": {"type": "string"}}

_STORY = {"type": "array", "items": {
    "type": "object", "required": ["night", "seat", "what", "targets"],
    "properties": {"night": {"type": "integer", "minimum": 1},
                   "seat": {"type": "integer", "minimum": 0},
                   "what": {"type": "string"}, "targets": _SEATS}}}

# The flow's own: the deal, the phases, the prompts, deaths, the chat and the end.
FLOW = (
    EventKind("game_started", ("seats", "roles_in_play"), EVERYONE,
              "the deal is done: the seats in order and the cards in play; `turn`: on one "
              "phone, the seconds of each player's turn", optional=("turn",)),
    EventKind("role", ("role",), "the seat", "your card (again if it changes: the Thief's swap)"),
    EventKind("phase", ("phase", "day", "deadline"), EVERYONE, "a new phase and when it ends"),
    EventKind("clock", ("phase", "deadline"), EVERYONE,
              "one phone: the phase waiting for the phone's dawn (deadline null; with seats "
              "online, the wait's end) starts its clock, ending at `deadline`"),
    EventKind("prompt", ("action", "choices", "min", "max", "deadline"), "the seat",
              "a choice to make: `min` 0 means passing is allowed",
              types={"action": {"type": "string"}, "choices": _SEATS,
                     "min": {"type": "integer", "minimum": 0},
                     "max": {"type": "integer", "minimum": 0},
                     "deadline": {"type": ["integer", "null"]}}),
    EventKind("prompt_closed", ("action",), "the seat", "a prompt is answered or expired"),
    EventKind("death", ("seat", "role", "cause"), EVERYONE,
              "a seat died: its card (null while hidden cards keep it) and the cause the table "
              "is told (under hidden cards only night / vote / day: RULES.md)"),
    EventKind("game_over", ("winners", "alive", "roles", "causes", "chat", "story", "reason"),
              EVERYONE,
              "the end: every card, every hidden death's true cause, the whole chat and the "
              "night's secret deeds no event told (`story`: night, seat, what, targets)",
              types={"winners": _SEATS, "alive": _SEATS, "chat": {"type": "array"},
                     "roles": _BY_SEAT, "causes": _BY_SEAT, "story": _STORY}),
    EventKind("chat", ("channel", "seat", "name", "text", "ts"), BY_CHANNEL,
              "a chat line; `overheard`: the Little Girl reads a wolf under a letter (seat null)",
              optional=("overheard",)),
)
