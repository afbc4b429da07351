"""The wire contract as types: one pydantic model per frame of `/ws/{room}` and per HTTP body.

The gateway validates client frames with `COMMAND` (a union discriminated by `type`) and `HELLO`;
docs/schema/*.json and docs/asyncapi.json are generated from these models by
`python -m gateway.frames` (tests/gateway/test_schemas.py checks the committed files are the
generated ones). Constraints the room enforces itself, with its own error code (a target must be a
seat, a channel one the writer was shown, a setting one the rules declare), are stated in the
schemas through `json_schema_extra` but not checked here: the gateway passes them on unchanged.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt,
                      StrictStr, StringConstraints, TypeAdapter, model_validator)
from pydantic.json_schema import GenerateJsonSchema

import rules
from actors import EVENTS, LANGUAGES, QUICK_PRESETS, clean_name
from rules.settings import settings_schema

MAX_ID_CHARS = 64
MAX_TARGETS = 32
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schema"
ASYNCAPI_PATH = SCHEMA_DIR.parent / "asyncapi.json"

Seat = Annotated[StrictInt, Field(ge=0)]
FrameId = Annotated[Union[Annotated[StrictStr, Field(max_length=MAX_ID_CHARS)], StrictInt, None],
                    Field(description="client-chosen id echoed in the ack or error")]
ERROR_CODES = ("bad_frame", "not_authenticated", "not_your_turn", "illegal_target", "not_host",
               "rate_limited", "room_closed", "internal")
ROOM_STATUS = Literal["lobby", "running", "finished", "broken"]


class Frame(BaseModel):
    """A frame: `doc` is its schema's description, `messages` the bad_frame message of each field
    (a client reads why its frame was refused; the text predates these models and stays)."""
    doc: ClassVar[str]
    messages: ClassVar[dict[str, str]] = {}


def frame_name(model: type[Frame]) -> str:
    return model.model_fields["type"].annotation.__args__[0]


# Client frames -----------------------------------------------------------------------------------

class Hello(Frame):
    doc = ("Client, first frame on /ws/{room}: a seat's (token) or a spectator's (watch: true, no "
           "token). A token of no seat of this room closes the socket with 1008; so does a watch "
           "hello where the host forbids spectators.")
    model_config = ConfigDict(json_schema_extra={"oneOf": [{"required": ["token"]},
                                                           {"required": ["watch"]}]})
    type: Literal["hello"]
    # An empty token is refused by authentication (not_authenticated), like any unknown one.
    token: Annotated[StrictStr, Field(json_schema_extra={"minLength": 1})] | None = None
    watch: Literal[True] | None = Field(None, description="a spectator's read-only socket: "
                                        "no seat, public events only")
    since: Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _a_seat_or_a_spectator(self) -> Hello:
        if self.token is None and self.watch is None:
            raise ValueError("hello needs a token, or watch: true")
        return self


class Command(Frame):
    keep: ClassVar[tuple[str, ...]] = ()
    id: FrameId = None


class Act(Command):
    doc = "Client: answer an open prompt (empty targets = pass / abstain)."
    messages = {"action": "act needs an action name",
                "targets": "targets must be a list of seat numbers"}
    keep = ("targets",)
    type: Literal["act"]
    action: Annotated[StrictStr, Field(min_length=1)]
    # A seat number the table lacks is the room's `illegal_target`, not a bad frame.
    targets: Annotated[list[StrictInt], Field(max_length=MAX_TARGETS,
                                              json_schema_extra={"items": {"type": "integer",
                                                                           "minimum": 0}})] = []


class Chat(Command):
    doc = ("Client: one chat line; the server picks the channel from the seat's state and refuses "
           "the line if it names another.")
    messages = {"text": "chat needs a non-empty text", "channel": "channel must be a channel name"}
    type: Literal["chat"]
    text: Annotated[StrictStr, Field(min_length=1, pattern=r"\S")]
    channel: Annotated[StrictStr, Field(
        description="the channel the writer was shown (optional)",
        json_schema_extra={"enum": ["day", "wolves", "dead"]})] = None


class Settings(Command):
    """What a setting may be is declared once, in rules/ (its schema is rules' `settings_schema`);
    the room checks a change against it, so the fields pass through as given."""
    doc = settings_schema()["description"]
    type: Literal["settings"]
    roles: Any = None
    durations: Any = None
    rules: Any = None
    preset: Any = None


class Start(Command):
    doc = "Client, host only, lobby only, at least 6 seated: deal the cards."
    type: Literal["start"]


class Table(Command):
    doc = ("Client, the host of a private table, lobby only: open the table to strangers (public: "
           "listed, quick play seats them, it starts by itself). A public table plays its preset "
           "in `language` and has no host: it stays public (`not_host`), its first seat may change "
           "only the durations.")
    messages = {"public": "table needs public true or false",
                "language": f"language must be one of {list(LANGUAGES)}",
                "phone": "phone must be true or false",
                "phone_seats": "phone_seats must be a list of seats"}
    type: Literal["table"]
    public: StrictBool
    language: Literal[LANGUAGES] | None = None
    phone: StrictBool | None = Field(None, description="played on one phone passed around (private "
                                     "only; RULES.md \"One phone\"); absent: unchanged")
    phone_seats: list[Seat] | None = Field(
        None, max_length=20, description="with `phone`, the seats played on the phone, the others "
        "online (RULES.md \"One phone + online\"); absent: those already, or every human seat")


class Leave(Command):
    doc = ("Client: leave the table. In the lobby the seat's sockets close with 4003 and its token "
           "proves nothing any more; the last seat moves into its place (see `removed`). In a "
           "running game a bot plays the seat from then on (`bot_seat`) until its player comes "
           "back.")
    type: Literal["leave"]


class AddBot(Command):
    doc = "Client, host of a private lobby only: a bot takes the next seat (`joined`, bot true)."
    type: Literal["add_bot"]


class RemoveBot(Command):
    doc = ("Client, host of a private lobby only: the bot at `seat` leaves (`removed`; the last "
           "seat moves into its place).")
    messages = {"seat": "remove_bot needs the seat of a bot"}
    type: Literal["remove_bot"]
    seat: Seat


class Remove(Command):
    doc = ("Client, lobby only: remove another seat. At a private table the host's decision; at a "
           "public one a vote, which removes the seat once most of the others voted so "
           "(`remove_vote`, then `removed`).")
    messages = {"seat": "remove needs the seat of another player"}
    type: Literal["remove"]
    seat: Seat


class RoundDone(Command):
    doc = ("Client, a table on one phone only (no seat online): the phone has called every "
           "living player for the night step `phase` of `day`, which ends now (RULES.md \"One "
           "phone\").")
    messages = {"phase": "round_done needs the night step's phase",
                "day": "round_done needs the day"}
    type: Literal["round_done"]
    phase: Annotated[StrictStr, Field(min_length=1, max_length=40)]
    day: Annotated[StrictInt, Field(ge=1)]


class DawnShown(Command):
    doc = ("Client, a table with one phone (and seats online or not): the phone shows the dawn "
           "of `day`; the day's first phase starts its clock now (a `clock` event).")
    messages = {"day": "dawn_shown needs the day"}
    type: Literal["dawn_shown"]
    day: Annotated[StrictInt, Field(ge=1)]


class Ping(Command):
    doc = "Client: answered by an ack from the gateway itself."
    type: Literal["ping"]


CLIENT_FRAMES: tuple[type[Frame], ...] = (Hello, Act, Chat, Settings, Start, Table, Leave, Remove,
                                          AddBot, RemoveBot, RoundDone, DawnShown, Ping)
COMMAND = TypeAdapter(Annotated[Union[Act, Chat, Settings, Start, Table, Leave, Remove, AddBot,
                                      RemoveBot, RoundDone, DawnShown, Ping],
                                Field(discriminator="type")])
HELLO = TypeAdapter(Hello)
# The id alone, read first: an error about any other field still echoes it.
FRAME_ID = TypeAdapter(FrameId)


COMMANDS: dict[str, type[Command]] = {frame_name(m): m for m in (Act, Chat, Settings, Start, Table,
                                                                  Leave, Remove, AddBot, RemoveBot,
                                                                  RoundDone, DawnShown, Ping)}


def command_dict(command: Command) -> dict:
    """The command as the room takes it: type, id, the fields with a default the room relies on
    and the optional ones the client gave (an absent channel or setting stays absent)."""
    return command.model_dump(include={"type", "id", *command.model_fields_set, *command.keep})


# Server frames -----------------------------------------------------------------------------------

class Ack(Frame):
    doc = "Server: the command with this id is durable (or, for ping, received)."
    model_config = ConfigDict(extra="forbid")
    type: Literal["ack"]
    id: FrameId


class Error(Frame):
    doc = "Server: the command with this id (null when it could not be read) changed nothing."
    type: Literal["error"]
    id: FrameId
    code: Literal[ERROR_CODES]
    message: str


class Player(BaseModel):
    seat: Seat
    name: str
    connected: bool
    away: bool = Field(False, description="a public game's seat that let 2 votes (prompts every "
                       "living seat holds) in a row pass")
    bot: bool = Field(False, description="a bot plays the seat now (a bot's seat, or a running "
                      "game's seat whose player left or turned away)")
    phone: bool = Field(False, description="played on the table's one phone (`phone`); false at "
                        "such a table: online (RULES.md \"One phone + online\")")


class SettingsView(BaseModel):
    roles: list[str]
    durations: dict[str, int]


class Prompt(BaseModel):
    action: str
    choices: list[Seat]
    min: Annotated[int, Field(ge=0)]
    max: Annotated[int, Field(ge=0)]
    deadline: int | None = Field(None, description="ms since the epoch; null: no time limit")


class RemoveVotes(BaseModel):
    votes: Annotated[int, Field(ge=1)]
    needed: Annotated[int, Field(ge=1)]


class LobbyFacts(BaseModel):
    room: str
    status: ROOM_STATUS
    host: Seat | None
    players: list[Player]
    settings: SettingsView
    roles_in_play: dict[str, Annotated[int, Field(ge=0)]]
    public: bool = Field(False, description="listed for strangers (GET /api/tables)")
    language: Literal[LANGUAGES] | None = Field(None, description="a public table's language")
    phone: bool = Field(False, description="played on one phone passed around (RULES.md \"One "
                        "phone\")")
    starts_at: int | None = Field(None, description="a public lobby's countdown: when it starts "
                                  "by itself (ms since the epoch); null: not counting down")
    remove_votes: dict[str, RemoveVotes] = Field({}, description="a public lobby's votes to "
                                                 "remove a seat, by seat")


class View(LobbyFacts):
    """The seat's own view (a running game adds its phase, seats, own card and night facts)."""
    prompts: list[Prompt] = []
    chat_omitted: dict[str, Annotated[int, Field(ge=1)]] = Field(
        {}, description="a running or finished game's chat channels whose first lines the view "
        "leaves out: the welcome carries the last 100 lines of each "
        "(actors.room_data.WELCOME_CHAT_LINES)")


class Welcome(Frame):
    doc = "Server, answer to hello: the seat's whole view at room sequence number seq."
    type: Literal["welcome"]
    seat: Seat | None = Field(description="null for a spectator's socket")
    seq: Annotated[int, Field(ge=0)]
    view: View


# Each event kind with the fields it always carries and the types a client relies on, from the
# declarations (rules.events, actors.room_data.ROOM_EVENTS; rules/RULES.md says what they mean).
EVENT_FIELDS: dict[str, tuple[str, ...]] = {kind: k.fields for kind, k in EVENTS.items()}
EVENT_TYPES: dict[str, dict[str, dict]] = {kind: k.types for kind, k in EVENTS.items() if k.types}


def _event_schema(schema: dict, _: Any) -> None:
    schema["properties"]["to"] = False  # the audience stays on the server
    schema["allOf"] = [
        {"if": {"properties": {"kind": {"const": kind}}},
         "then": {"description": f"{EVENTS[kind].doc} (heard by: {EVENTS[kind].audience})",
                  "required": list(fields), **({"properties": EVENT_TYPES[kind]}
                                               if kind in EVENT_TYPES else {})}}
        for kind, fields in EVENT_FIELDS.items()]


class Event(Frame):
    doc = ("Server: one room event. seq rises by room; a seat sees gaps (events it may not see) "
           "but never a repeat or a reorder. Never carries `to`.")
    model_config = ConfigDict(extra="allow", json_schema_extra=_event_schema)
    type: Literal["event"]
    seq: Annotated[int, Field(ge=1)]
    kind: Literal[tuple(EVENT_FIELDS)]


SERVER_FRAMES: tuple[type[Frame], ...] = (Welcome, Event, Ack, Error)


# HTTP bodies -------------------------------------------------------------------------------------

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=24),
                 AfterValidator(clean_name)]

class HttpName(Frame):
    doc = ("HTTP request body of POST /api/rooms/{room}/join. 1-24 characters after trimming, "
           "unique in the room (case-insensitive).")
    # The room's own rules (actors.names.clean_name: NFKC, no invisible characters...): a bad name
    # is a 422 here, never a 500.
    name: Name


class HttpCreate(Frame):
    doc = ("HTTP request body of POST /api/rooms: the host's name, and whether the table is public "
           "(listed; then its preset and language, seed_000 and en by default) or private (a link "
           "only, the default).")
    name: Name
    public: StrictBool = False
    preset: Literal[tuple(rules.PRESETS)] = "seed_000"
    language: Literal[LANGUAGES] = "en"


class HttpQuickPlay(Frame):
    doc = ("HTTP request body of POST /api/quickplay: seat me at the fullest public table of this "
           "preset and language not started yet, or at a new one. `press`: an id the client "
           "chose for this press; a retry with the same id gets the same seat.")
    name: Name
    preset: Literal[QUICK_PRESETS]
    language: Literal[LANGUAGES]
    press: Annotated[str, StringConstraints(min_length=8, max_length=64,
                                            pattern="^[A-Za-z0-9_-]+$")] | None = None


class HttpTable(BaseModel):
    room: str
    preset: str
    language: Literal[LANGUAGES]
    state: Literal["open", "running"]
    seats: Annotated[int, Field(ge=0)] = Field(description="seats taken (or promised to a press "
                                               "on its way)")
    size: Annotated[int, Field(ge=1)]
    bots: Annotated[int, Field(ge=0)] = Field(0, description="of the seats, those bots hold "
                                              "(a running game's: as dealt)")
    starts_at: int | None = Field(None, description="open: when it starts by itself (ms), or null")
    started: int | None = Field(None, description="running: when it started (ms)")


class HttpTables(Frame):
    doc = ("HTTP answer of GET /api/tables?state=open|running&preset=&language=&page=: the public "
           "tables, open ones fullest first, running ones newest first, a page at a time.")
    tables: list[HttpTable]
    page: Annotated[int, Field(ge=1)]
    pages: Annotated[int, Field(ge=1)]
    total: Annotated[int, Field(ge=0)]


REPORT_REASONS = ("abuse", "cheating", "afk", "name", "other")


class HttpReport(Frame):
    doc = ("HTTP request body of POST /api/rooms/{room}/reports: the reporting seat's token, the "
           "seat reported, why, and a few words. Stored with the room for the operators (GET "
           "/api/admin/reports), never shown to players; one report per seat and reported seat.")
    token: str
    seat: Seat
    reason: Literal[REPORT_REASONS]
    text: Annotated[str, StringConstraints(max_length=500)] = ""


class HttpToken(Frame):
    doc = "HTTP request body of POST /api/rooms/{room}/again: the host's token of that room."
    token: str


class HttpSeat(Frame):
    doc = ("HTTP answer of POST /api/rooms (201) and POST /api/rooms/{room}/join (200): the seat "
           "and its secret token.")
    room: Annotated[str, Field(pattern="^[A-HJKMNP-Z2-9]{6}$")]
    seat: Seat
    token: Annotated[str, Field(min_length=32)]


class HttpRoom(LobbyFacts, Frame):
    doc = "HTTP answer of GET /api/rooms/{room}: public lobby facts only."
    next: str | None = Field(description="the room of the next game at this table, once the host "
                             "of this finished room has opened it (POST /api/rooms/{room}/again), "
                             "else null")
    spectators: Annotated[int, Field(ge=0)] = Field(0, description="spectators watching now "
                                                   "(watch sockets)")


class HttpErrorDetail(BaseModel):
    code: Literal["room_not_found", "room_full", "room_started", "name_taken",
                  "not_authenticated", "not_host", "not_your_turn", "rate_limited", "server_full",
                  "storage_unavailable", "too_large", "illegal_target", "bad_kind"]
    message: str | None = None


class HttpError(Frame):
    doc = ("HTTP 401/403/404/409 answer of join, again and GET room; 413 of any body too large; "
           "429 rate_limited (rooms or unknown room codes from one address); 503 server_full (no "
           "host slot) and storage_unavailable (Redis unreachable for 10 s, e.g. a long failover; "
           "with Retry-After).")
    detail: HttpErrorDetail


HTTP_BODIES: dict[str, type[Frame]] = {"http_name": HttpName, "http_create": HttpCreate,
                                       "http_quickplay": HttpQuickPlay, "http_tables": HttpTables,
                                       "http_report": HttpReport, "http_token": HttpToken,
                                       "http_seat": HttpSeat, "http_room": HttpRoom,
                                       "http_error": HttpError}


# Generation --------------------------------------------------------------------------------------

class _Schema(GenerateJsonSchema):
    """Draft 2020-12 without pydantic's generated titles (the names say it) or input defaults."""

    def field_title_should_be_set(self, schema) -> bool:
        return False

    def generate(self, schema, mode="validation"):
        out = super().generate(schema, mode)
        for model in out.get("$defs", {}).values():
            model.pop("title", None)
        return out


def schema_of(name: str, model: type[Frame]) -> dict:
    if model is Settings:
        return settings_schema()
    body = model.model_json_schema(schema_generator=_Schema)
    body.pop("title", None)
    body.pop("description", None)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}.json",
            "title": name, "description": model.doc, **body}


def schemas() -> dict[str, dict]:
    """docs/schema/<name>.json for every frame and HTTP body."""
    frames = {frame_name(m): m for m in (*CLIENT_FRAMES, *SERVER_FRAMES)}
    return {name: schema_of(name, model) for name, model in {**frames, **HTTP_BODIES}.items()}


def asyncapi() -> dict:
    """The WebSocket channel as an AsyncAPI 3.0 document whose messages point at docs/schema/."""
    client = [frame_name(m) for m in CLIENT_FRAMES]
    server = [frame_name(m) for m in SERVER_FRAMES]
    messages = {name: {"name": name, "payload": {"$ref": f"schema/{name}.json"}}
                for name in client + server}
    return {
        "asyncapi": "3.0.0",
        "info": {"title": "Werewolf gateway WebSocket", "version": "1",
                 "description": "One socket per seat; docs/protocol.md tells the order of frames. "
                                "Generated by `python -m gateway.frames`."},
        "channels": {"room": {
            "address": "/ws/{room}",
            "parameters": {"room": {"description": "the six-character room code"}},
            "messages": messages}},
        "operations": {
            "sendCommand": {"action": "receive", "channel": {"$ref": "#/channels/room"},
                            "summary": "frames the client sends (hello first, then commands)",
                            "messages": [{"$ref": f"#/channels/room/messages/{n}"}
                                         for n in client]},
            "receiveEvent": {"action": "send", "channel": {"$ref": "#/channels/room"},
                             "summary": "frames the gateway sends",
                             "messages": [{"$ref": f"#/channels/room/messages/{n}"}
                                          for n in server]},
        },
    }


def generated_files() -> dict[Path, str]:
    files = {SCHEMA_DIR / f"{name}.json": json.dumps(schema, indent=2) + "\n"
             for name, schema in schemas().items()}
    files[ASYNCAPI_PATH] = json.dumps(asyncapi(), indent=2) + "\n"
    return files


if __name__ == "__main__":
    for path, text in generated_files().items():
        path.write_text(text)
    sys.exit(0)
