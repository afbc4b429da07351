"""Stopping the processes a test or a load script started."""
from __future__ import annotations

import subprocess


def stop(process: subprocess.Popen, grace: float = 10) -> None:
    """SIGTERM, so it can shut down cleanly (flush a log, leave a cluster); SIGKILL if it has not
    exited within `grace` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
