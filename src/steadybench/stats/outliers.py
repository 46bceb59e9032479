"""Outlier fences (Tukey 1977), the method Rancid §IV-B recommends over z-scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def tukey_fences(
    values: Sequence[float] | np.ndarray, k: float = 1.5
) -> tuple[float, float] | None:
    """(Q1 − k·IQR, Q3 + k·IQR); None for fewer than 4 values. k=1.5 "outside", 3 "far out"."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    if arr.size < 4:
        return None
    q1, q3 = np.percentile(arr, [25, 75])
    iqr = q3 - q1
    return float(q1 - k * iqr), float(q3 + k * iqr)
