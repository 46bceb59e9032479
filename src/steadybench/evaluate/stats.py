"""The statistics of Rancid's evaluation (Afonso & Almeida, §VI).

- :func:`improvement`: "precision improvement" is the reduction of the sample standard
  deviation and "performance improvement" the reduction of the median, from the baseline to the
  managed method (§VI-A), absolute and relative to the baseline (Tables 2 and 3).
- :func:`table2_row`: one long execution of each method, its runs summarised (§VI-A, Table 2).
- :func:`table3_row`: K independent executions of each method, each summarised by its median;
  the median and the standard deviation of those medians compared (§VI-C, Table 3).
- :func:`box_stats`: the quartiles and the 1st/99th percentiles the whiskers of Fig. 15 reach.
- :func:`error_evolution`: the running median relative to a reference and the running IQR
  relative to the running median, after 1..N runs (§VI-B, Fig. 16).

Definitions, all with numpy's default (linear, R type 7) quantiles: median = 50th percentile;
standard deviation with ``ddof=1`` (the sample standard deviation); IQR = p75 − p25. A change is
*highlighted* when it exceeds both an absolute and a relative threshold (the paper's "over both
1 ms and 1 %"), in either direction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

#: the paper's highlight thresholds: 1 ms and 1 %
HIGHLIGHT_ABS_S = 1e-3
HIGHLIGHT_REL = 0.01
#: the most points of one error-evolution curve kept (the paper plots 1..1000 repetitions)
EVOLUTION_POINTS = 1000


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def _none(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


@dataclass(frozen=True)
class Improvement:
    """The reduction from ``baseline`` to ``managed``: ``absolute`` = baseline − managed (in
    the values' unit), ``relative`` = absolute / baseline; positive is better (less time, less
    spread). ``highlight``: both |absolute| and |relative| exceed the thresholds."""

    baseline: float | None
    managed: float | None
    absolute: float | None
    relative: float | None
    highlight: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def improvement(baseline: float | None, managed: float | None,
                abs_threshold: float = HIGHLIGHT_ABS_S,
                rel_threshold: float = HIGHLIGHT_REL) -> Improvement:
    """The reduction of a figure (median or standard deviation) from baseline to managed."""
    if baseline is None or managed is None or not (math.isfinite(baseline)
                                                   and math.isfinite(managed)):
        return Improvement(_none(baseline) if baseline is not None else None,
                           _none(managed) if managed is not None else None, None, None, False)
    absolute = baseline - managed
    relative = absolute / baseline if baseline != 0 else None
    highlight = (abs(absolute) > abs_threshold and relative is not None
                 and abs(relative) > rel_threshold)
    return Improvement(baseline, managed, absolute, relative, highlight)


@dataclass(frozen=True)
class Spread:
    """The median, sample standard deviation and count of a set of values."""

    n: int
    median: float | None
    std: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def spread(values: Sequence[float]) -> Spread:
    """Median and sample standard deviation (``ddof=1``; None with fewer than 2 values)."""
    import numpy as np

    x = np.asarray(_finite(values), dtype=float)
    if x.size == 0:
        return Spread(0, None, None)
    std = float(np.std(x, ddof=1)) if x.size >= 2 else None
    return Spread(int(x.size), float(np.median(x)), std)


@dataclass(frozen=True)
class ComparisonRow:
    """One row of Table 2 or Table 3: each method's spread and both improvements."""

    baseline: Spread
    managed: Spread
    performance: Improvement
    precision: Improvement

    @property
    def highlight(self) -> bool:
        return self.performance.highlight or self.precision.highlight

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline.to_dict(), "managed": self.managed.to_dict(),
                "performance": self.performance.to_dict(),
                "precision": self.precision.to_dict(), "highlight": self.highlight}


def compare_spreads(baseline: Spread, managed: Spread, abs_threshold: float = HIGHLIGHT_ABS_S,
                    rel_threshold: float = HIGHLIGHT_REL) -> ComparisonRow:
    return ComparisonRow(
        baseline, managed,
        performance=improvement(baseline.median, managed.median, abs_threshold, rel_threshold),
        precision=improvement(baseline.std, managed.std, abs_threshold, rel_threshold))


def table2_row(baseline_runs: Sequence[float], managed_runs: Sequence[float],
               abs_threshold: float = HIGHLIGHT_ABS_S,
               rel_threshold: float = HIGHLIGHT_REL) -> ComparisonRow:
    """Table 2 (§VI-A): the runs of one long execution of each method — median and standard
    deviation of the runs, and their reductions."""
    return compare_spreads(spread(baseline_runs), spread(managed_runs), abs_threshold,
                           rel_threshold)


def table3_row(baseline_medians: Sequence[float], managed_medians: Sequence[float],
               abs_threshold: float = HIGHLIGHT_ABS_S,
               rel_threshold: float = HIGHLIGHT_REL) -> ComparisonRow:
    """Table 3 (§VI-C): one median per independent execution of each method; the median and
    the standard deviation of those medians, and their reductions (reproducibility)."""
    return compare_spreads(spread(baseline_medians), spread(managed_medians), abs_threshold,
                           rel_threshold)


@dataclass(frozen=True)
class BoxStats:
    """What a Fig. 15 box shows: quartiles and median (the box), the 1st and 99th
    percentiles (the whiskers), and the extremes (each pair is scaled to them)."""

    n: int
    p1: float
    q1: float
    median: float
    q3: float
    p99: float
    min: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def box_stats(values: Sequence[float]) -> BoxStats | None:
    """The Fig. 15 box of ``values`` (None when there are none)."""
    import numpy as np

    x = np.asarray(_finite(values), dtype=float)
    if x.size == 0:
        return None
    p1, q1, med, q3, p99 = (float(v) for v in np.percentile(x, [1, 25, 50, 75, 99]))
    return BoxStats(int(x.size), p1, q1, med, q3, p99, float(x.min()), float(x.max()))


@dataclass(frozen=True)
class Evolution:
    """Fig. 16 for one series: after ``n[i]`` runs, ``error[i]`` = (running median −
    reference) / reference and ``iqr[i]`` = running IQR / running median."""

    n: list[int]
    error: list[float | None]
    iqr: list[float | None]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evolution_points(total: int, points: int = EVOLUTION_POINTS) -> list[int]:
    """The run counts at which a curve is evaluated: every count up to ``points``, else
    ``points`` counts evenly spread over 1..total (always ending at ``total``)."""
    import numpy as np

    if total <= 0:
        return []
    if total <= points:
        return list(range(1, total + 1))
    return sorted({int(round(v)) for v in np.linspace(1, total, points)})


def _sorted_quantile(ordered: Any, q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated linearly between order statistics
    (numpy's default method, R type 7)."""
    position = (ordered.size - 1) * q
    low = int(math.floor(position))
    high = min(low + 1, ordered.size - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def error_evolution(values: Sequence[float], reference: float | None,
                    points: int = EVOLUTION_POINTS) -> Evolution:
    """The error and precision evolution of a run series (§VI-B): the running median of the
    first n runs relative to ``reference``, and the IQR of the first n runs relative to their
    median, for n = 1..N (at most ``points`` values of n).

    The prefix is kept sorted, each step merging the runs since the last point into it, so a
    long series costs ``points`` merges instead of ``points`` sorts.
    """
    import numpy as np

    x = np.asarray(_finite(values), dtype=float)
    ns = evolution_points(int(x.size), points)
    errors: list[float | None] = []
    iqrs: list[float | None] = []
    ordered = np.empty(0)
    done = 0
    for n in ns:
        chunk = np.sort(x[done:n])
        ordered = np.insert(ordered, np.searchsorted(ordered, chunk), chunk)
        done = n
        q1, med, q3 = (_sorted_quantile(ordered, q) for q in (0.25, 0.5, 0.75))
        errors.append(_none((med - reference) / reference)
                      if reference not in (None, 0) else None)
        iqrs.append(_none((q3 - q1) / med) if med != 0 else None)
    return Evolution(ns, errors, iqrs)
