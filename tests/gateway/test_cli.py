"""`werewolf serve` flags become the environment that every gateway worker reads."""
import argparse
import shutil

import pytest

from gateway.cli import _answers, _env_from_flags, _private_redis


def _args(**given):
    fields = dict(redis_url=None, ray_address=None, games_per_actor=None, warm_actors=None,
                  prefix=None, presence_lease=None)
    return argparse.Namespace(**{**fields, **given})


def test_flags_and_phase_durations_become_env_vars():
    env = _env_from_flags(_args(redis_url="redis://h:1/0", games_per_actor=50, presence_lease=3),
                          ["--duration-discussion", "120", "--duration-vote=30"],
                          argparse.ArgumentParser())
    assert env == {"REDIS_URL": "redis://h:1/0", "WW_GAMES_PER_ACTOR": "50", "WW_PRESENCE_LEASE": "3",
                   "WW_DURATION_DISCUSSION": "120", "WW_DURATION_VOTE": "30"}


@pytest.mark.parametrize("rest", [["--colour", "red"], ["--duration-vote", "soon"]])
def test_unknown_flags_and_bad_durations_are_refused(rest):
    with pytest.raises(SystemExit):
        _env_from_flags(_args(), rest, argparse.ArgumentParser())


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_private_redis_answers_while_in_use_and_is_gone_after():
    with _private_redis() as url:
        host, port = url.removeprefix("redis://").removesuffix("/0").split(":")
        assert _answers(host, int(port))
    assert not _answers(host, int(port))
