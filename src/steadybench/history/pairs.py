"""The slopes of pairs of records inside segments, for the Theil–Sen slope (Sen, JASA 1968) of
:func:`steadybench.history.regressions.theil_sen`.

A series of n records has n(n − 1)/2 pairs: 2 million at 2,000 records. Above a limit the slope
is the median of a seeded random sample of the pairs. Drawing the sample's *positions* first
(``Generator.choice`` of that many positions, without replacement) and computing the slopes of
those pairs only gives the same values as computing every slope and drawing from them, at a
tenth of the cost and memory: the position of a pair in the row-major order of
``numpy.triu_indices`` is turned back into its two records arithmetically.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any


@functools.lru_cache(maxsize=8)
def _pairs(sizes: tuple[tuple[int, int], ...], limit: int, seed: int) -> tuple[Any, Any]:
    """The records (i, j) of the pairs whose slopes are taken, for segments (start, size):
    every pair in ``numpy.triu_indices`` order, or the ``limit`` drawn with ``seed`` (many
    series of a dashboard have the same layout: worked out once)."""
    import numpy as np

    counts = [m * (m - 1) // 2 for _, m in sizes]
    total = sum(counts)
    if total <= limit:
        found = [np.triu_indices(m, k=1) for _, m in sizes]
        i = np.concatenate([lo + a for (lo, _), (a, _) in zip(sizes, found)])
        j = np.concatenate([lo + b for (lo, _), (_, b) in zip(sizes, found)])
    else:
        idx = np.random.default_rng(seed).choice(total, limit, replace=False)
        i = np.empty(idx.size, dtype=np.int64)
        j = np.empty(idx.size, dtype=np.int64)
        start = 0
        for (lo, m), count in zip(sizes, counts):
            inside = (idx >= start) & (idx < start + count)
            local = idx[inside] - start
            rows = np.arange(m - 1, dtype=np.int64)
            # pairs before row r in triu order: r(m − 1) − r(r − 1)/2
            first = rows * (m - 1) - rows * (rows - 1) // 2
            r = np.searchsorted(first, local, side="right") - 1
            i[inside] = lo + r
            j[inside] = lo + local - first[r] + r + 1
            start += count
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def pair_slopes(arr: Any, breaks: Sequence[int], limit: int, seed: int) -> Any:
    """The slopes (arr[j] − arr[i]) / (j − i) of every pair i < j inside the same segment
    (``breaks`` cut the series), in the order of the segments and of ``numpy.triu_indices``;
    when there are more than ``limit``, the slopes of ``limit`` pairs drawn at random without
    replacement with ``seed`` (the same values as drawing from the full array with that seed,
    in the same order). An empty array when there is no pair."""
    import numpy as np

    edges = [0, *breaks, arr.size]
    sizes = tuple((lo, hi - lo) for lo, hi in zip(edges[:-1], edges[1:]) if hi - lo >= 2)
    if not sizes:
        return np.zeros(0)
    i, j = _pairs(sizes, limit, seed)
    return (arr[j] - arr[i]) / (j - i)
