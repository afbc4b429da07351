import os

# Before anything imports ray: keep every Ray process on loopback and skip token auth for the
# private test heads (see tests/ray_head.py).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

# The stack's fixtures (ray_address, redis_url, ww_prefix, stack) for every test: one private Ray
# head for the whole session. Imported into each module instead, pytest gave every module a head
# of its own, all alive until the end (nine heads at once by the last module).
pytest_plugins = ["tests.stack"]
