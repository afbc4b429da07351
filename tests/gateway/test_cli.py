"""`werewolf serve` flags become the environment that every gateway worker reads."""
import argparse
import shutil

import pytest

from devstack.redis_servers import redis_server
from gateway.serve.config import env_from_flags
from gateway.serve.processes import answers
from gateway.serve.redis_server import private_redis, warn_if_volatile

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


def _args(**given):
    fields = dict(redis_url=None, ray_address=None, games_per_actor=None, warm_actors=None,
                  prefix=None, presence_lease=None, redis_wait=None)
    return argparse.Namespace(**{**fields, **given})


def test_flags_and_phase_durations_become_env_vars():
    env = env_from_flags(_args(redis_url="redis://h:1/0", games_per_actor=50, presence_lease=3,
                                redis_wait=1),
                          ["--duration-discussion", "120", "--duration-vote=30"],
                          argparse.ArgumentParser())
    assert env == {"REDIS_URL": "redis://h:1/0", "WW_GAMES_PER_ACTOR": "50",
                   "WW_PRESENCE_LEASE": "3",
                   "WW_REDIS_WAIT": "1",
                   "WW_DURATION_DISCUSSION": "120", "WW_DURATION_VOTE": "30"}


@pytest.mark.parametrize("rest", [["--colour", "red"], ["--duration-vote", "soon"]])
def test_unknown_flags_and_bad_durations_are_refused(rest):
    with pytest.raises(SystemExit):
        env_from_flags(_args(), rest, argparse.ArgumentParser())


@needs_redis
def test_private_redis_answers_while_in_use_and_is_gone_after(tmp_path, capsys):
    with private_redis(tmp_path) as url:
        host, port = url.removeprefix("redis://").removesuffix("/0").split(":")
        assert answers(host, int(port))
        warn_if_volatile(url)  # it keeps an append-only file: nothing to warn about
        assert "WARNING" not in capsys.readouterr().err
        assert (tmp_path / "appendonlydir").is_dir()
        with pytest.raises(SystemExit, match="Another `werewolf serve`"), private_redis(tmp_path):
            pass  # a second one on the same directory would corrupt the file
    assert not answers(host, int(port))


@needs_redis
def test_serve_warns_about_a_redis_that_keeps_nothing_on_disk(capsys):
    with redis_server(appendonly=False) as volatile:
        warn_if_volatile(volatile.url)
    assert "keeps nothing on disk" in capsys.readouterr().err
