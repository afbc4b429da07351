"""What the lifespan creates and every request reaches through a dependency (never module state)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

if TYPE_CHECKING:
    from actors import Config, RoomClient
    from gateway.metrics import Metrics
    from gateway.limits import AddressLimits
    from gateway.seats import LocalSeats, PresenceReports
    from gateway.tables import PublicTables


@dataclass
class GatewayState:
    config: Config
    rooms: RoomClient
    seats: LocalSeats
    metrics: Metrics
    limits: AddressLimits
    presence: PresenceReports
    tables: PublicTables


async def gateway_state(conn: HTTPConnection) -> GatewayState:
    # async: a plain function dependency runs on a worker thread (anyio), a thread hop per request
    # and up to 40 new threads for a burst of requests
    return conn.app.state.gateway


# A route's parameter `gw: Gateway` is this process's GatewayState.
Gateway = Annotated[GatewayState, Depends(gateway_state)]
