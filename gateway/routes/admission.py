"""What a client address may do before a route acts: unknown room codes tried, rooms opened,
lobbies and seats held (docs/architecture.md, "Abuse limits"). Refusals are 429s."""
from __future__ import annotations

from fastapi import HTTPException, Request

from gateway.limits import client_address
from gateway.state import GatewayState


def refusal(status: int, code: str, message: str, retry_after: int | None = None) -> HTTPException:
    headers = None if retry_after is None else {"Retry-After": str(retry_after)}
    return HTTPException(status, {"code": code, "message": message}, headers=headers)


def server_full(what: str) -> HTTPException:
    return refusal(503, "server_full", f"no {what} can be opened now, try again later", 60)


def address_of(request: Request) -> str:
    return client_address(request.client and request.client.host)


async def not_guessing(request: Request, gw: GatewayState) -> str:
    """Refuse an address that tried too many unknown room codes (429); returns the address."""
    address = address_of(request)
    limit = gw.config.lookup_failures_per_address
    if limit and await gw.limits.spent("lookups", address) >= limit:
        raise refusal(429, "rate_limited", "too many unknown room codes from this address",
                      gw.limits.retry_after())
    return address


async def not_found(gw: GatewayState, address: str) -> HTTPException:
    if gw.config.lookup_failures_per_address:
        await gw.limits.spend("lookups", address)
    return HTTPException(404, {"code": "room_not_found"})


async def spend(gw: GatewayState, what: str, address: str, limit: int, things: str) -> None:
    """Count one more `what` of `address` in the window; 429 past `limit` (0: no limit)."""
    if limit and await gw.limits.spend(what, address) > limit:
        raise refusal(429, "rate_limited", f"at most {limit} {things} per address in "
                      f"{gw.limits.retry_after() // 60 + 1} minutes", gw.limits.retry_after())


class Holding:
    """What a request of `address` is about to hold (a room it opens, the seat it takes),
    reserved before the request acts (`reserve`: a 429 past the address's caps, lobbies and
    running games alike: held rooms must not fill the server, docs/architecture.md, "Abuse
    limits"), held once it has (`settle`); `release` lets go of what was reserved and not
    held (the request refused or failed)."""

    def __init__(self, gw: GatewayState, address: str) -> None:
        self.gw, self.address = gw, address
        self._reserved: list[tuple[str, str]] = []  # (what, the reservation)

    async def reserve(self, lobby: bool = False, seat: bool = True) -> None:
        """Reserve the seat the request takes, and with `lobby` the room it opens."""
        config = self.gw.config
        caps = []
        if lobby:
            caps.append(("lobbies", config.open_lobbies_per_address,
                         f"at most {config.open_lobbies_per_address} rooms (lobbies and games) "
                         "per address at once: leave one, or wait for a game to end"))
        if seat:
            caps.append(("seats", config.lobby_seats_per_address,
                         f"at most {config.lobby_seats_per_address} seats in lobbies and games "
                         "per address at once: leave one, or wait for a game to end"))
        for what, limit, message in caps:
            if not limit:
                continue
            reservation = await self.gw.limits.reserve(what, self.address, limit)
            if reservation is None:
                await self.release()
                raise refusal(429, "rate_limited", message, 60)
            self._reserved.append((what, reservation))

    async def settle(self, seated: dict, lobby: bool = False) -> None:
        """Hold what the request took (`lobby`: it opened the room), then release the rest."""
        config, room = self.gw.config, seated["room"]
        if lobby and config.open_lobbies_per_address:
            await self.gw.limits.hold("lobbies", self.address, room, room)
        if config.lobby_seats_per_address:
            await self.gw.limits.hold("seats", self.address, room, f"{room}:{seated['seat']}")
        await self.release()

    async def release(self) -> None:
        reserved, self._reserved = self._reserved, []
        for what, reservation in reserved:
            await self.gw.limits.unreserve(what, self.address, reservation)


async def admit_room(gw: GatewayState, address: str) -> None:
    """Count one more new room of `address` (a creation or a play again); 429 past the limit."""
    await spend(gw, "rooms", address, gw.config.rooms_per_address, "new rooms")
