"""actors/heap.py: what is alive when the process has started leaves the collector's walks, and
what it makes afterwards is still collected."""
import gc
import weakref

import pytest

from actors.heap import freeze_startup_heap


@pytest.fixture
def unfrozen():
    yield
    gc.unfreeze()


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_the_startup_heap_is_frozen_and_later_cycles_are_still_collected(unfrozen):
    startup = [Node() for _ in range(1000)]
    frozen = freeze_startup_heap()
    assert frozen >= len(startup) and gc.get_freeze_count() == frozen
    assert not any(gc.is_tracked(n) and n in gc.get_objects(generation=2) for n in startup[:3])
    later = Node()
    gone = weakref.ref(later)
    del later
    gc.collect()
    assert gone() is None
