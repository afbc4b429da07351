"""Client frame parsing: every malformed frame is a `bad_frame`, valid ones keep only known
fields."""
import orjson
import pytest

from gateway.ws import MAX_FRAME_BYTES, BadFrame, parse_frame


@pytest.mark.parametrize("raw, why", [
    (None, "empty"),
    ("{", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('"act"', "not a JSON object"),
    ('{"id": 1}', "unknown frame type None"),
    ('{"type": "dance"}', "unknown frame type 'dance'"),
    ('{"type": 7}', "unknown frame type 7"),
    ('{"type": "hello", "token": "x"}', "unknown frame type 'hello'"),
    ('{"type": "act", "targets": [1]}', "act needs an action name"),
    ('{"type": "act", "action": "vote", "targets": 3}', "targets must be a list"),
    ('{"type": "act", "action": "vote", "targets": ["3"]}', "targets must be a list"),
    ('{"type": "act", "action": "vote", "targets": [true]}', "targets must be a list"),
    ('{"type": "chat", "text": ""}', "chat needs a non-empty text"),
    ('{"type": "chat", "text": 5}', "chat needs a non-empty text"),
    ('{"type": "chat", "text": "hi", "channel": 5}', "channel must be"),
    ('{"type": "ping", "id": [1]}', "id must be"),
    ('{"type": "ping", "id": true}', "id must be"),
])
def test_malformed_frames_are_bad_frames(raw, why):
    with pytest.raises(BadFrame, match=why):
        parse_frame(raw)


def test_oversized_frame_is_refused_by_its_utf8_size():
    text = "é" * (MAX_FRAME_BYTES // 2)  # fewer characters than the limit, more bytes
    with pytest.raises(BadFrame, match="bytes"):
        parse_frame(orjson.dumps({"type": "chat", "text": text}).decode())


def test_error_keeps_the_frame_id_when_it_was_readable():
    with pytest.raises(BadFrame) as caught:
        parse_frame('{"type": "act", "id": "a1", "action": "vote", "targets": "x"}')
    assert caught.value.frame_id == "a1"


def test_valid_frames_keep_only_known_fields():
    assert parse_frame('{"type": "act", "id": 3, "action": "vote", "targets": [2], "x": 1}') == {
        "type": "act", "id": 3, "action": "vote", "targets": [2]}
    assert parse_frame('{"type": "act", "action": "vote.request"}') == {
        "type": "act", "id": None, "action": "vote.request", "targets": []}
    assert parse_frame(b'{"type": "chat", "id": "c", "text": "hi"}') == {
        "type": "chat", "id": "c", "text": "hi"}
    assert parse_frame('{"type": "chat", "text": "hi", "channel": "day"}') == {
        "type": "chat", "id": None, "text": "hi", "channel": "day"}
    assert parse_frame('{"type": "settings", "id": 1, "roles": ["seer"], "x": 1}') == {
        "type": "settings", "id": 1, "roles": ["seer"]}
    # what a setting may be is the room's (the rules') to check, not the gateway's
    assert parse_frame('{"type": "settings", "rules": {"guard_self": 5}, "preset": "x"}') == {
        "type": "settings", "id": None, "rules": {"guard_self": 5}, "preset": "x"}
    assert parse_frame('{"type": "start"}') == {"type": "start", "id": None}


def test_the_settings_model_takes_every_setting_the_rules_declare():
    from gateway.frames import Settings
    from rules import SETTINGS_FIELDS

    assert set(Settings.model_fields) - {"type", "id"} == set(SETTINGS_FIELDS)


def test_the_event_schema_and_the_rules_declaration_are_made_from_the_declared_events():
    from actors.room_data import EVENTS, ROOM_EVENTS
    from gateway.routes.pages import DECLARATION
    from gateway.frames import EVENT_FIELDS
    import rules

    assert set(EVENTS) == set(rules.EVENTS) | set(ROOM_EVENTS) == set(EVENT_FIELDS)
    assert DECLARATION["events"]["seer_result"] == {
        "fields": ["seat", "role"], "optional": [], "audience": "the Seer",
        "doc": rules.EVENTS["seer_result"].doc}
    assert all(EVENT_FIELDS[kind] == k.fields for kind, k in EVENTS.items())
