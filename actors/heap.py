"""A long-lived server process's heap, kept out of the garbage collector's full collections.

Python's full (generation 2) collection walks every tracked object, and most of a gateway's or a
game host's are its startup's: the modules of FastAPI, pydantic, Ray and the rules, the app, the
clients. Under 30 honest tables it paused a gateway's event loop 16-139 ms at a time, every socket
of the process waiting (loadtest/README.md, "The honest tables measured from a process of their
own", point 2). Frozen once the process has started, they are never walked again: a full
collection walks what the process made since, its rooms and sockets.
"""
from __future__ import annotations

import gc


def freeze_startup_heap() -> int:
    """Collect once, then move every object alive now to the collector's permanent generation
    (never collected, never walked). Call it when the process has started, before it serves.
    Returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
