"""How a load run stops on a signal: the first SIGTERM or Ctrl-C tears the stack down, and one
more while it tears down does not cut the teardown short (that left network namespaces, cgroups,
Redis and Ray processes behind)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A run whose teardown gets the same signal again, from the run itself, so that it lands inside
# the teardown and nowhere else.
RUN = """
import os, signal, sys
from loadtest.stack import tear_down_on_signals
tear_down_on_signals()
try:
    print("up", flush=True)
    sys.stdin.readline()  # the first signal interrupts this
finally:
    print("tearing down", flush=True)
    os.kill(os.getpid(), signal.{name})
    print("torn down", flush=True)
"""


def interrupted(script: str, signum: int, *args: str) -> tuple[str, str]:
    """Run `script` until it prints "up", send it `signum`: what it printed then (stdout,
    stderr)."""
    run = subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, text=True,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert run.stdout.readline() == "up\n"
        run.send_signal(signum)
        return run.communicate(timeout=60)
    finally:
        run.kill()


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_during_the_teardown_does_not_cut_it_short(name):
    out, err = interrupted(RUN.format(name=name), getattr(signal, name))
    assert out.splitlines() == ["tearing down", "torn down"], err
    assert "KeyboardInterrupt" in err  # the first signal stopped the run, as Ctrl-C does
    assert "ignored: tearing down" in err


# A run that is a Ray driver: ray.init installs Ray's own SIGTERM handler, which ended the process
# at once (a scale-out run left its namespaces, cgroups, Redis Cluster and Ray nodes behind).
DRIVER = """
import sys
from loadtest.stack import ray_driver, tear_down_on_signals
tear_down_on_signals()
ray_driver(address=sys.argv[1], log_to_driver=False)
try:
    print("up", flush=True)
    sys.stdin.readline()
finally:
    print("torn down", flush=True)
"""


def test_a_ray_driver_still_tears_down_on_sigterm(ray_address):
    out, err = interrupted(DRIVER, signal.SIGTERM, ray_address)
    assert out.splitlines() == ["torn down"], err
    assert "KeyboardInterrupt" in err
