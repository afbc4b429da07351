"""Liveness, readiness (Redis and Ray answer) and the Prometheus metrics."""
from __future__ import annotations

import asyncio
import logging

import ray
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from gateway.routes.bearer import require_bearer
from gateway.state import Gateway

log = logging.getLogger(__name__)

READY_TIMEOUT = 2.0

router = APIRouter()


@router.get("/healthz")
async def healthz():
    return {"ok": True}


@router.get("/readyz")
async def readyz(gw: Gateway):
    checks = {"redis": False, "ray": False}
    try:
        checks["redis"] = bool(await asyncio.wait_for(gw.rooms.redis.ping(), READY_TIMEOUT))
    except Exception:
        log.warning("readyz: Redis unreachable", exc_info=True)
    try:
        # ray.nodes() asks the GCS, so it fails when the cluster is gone.
        nodes = await asyncio.wait_for(asyncio.to_thread(ray.nodes), READY_TIMEOUT)
        checks["ray"] = any(node.get("Alive") for node in nodes)
    except Exception:
        log.warning("readyz: Ray unreachable", exc_info=True)
    ok = all(checks.values())
    return JSONResponse({"ok": ok, **checks}, status_code=200 if ok else 503)


@router.get("/metrics")
async def prometheus(request: Request, gw: Gateway):
    """With WW_METRICS_TOKEN set, Prometheus scrapes with `authorization: credentials:` (the
    token as a bearer): the metrics tell rooms and traffic to whoever reads them."""
    token = gw.config.metrics_token
    if token:
        require_bearer(request, token)
    return Response(gw.metrics.text(), media_type=CONTENT_TYPE_LATEST)
