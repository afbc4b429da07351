"""A gateway's visitors for the e2e tests of its limits: each HTTP client comes from an address of
its own (the limits count per address), and a table is a new room's seats."""
import itertools
from collections.abc import Iterator

import httpx

from devstack.stack import HTTP_TIMEOUT


def addresses(network: str) -> Iterator[str]:
    """Addresses of a documentation network (`192.0.2`, `203.0.113`), one per visitor."""
    return (f"{network}.{i}" for i in itertools.count(1))


def client(gateway, sources: Iterator[str]) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=gateway.url, timeout=HTTP_TIMEOUT,
                             headers={"X-Forwarded-For": next(sources)})


async def table(gateway, sources: Iterator[str], guests: int = 0) -> list[dict]:
    """A new room: its host's seat, then `guests` more."""
    async with client(gateway, sources) as http:
        host = (await http.post("/api/rooms", json={"name": "Layla"})).json()
        return [host] + [(await http.post(f"/api/rooms/{host['room']}/join",
                                          json={"name": f"Guest{i}"})).json()
                         for i in range(guests)]
