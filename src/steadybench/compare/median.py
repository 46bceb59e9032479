"""The median of a few values without numpy's per-call overhead.

``numpy.median`` costs about 40 µs a call whatever the size (argument checks, a partition, a
mean of the middle pair); a comparison of 10^6 benchmarks of three samples called it four
times per benchmark (issue 27 item 13). Up to :data:`SMALL` values, this module sorts a Python
list and takes the middle value, or ``(a + b) / 2`` of the middle pair: the same float numpy
gives (its mean of two values is ``(a + b) / 2``), NaN included (numpy returns NaN when any
value is NaN). Larger inputs go to numpy.

Kept because it is measured faster where compare uses it: ``benchmarks/small_median.py`` gave
numpy / this module's time per call of 45.6× (array of 3), 12.9× (list of 3), 72.1× (array of
10), 1.7× (list of 10), 2.9× (array of 32) and 4.2× (list of 32), on a 2-core machine with
tests running beside it (2026-11-26; noisy, every ratio above 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: the largest size sorted in Python
SMALL = 32


def median(values: np.ndarray | Sequence[float]) -> float:
    """The median of ``values`` (non-empty), as ``float(numpy.median(values))``."""
    n = len(values)
    if n > SMALL:
        return float(np.median(values))
    items = values.tolist() if isinstance(values, np.ndarray) else [float(v) for v in values]
    if any(math.isnan(v) for v in items):
        return math.nan
    items.sort()
    half = n // 2
    if n % 2:
        return float(items[half])
    return (items[half - 1] + items[half]) / 2
