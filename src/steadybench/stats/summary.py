"""Descriptive statistics and confidence intervals of one sample.

Undefined statistics are ``None``, never a made-up number: the mean of no values, the standard
deviation of one value, the coefficient of variation of a zero mean, a confidence interval that
needs more samples than there are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigurationError
from .streaming import StreamingStats


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` if it is a level strictly between 0 and 1, else raise."""
    if not (isinstance(confidence, int | float) and 0.0 < float(confidence) < 1.0):
        raise ConfigurationError(
            f"confidence must be between 0 and 1 (exclusive), got {confidence}"
        )
    return float(confidence)


@dataclass(frozen=True)
class Interval:
    """A confidence interval: ``low``, ``high`` and the ``confidence`` level it holds at."""

    low: float
    high: float
    confidence: float
    method: str

    def to_dict(self) -> dict[str, float | str]:
        return {
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "method": self.method,
        }

    def relative_half_width(self, centre: float) -> float | None:
        if centre == 0:
            return None
        return (self.high - self.low) / 2.0 / abs(centre)


def as_array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[~np.isnan(arr)]


def ci_mean(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> Interval | None:
    """Two-sided Student-t interval of the mean: x̄ ± t(1−α/2, n−1)·s/√n. None for n < 2."""
    check_confidence(confidence)
    arr = as_array(values)
    if arr.size < 2:
        return None
    return ci_mean_from_moments(
        float(arr.mean()), float(arr.std(ddof=1)), int(arr.size), confidence
    )


def ci_mean_from_moments(mean: float, stdev: float, n: int, confidence: float) -> Interval | None:
    """The Student-t interval from a mean, a sample standard deviation and a count."""
    if n < 2:
        return None
    from .student import t_quantile

    half = t_quantile(0.5 + confidence / 2.0, n - 1) * stdev / math.sqrt(n)
    return Interval(mean - half, mean + half, confidence, "student-t")


#: samples up to which :func:`median_rank_bounds` sums the binomial exactly in integers (no
#: scipy import: the parent of ``steadybench ab`` makes each execution's interval with it)
EXACT_BINOMIAL_MAX = 2000


def median_rank_bounds(n: int, confidence: float) -> tuple[int, int, float] | None:
    """1-based ranks (j, k) with P(X(j) ≤ median ≤ X(k)) ≥ confidence, and the exact coverage.

    Distribution-free: the number of values below the median is Binomial(n, ½), so
    ``[X(j), X(n+1−j)]`` covers it with probability 1 − 2·P(B ≤ j−1). The largest such j is taken
    (the narrowest interval that still holds the level). None when even [min, max] is too short.
    Up to :data:`EXACT_BINOMIAL_MAX` samples the binomial is summed exactly in integers; above,
    scipy's distribution function is used.
    """
    alpha_half = (1.0 - confidence) / 2.0
    if n <= EXACT_BINOMIAL_MAX:
        total = 1 << n
        cumulative, term, j = 0, 1, 0  # term = C(n, i); cumulative = Σ_{i' ≤ i} C(n, i')
        for i in range(n + 1):
            if (cumulative + term) / total > alpha_half:
                break
            cumulative += term
            j = i + 1
            term = term * (n - i) // (i + 1)
        if j < 1:
            return None
        return j, n + 1 - j, 1.0 - 2.0 * (cumulative / total)
    from scipy import stats as sps

    j = int(sps.binom.ppf(alpha_half, n, 0.5))
    # ppf gives the smallest j with cdf(j) ≥ α/2; walk to the largest j whose coverage holds.
    j = max(j + 1, 1)
    while j >= 1 and 1.0 - 2.0 * float(sps.binom.cdf(j - 1, n, 0.5)) < confidence:
        j -= 1
    if j < 1:
        return None
    coverage = 1.0 - 2.0 * float(sps.binom.cdf(j - 1, n, 0.5))
    return j, n + 1 - j, coverage


def ci_median(values: Sequence[float] | np.ndarray, confidence: float = 0.95) -> Interval | None:
    """Distribution-free interval of the median from order statistics (see median_rank_bounds)."""
    check_confidence(confidence)
    arr = np.sort(as_array(values))
    bounds = median_rank_bounds(arr.size, confidence) if arr.size else None
    if bounds is None:
        return None
    j, k, _coverage = bounds
    return Interval(float(arr[j - 1]), float(arr[k - 1]), confidence, "order-statistics")


def cov(mean: float | None, stdev: float | None) -> float | None:
    """Coefficient of variation s/x̄ (Rancid §III, footnote 3); None when undefined."""
    if mean is None or stdev is None or mean == 0:
        return None
    return stdev / abs(mean)


STAT_KEYS = ("mean", "median", "stdev", "min", "max", "q1", "q3", "iqr", "cov")


def describe(values: Sequence[float] | np.ndarray) -> dict[str, float | None]:
    """mean, median, stdev, min, max, q1, q3, iqr and cov of the values (NaN ignored).

    Quartiles use linear interpolation between order statistics (Hyndman–Fan type 7, numpy's
    default).
    """
    arr = as_array(values)
    if arr.size == 0:
        return dict.fromkeys(STAT_KEYS)
    lo, hi = float(arr.min()), float(arr.max())
    if lo == hi:  # identical values: exact, without rounding noise in the mean or spread
        mean = lo
        stdev = 0.0 if arr.size > 1 else None
        q1 = median = q3 = lo
    else:
        mean = float(arr.mean())
        stdev = float(arr.std(ddof=1))
        q1, median, q3 = (float(v) for v in np.percentile(arr, [25, 50, 75]))
    return {
        "mean": mean,
        "median": median,
        "stdev": stdev,
        "min": lo,
        "max": hi,
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "cov": cov(mean, stdev),
    }


def describe_stream(stream: StreamingStats) -> dict[str, float | None]:
    """What a streaming accumulator knows; order statistics are undefined (None)."""
    out: dict[str, float | None] = dict.fromkeys(STAT_KEYS)
    if stream.n == 0:
        return out
    out.update(mean=stream.mean, stdev=stream.stdev, min=stream.min, max=stream.max)
    out["cov"] = cov(stream.mean, stream.stdev)
    return out


@dataclass(frozen=True)
class ExecutionSpread:
    """The per-execution values of a case as independent observations: the centre, its
    interval, and the spread (sd and CoV around the mean)."""

    centre: float
    low: float | None
    high: float | None
    sd: float | None
    cov: float | None
    n: int
    statistic: str  # "median" or "mean"


def across_executions(values: Sequence[float], confidence: float = 0.95) -> ExecutionSpread:
    """The centre of per-execution values with an interval across executions.

    Each execution (a fresh process: its own hash seed, memory layout and cache state) gives one
    value; the executions are the independent observations, so the interval is built from their
    spread, not from the runs inside them (Kalibera & Jones, "Rigorous benchmarking in reasonable
    time", ISMM 2013, §3).

    The centre is the **median** of the executions, with the distribution-free order-statistic
    interval (:func:`ci_median`), whenever there are enough executions for that interval to
    reach ``confidence`` (6 at 95 %). On a shared machine whole executions are slowed (a busy
    sibling hyper-thread or core slowed one of ten executions by 50 % on the development VM)
    and only ever slowed, so the mean is pulled by a few of them and the median is not. With
    fewer executions it falls back to the mean with a Student-t interval.
    """
    arr = as_array(values)
    mean = float(arr.mean())
    sd = float(arr.std(ddof=1)) if arr.size >= 2 else None
    spread = cov(mean, sd)
    median_ci = ci_median(arr, confidence) if arr.size >= 2 else None
    if median_ci is not None:
        return ExecutionSpread(float(np.median(arr)), median_ci.low, median_ci.high, sd, spread,
                               int(arr.size), "median")
    interval = ci_mean(arr, confidence) if arr.size >= 2 else None
    return ExecutionSpread(mean, interval.low if interval else None,
                           interval.high if interval else None, sd, spread, int(arr.size), "mean")
