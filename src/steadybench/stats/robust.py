"""The robust spread used across steadybench: 1.4826 × the median absolute deviation.

For a normal sample 1.4826·MAD estimates the standard deviation (1.4826 ≈ 1/Φ⁻¹(3/4)), while a
few wild values (a slow execution, an interrupt, a step in a series) barely move it (Hampel,
JASA 1974; Rousseeuw & Croux, JASA 1993). It is the same statistic as R's ``mad()`` with its
default constant, against which it is tested.
Pure Python for sequences, so that modules a worker process loads need not import numpy;
numpy arrays are handled with numpy.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

#: the factor that makes the MAD a consistent estimate of a normal SD (R's ``mad`` default)
MAD_SCALE = 1.4826


def mad(values: Sequence[float] | Any, centre: float | None = None) -> float:
    """The median absolute deviation of ``values`` from ``centre`` (their median by default)."""
    if hasattr(values, "__array__"):
        import numpy as np

        v = np.asarray(values, dtype=float)
        mid = float(np.median(v)) if centre is None else centre
        return float(np.median(np.abs(v - mid)))
    mid = statistics.median(values) if centre is None else centre
    return statistics.median(abs(x - mid) for x in values)


def robust_sd(values: Sequence[float] | Any, centre: float | None = None) -> float:
    """1.4826 × :func:`mad`: a standard deviation that a few outliers do not move."""
    return MAD_SCALE * mad(values, centre)
