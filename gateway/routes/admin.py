"""The operators' API (docs/protocol.md, "Admin"): absent (404) without WW_ADMIN_SECRET."""
from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request

from gateway.state import Gateway

router = APIRouter(include_in_schema=False)


@router.get("/api/admin/reports")
async def admin_reports(request: Request, gw: Gateway,
                        limit: Annotated[int, Query(ge=1, le=1000)] = 100):
    """Operators only: the newest reports with the reported lines."""
    secret = gw.config.admin_secret
    if not secret:
        raise HTTPException(404, {"code": "room_not_found"})
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {secret}".encode()):
        raise HTTPException(401, {"code": "not_authenticated"},
                            headers={"WWW-Authenticate": "Bearer"})
    return {"reports": await gw.rooms.reports(limit)}
