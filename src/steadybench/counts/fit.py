"""The count per call, with start-up, set-up and harness taken out by a line fit.

A count taken over a whole process includes the interpreter's start-up, the imports, the
benchmark's set-up and the harness. Counting the process at several call counts ``N`` and
fitting ``count = slope·N + intercept`` separates them: the slope is the count per call, the
intercept the fixed part (Moreno and Fischmeister, source ``002`` §4, applied to counts instead
of clock readings; for ITERS programs the same line over ITERS is source ``004``'s regression).

Counts are exact, so the points of a benchmark whose calls all cost the same lie on the line
to within a few instructions (the allocator and the garbage collector's thresholds move a little
per call). A benchmark whose cost changes from call to call (a list that grows, a cache that
fills) does not: :attr:`CountFit.on_line` is False when a residual exceeds
:data:`LINE_TOLERANCE` of the smallest point's measured part, and the case carries a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import MeasurementError

#: a point is off the line when its residual exceeds this share of ``slope × smallest N`` (the
#: counted calls of the smallest point): 1 %, far above the few hundred instructions in tens of
#: thousands per call seen with constant-cost calls, far below a cost that grows with each call
LINE_TOLERANCE = 0.01


@dataclass(frozen=True)
class CountFit:
    """The line through (calls, count) points.

    ``slope`` is the count per call (per iteration, per process), ``intercept`` the fixed part;
    ``residuals`` are ``count − line`` per point; ``slope_ci`` the fit's Student-t interval
    (zero width when the points lie exactly on the line); ``worst`` the largest residual as a
    share of ``slope × min(calls)``.
    """

    calls: tuple[int, ...]
    counts: tuple[int, ...]
    slope: float
    intercept: float
    slope_ci: tuple[float, float]
    residuals: tuple[float, ...]
    worst: float
    on_line: bool

    def to_dict(self) -> dict[str, object]:
        return {"calls": list(self.calls), "counts": list(self.counts), "slope": self.slope,
                "intercept": self.intercept, "slope_ci": list(self.slope_ci),
                "residuals": list(self.residuals), "worst_residual_share": self.worst,
                "on_line": self.on_line}

    def warning(self, what: str = "call") -> str | None:
        """One line when the counts are not on a line, else None."""
        if self.on_line:
            return None
        return (f"the counts are not on a line (a residual of {self.worst:.1%} of the smallest "
                f"point's {what}s): the cost changes from {what} to {what}, so the count per "
                f"{what} depends on how many were counted")


def fit_counts(calls: Sequence[int], counts: Sequence[int], confidence: float = 0.95,
               tolerance: float = LINE_TOLERANCE) -> CountFit:
    """Fit the line; a MeasurementError when there are fewer than two distinct call counts or
    the count does not grow with the calls."""
    from ..stats.regression import ols

    if len(calls) != len(counts) or len(set(calls)) < 2:
        raise MeasurementError("a count per call needs counts at two or more call counts")
    if len(calls) == 2:
        (x0, x1), (y0, y1) = calls, counts
        slope = (y1 - y0) / (x1 - x0)
        intercept = y0 - slope * x0
        ci = (slope, slope)
        residuals: tuple[float, ...] = (0.0, 0.0)
    else:
        line = ols([float(c) for c in calls], [float(c) for c in counts], confidence)
        slope, intercept = line.slope, line.intercept
        ci = (line.slope_ci if all(v == v for v in line.slope_ci) else (slope, slope))
        residuals = tuple(float(r) for r in line.residuals(calls, counts))
    if slope <= 0:
        raise MeasurementError(
            f"the count did not grow with the calls (counts {list(counts)} at {list(calls)} "
            "calls): the measured code does nothing the counter sees")
    worst = max(abs(r) for r in residuals) / (slope * min(calls))
    return CountFit(tuple(int(c) for c in calls), tuple(int(c) for c in counts), float(slope),
                    float(intercept), (float(ci[0]), float(ci[1])), residuals, float(worst),
                    worst <= tolerance)
