import os
import secrets

# Before anything imports ray: keep every Ray process on loopback and skip token auth for the
# private test heads (see devstack/ray_head.py).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import pytest  # noqa: E402

from devstack.ray_head import ray_head  # noqa: E402
from devstack.stack import Stack  # noqa: E402

# The stack's fixtures for every test, here in the root conftest: one private Ray head for the
# whole session. Imported into each module instead, pytest gave every module a head of its own,
# all alive until the end (nine heads at once by the last module).
#
#     ray_address   session   "127.0.0.1:PORT" of a private Ray head (devstack/ray_head.py)
#     redis_url     session   $REDIS_URL or redis://127.0.0.1:6379/0
#     ww_prefix     function  a fresh random WW_PREFIX ("t" + 10 hex digits)
#     stack         function  Stack(ray_address, redis_url, prefix) (devstack/stack.py);
#                             `stack.start_gateway()` starts a gateway on that prefix; all
#                             gateways are killed at teardown, then the prefix's actors


@pytest.fixture(scope="session")
def ray_address():
    with ray_head() as address:
        yield address


@pytest.fixture(scope="session")
def redis_url() -> str:
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def ww_prefix() -> str:
    return "t" + secrets.token_hex(5)


@pytest.fixture
def stack(ray_address, redis_url, ww_prefix):
    s = Stack(ray_address=ray_address, redis_url=redis_url, prefix=ww_prefix)
    yield s
    s.close()
