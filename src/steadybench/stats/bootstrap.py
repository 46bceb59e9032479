"""Bootstrap methods for comparisons with few runs (``003`` §2.1 defers to Davison & Hinkley 1997).

* :func:`bca_ratio_ci` — BCa interval (Efron 1987; Davison & Hinkley §5.3) of
  stat(BASE)/stat(NEW), the speedup, through ``scipy.stats.bootstrap(method="BCa")``.
* :func:`bootstrap_test` — a two-sample bootstrap hypothesis test of equal means or medians
  (Efron & Tibshirani 1993, §16.4, Algorithm 16.2: both samples translated to a common location
  so the null holds, the statistic recomputed on resamples), giving one-sided p-values.

All resampling uses a seeded generator so the same input gives the same output.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

_STATS = {"median": np.median, "mean": np.mean}


def _stat(name: str) -> Any:
    try:
        return _STATS[name]
    except KeyError:
        raise ValueError(f"unknown statistic {name!r}") from None


def bca_ratio_ci(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
                 confidence: float = 0.95, statistic: str = "median", n_resamples: int = 2000,
                 seed: int = 0) -> dict[str, Any] | None:
    """Two-sided BCa interval of stat(BASE)/stat(NEW); None when undefined (with fewer than 2
    values a side, constant samples, or a zero statistic of NEW in a resample)."""
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if a.size < 2 or b.size < 2:
        return None
    fn = _stat(statistic)
    if np.all(a == a[0]) and np.all(b == b[0]):
        return None

    def ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(x, axis=axis) / fn(y, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = sps.bootstrap((a, b), ratio, vectorized=True, paired=False,
                                confidence_level=confidence, n_resamples=n_resamples,
                                method="BCa", rng=np.random.default_rng(seed))
        except (ValueError, FloatingPointError):
            return None
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    return {"low": low, "high": high, "confidence": confidence, "method": "BCa bootstrap",
            "resamples": n_resamples}


def bootstrap_test(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
                   statistic: str = "mean", n_resamples: int = 5000,
                   seed: int = 0) -> dict[str, Any]:
    """Bootstrap test of equal location (Efron & Tibshirani, Algorithm 16.2).

    For means the statistic is Welch's t; for medians the difference of medians. Both samples
    are translated to the pooled location, resampled with replacement ``n_resamples`` times, and
    the one-sided p-values are (1 + #{T* ≥ T}) / (B + 1) (NEW faster) and
    (1 + #{T* ≤ T}) / (B + 1) (NEW slower).
    """
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    rng = np.random.default_rng(seed)
    fn = _stat(statistic)

    def t_of(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        d = fn(x, axis=-1) - fn(y, axis=-1)
        if statistic != "mean":
            return d
        se = np.sqrt(np.var(x, axis=-1, ddof=1) / x.shape[-1] + np.var(y, axis=-1, ddof=1)
                     / y.shape[-1])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(se > 0, d / np.where(se > 0, se, 1.0), np.sign(d) * np.inf)

    observed = float(t_of(a, b))
    pooled = fn(np.r_[a, b])
    a0, b0 = a - fn(a) + pooled, b - fn(b) + pooled
    xa = a0[rng.integers(0, a.size, size=(n_resamples, a.size))]
    xb = b0[rng.integers(0, b.size, size=(n_resamples, b.size))]
    boot = t_of(xa, xb)
    p_faster = (1 + int(np.sum(boot >= observed))) / (n_resamples + 1)
    p_slower = (1 + int(np.sum(boot <= observed))) / (n_resamples + 1)
    return {"test": f"bootstrap ({statistic}, Efron–Tibshirani 16.2)", "statistic": observed,
            "p_faster": p_faster, "p_slower": p_slower, "resamples": n_resamples}
