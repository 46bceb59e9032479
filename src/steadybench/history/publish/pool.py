"""Work spread over processes for ``history publish``: ``fork_map(func, n, workers)`` calls
``func(0) … func(n − 1)`` in ``workers`` forked processes and returns the results in order.

Forked workers inherit the parent's memory (the store's series, the dashboard being written),
so nothing but an index goes to them and only the results come back. Where the platform
cannot fork (Windows), or for a few items, the calls run in this process, one after another:
the same results, more slowly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: fewer items than this run in this process (a pool's start-up is not worth it)
MIN_ITEMS = 32

#: the function of the running map, inherited by the forked workers
_FUNC: Callable[[int], Any] | None = None


def _call(index: int) -> Any:
    assert _FUNC is not None
    return _FUNC(index)


def processes(n: int, workers: int) -> int:
    """The processes :func:`fork_map` uses for ``n`` items and ``workers`` asked for."""
    import multiprocessing

    if workers <= 1 or n < MIN_ITEMS or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return workers


def fork_map(func: Callable[[int], Any], n: int, workers: int) -> list[Any]:
    """``[func(i) for i in range(n)]``, in ``workers`` forked processes when worth it."""
    global _FUNC
    import multiprocessing

    if processes(n, workers) == 1:
        return [func(i) for i in range(n)]
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, n // (workers * 8))
    _FUNC = func
    try:
        with ProcessPoolExecutor(max_workers=workers,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_call, range(n), chunksize=chunk))
    finally:
        _FUNC = None
