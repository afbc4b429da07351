import pytest

from tests.deploy.docker import engine


@pytest.fixture(scope="session")
def docker_engine():
    """One Docker engine for the whole deployment stage, started by its first test: one dockerd
    start, not one per module (each start sets the FORWARD policy to DROP until `engine` puts it
    back, a moment that cuts the bridges of any network-namespace test running then)."""
    with engine():
        yield
