"""Peak traced memory of a call, for the tests that bound what large inputs hold (issue 27
item 13)."""

import tracemalloc
from collections.abc import Callable
from typing import Any


def peak_traced(fn: Callable[[], Any]) -> int:
    """The peak of the memory Python allocations traced while ``fn()`` ran, in bytes."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def held_traced(fn: Callable[[], Any]) -> int:
    """The memory still allocated by ``fn()`` once it returned, its result kept, in bytes:
    what a step holds to the end rather than its peak."""
    tracemalloc.start()
    try:
        kept = fn()
        held = tracemalloc.get_traced_memory()[0]
        del kept
        return held
    finally:
        tracemalloc.stop()
