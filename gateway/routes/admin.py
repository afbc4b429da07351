"""The operators' API (docs/protocol.md, "Admin"): absent (404) without WW_ADMIN_SECRET."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request

from gateway.routes.bearer import require_bearer
from gateway.state import Gateway

router = APIRouter(include_in_schema=False)


@router.get("/api/admin/reports")
async def admin_reports(request: Request, gw: Gateway,
                        limit: Annotated[int, Query(ge=1, le=1000)] = 100):
    """Operators only: the newest reports with the reported lines."""
    secret = gw.config.admin_secret
    if not secret:
        raise HTTPException(404, {"code": "room_not_found"})
    require_bearer(request, secret)
    return {"reports": await gw.rooms.reports(limit)}
