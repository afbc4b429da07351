"""The gateway's app and its routes, without starting it."""
import inspect

import orjson

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIWebSocketRoute

from gateway.app import ROUTERS, LimitBursts
from gateway.limits import Bursts


def calls(dependant: Dependant):
    yield dependant.call
    for dependency in dependant.dependencies:
        yield from calls(dependency)


def test_no_request_runs_on_a_worker_thread():
    """FastAPI runs a plain function (an endpoint or a dependency) on anyio's worker threads: a
    thread hop per request, and 120 requests at once from one address started tens of threads
    while the honest tables' commands waited (issue 34's presses probe)."""
    routes = [r for router in ROUTERS for r in router.routes
              if isinstance(r, APIRoute | APIWebSocketRoute)]
    assert len(routes) > 10
    sync = sorted({f"{route.path}: {call.__qualname__}" for route in routes
                   for call in calls(route.dependant)
                   if call is not None and not inspect.iscoroutinefunction(call)})
    assert sync == []


async def test_a_request_past_its_address_s_burst_is_refused_before_the_app():
    reached = []

    async def app(scope, receive, send):
        reached.append((scope["method"], scope["path"]))

    guarded = LimitBursts(app, Bursts({"quickplay": (2, 30.0), "reports": (1, 30.0)}))
    answers = []

    async def send(message):
        answers.append(message)

    async def request(method, path, client="198.51.100.7"):
        answers.clear()
        await guarded({"type": "http", "method": method, "path": path,
                       "client": (client, 40000), "headers": []}, None, send)
        return answers[0]["status"] if answers else None

    assert [await request("POST", "/api/quickplay") for _ in range(2)] == [None, None]
    assert await request("POST", "/api/quickplay") == 429
    headers = dict(answers[0]["headers"])
    assert headers[b"retry-after"] == b"30"
    assert orjson.loads(answers[1]["body"])["detail"]["code"] == "rate_limited"
    assert await request("POST", "/api/quickplay", client="198.51.100.8") is None
    assert [await request("POST", "/api/rooms/ABCDEF/reports") for _ in range(2)] == [None, 429]
    assert await request("GET", "/api/tables") is None  # no burst for these
    assert await request("POST", "/api/rooms") is None
    assert reached == [("POST", "/api/quickplay")] * 3 + [
        ("POST", "/api/rooms/ABCDEF/reports"), ("GET", "/api/tables"), ("POST", "/api/rooms")]
