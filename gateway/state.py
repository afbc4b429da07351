"""What the lifespan creates and every request reaches through a dependency (never module state)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from actors.client import RoomClient
    from actors.config import Config
    from gateway.hub import Hub
    from gateway.metrics import Metrics


@dataclass
class GatewayState:
    config: Config
    rooms: RoomClient
    redis: Redis
    hub: Hub
    metrics: Metrics


def gateway_state(conn: HTTPConnection) -> GatewayState:
    return conn.app.state.gateway
