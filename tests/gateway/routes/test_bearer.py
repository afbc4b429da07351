import pytest
from fastapi import HTTPException
from starlette.requests import Request

from gateway.routes.bearer import require_bearer


def request(authorization: str | None) -> Request:
    headers = [] if authorization is None else [(b"authorization", authorization.encode())]
    return Request({"type": "http", "method": "GET", "path": "/", "headers": headers})


@pytest.mark.parametrize("given", ["Bearer s3cret", "bearer s3cret", "BEARER s3cret",
                                   "Bearer  s3cret"])
def test_the_scheme_is_matched_in_any_case(given):
    require_bearer(request(given), "s3cret")  # RFC 7235: schemes are case-insensitive


@pytest.mark.parametrize("given", [None, "", "s3cret", "Bearer", "Bearer ", "Bearers3cret",
                                   "Basic s3cret", "Bearer s3cre", "Bearer s3cret2",
                                   "bearer S3CRET", "Bearer s3cret "])
def test_anything_else_is_refused(given):
    with pytest.raises(HTTPException) as refused:
        require_bearer(request(given), "s3cret")
    assert refused.value.status_code == 401
    assert refused.value.headers == {"WWW-Authenticate": "Bearer"}
