import pytest

from tests.deploy.docker import engine


@pytest.fixture(scope="session")
def docker_engine():
    """One Docker engine for the whole deployment stage, started by its first test. dockerd's
    start sets the FORWARD policy to DROP until `engine` puts it back, a moment that would cut the
    bridges of network-namespace tests running then: .ci/run runs this stage beside the suite,
    which is still linting in this stage's first seconds, so one start, then, is the only one."""
    with engine():
        yield
