"""The gateway's routes, one FastAPI router per concern; `gateway.app.create_app` includes them
all. Each reaches the process's state through the `Gateway` dependency (gateway/state.py).

- `rooms`: create, join, play again, report, a room's facts and a finished game's review.
- `tables`: quick play and the list of public tables.
- `admin`: the operators' reports (only with WW_ADMIN_SECRET).
- `health`: liveness, readiness and the Prometheus metrics.
- `pages`: the rules as data, the browser client's static files, the WebSocket.
- `admission`: what an address may do (rate limits, holdings, unknown codes), shared by them.
"""
