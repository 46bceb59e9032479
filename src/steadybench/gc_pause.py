"""The cyclic garbage collector paused while a command builds many long-lived objects
(issue 27 item 13)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block, back as it was after.

    Reading 10^6 benchmarks makes millions of objects that live to the end; each full collection
    walks all of them, which was a third of ``compare``'s time at 10^5 benchmarks. Nothing read
    here makes reference cycles, so reference counting frees what is dropped."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
