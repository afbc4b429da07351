"""docs/schema: every schema is valid JSON Schema, and the protocol's examples fit them (real
frames are checked against them in the end-to-end tests)."""
import json

import pytest
from jsonschema import Draft202012Validator, ValidationError

from rules.settings import settings_schema
from tests.gateway.checks import SCHEMAS, validators

EXAMPLES = {
    "hello": {"type": "hello", "token": "abc", "since": None},
    "act": {"type": "act", "id": "a1", "action": "cupid.link", "targets": [2, 5]},
    "chat": {"type": "chat", "id": 7, "text": "hello"},
    "settings": {"type": "settings", "id": "s", "roles": ["seer", "guard"], "durations": {"vote": 30},
                 "rules": {"guard_self": "yes"}, "preset": None},
    "start": {"type": "start", "id": "go"},
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


def test_the_settings_schema_is_the_one_the_rules_declare():
    """Regenerate with `python -m tests.gateway.test_schemas` after changing a role's settings."""
    assert json.loads((SCHEMAS / "settings.json").read_text()) == settings_schema()


if __name__ == "__main__":
    (SCHEMAS / "settings.json").write_text(json.dumps(settings_schema(), indent=2) + "\n")
