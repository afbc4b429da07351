import orjson
from fastapi import Response

from gateway.routes.pages import DECLARATION, DECLARATION_JSON, declared_rules


async def test_the_rules_are_encoded_once_and_the_same_bytes_answered():
    first, second = await declared_rules(), await declared_rules()
    assert isinstance(first, Response) and first.media_type == "application/json"
    assert first.body is second.body is DECLARATION_JSON  # no encoding per request
    assert orjson.loads(first.body) == orjson.loads(orjson.dumps(DECLARATION))
