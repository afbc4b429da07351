"""docs/schema and docs/asyncapi.json: generated from gateway/frames.py and committed as
generated, every schema valid JSON Schema, the protocol's examples fit them (real frames are
checked against them in the end-to-end tests)."""
import json

import pytest
from jsonschema import Draft202012Validator, ValidationError

from devstack.checks import SCHEMAS, validators
from gateway.frames import ASYNCAPI_PATH, SCHEMA_DIR, generated_files
from rules.settings import settings_schema

EXAMPLES = {
    "hello": {"type": "hello", "token": "abc", "since": None},
    "act": {"type": "act", "id": "a1", "action": "cupid.link", "targets": [2, 5]},
    "chat": {"type": "chat", "id": 7, "text": "hello"},
    "settings": {"type": "settings", "id": "s", "roles": ["seer", "guard"],
                 "durations": {"vote": 30},
                 "rules": {"guard_self": "yes"}, "preset": None},
    "start": {"type": "start", "id": "go"},
    "round_done": {"type": "round_done", "id": 3, "phase": "night.seer", "day": 2},
    "dawn_shown": {"type": "dawn_shown", "id": 4, "day": 2},
    "ping": {"type": "ping", "id": None},
    "ack": {"type": "ack", "id": "a1"},
    "error": {"type": "error", "id": None, "code": "bad_frame", "message": "frame is not JSON"},
    "event": {"type": "event", "seq": 9, "kind": "prompt", "action": "vote", "choices": [0, 2],
              "min": 0, "max": 1, "deadline": 1700000000000},
}


def test_every_schema_is_valid_json_schema():
    schemas = validators()
    assert {"hello", "act", "chat", "settings", "start", "ping", "welcome", "event", "ack",
            "error", "http_name", "http_seat", "http_room", "http_error"} <= set(schemas)
    for validator in schemas.values():
        Draft202012Validator.check_schema(validator.schema)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_protocol_examples_fit(name):
    validators()[name].validate(EXAMPLES[name])


@pytest.mark.parametrize("name, frame", [
    ("event", {"type": "event", "seq": 3, "kind": "role", "to": [1], "role": "seer"}),
    ("event", {"type": "event", "seq": 3, "kind": "prompt", "action": "vote"}),
    ("error", {"type": "error", "id": None, "code": "oops", "message": ""}),
    ("hello", {"type": "hello", "since": 3}),
])
def test_frames_breaking_the_contract_are_rejected(name, frame):
    with pytest.raises(ValidationError):
        validators()[name].validate(frame)


def test_the_committed_files_are_the_generated_ones():
    """Regenerate with `python -m gateway.frames` after changing a frame or a role's settings."""
    files = generated_files()
    assert sorted(files) == sorted([*SCHEMA_DIR.glob("*.json"), ASYNCAPI_PATH])
    for path, text in files.items():
        assert path.read_text() == text, f"{path.name} is stale: run python -m gateway.frames"


def test_the_settings_schema_is_the_one_the_rules_declare():
    assert json.loads((SCHEMAS / "settings.json").read_text()) == settings_schema()


def test_the_asyncapi_document_names_every_frame_schema():
    document = json.loads(ASYNCAPI_PATH.read_text())
    assert document["asyncapi"].startswith("3.")
    refs = {m["payload"]["$ref"] for m in document["channels"]["room"]["messages"].values()}
    assert refs == {f"schema/{name}.json" for name in
                    ("hello", "act", "chat", "settings", "start", "table", "leave", "remove",
                     "add_bot", "remove_bot", "round_done", "dawn_shown", "ping",
                     "welcome", "event", "ack", "error")}
