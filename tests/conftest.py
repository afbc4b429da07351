import os

# Before anything imports ray: keep every Ray process on loopback and skip token auth for the
# private test heads (see tests/ray_head.py).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
