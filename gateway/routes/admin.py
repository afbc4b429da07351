"""The operators' API (docs/protocol.md, "Admin"): absent (404) without WW_ADMIN_SECRET."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request

from gateway.routes.bearer import require_bearer
from gateway.state import Gateway

router = APIRouter(include_in_schema=False)


@router.get("/api/admin/reports")
async def admin_reports(request: Request, gw: Gateway,
                        limit: Annotated[int, Query(ge=1, le=100)] = 20,
                        cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,15}-[0-9]{1,6}$")]
                        = None):
    """Operators only: a page of the newest reports with the reported lines; `next` is the
    cursor of the page after it."""
    secret = gw.config.admin_secret
    if not secret:
        raise HTTPException(404, {"code": "room_not_found"})
    require_bearer(request, secret)
    return await gw.rooms.reports(limit, cursor)
