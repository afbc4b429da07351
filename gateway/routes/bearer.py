"""The bearer check of the operators' routes (admin, metrics)."""
from __future__ import annotations

import hmac

from fastapi import HTTPException, Request


def require_bearer(request: Request, secret: str) -> None:
    """401 unless `authorization` is `Bearer SECRET`: the scheme in any case (RFC 7235: schemes
    are case-insensitive, and clients send `bearer`), the secret compared in constant time."""
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if not (hmac.compare_digest(given.lstrip(" ").encode(), secret.encode())
            and scheme.lower() == "bearer"):
        raise HTTPException(401, {"code": "not_authenticated"},
                            headers={"WWW-Authenticate": "Bearer"})
