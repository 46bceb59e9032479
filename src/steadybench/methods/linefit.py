"""The ``linefit`` method (Moreno and Fischmeister, source ``002`` §4–4.1; the Criterion sweep of
source ``004``).

Samples hold ``k·b`` executions for ``k = 1, 2, …, M`` (cycling when more runs are made), each
timed as straight-line code; the least-squares line of elapsed time on executions has the time
per execution as its slope and the clock-read overhead ε as its intercept (eq. 2:
``T = N·T_e + ε``), so ε drops out of the estimate instead of being divided down. Points far
off the line (interrupts) are dropped and the line refitted (§4.1); the mean square deviation
from the line and R² say how straight the points are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MeasurementError
from ..stats.regression import (
    DEFAULT_OUTLIER_THRESHOLD,
    RobustFit,
    robust_ols,
    slope_is_positive,
    try_loglog_fit,
)
from .base import Clock, Method
from .common import (
    block_half_widths,
    calibrate_executions,
    case_confidence,
    fail,
    float_option,
    int_option,
    probe_clock,
)
from .unroll import Timer

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

#: with a calibrated base batch, one step b of the sweep lasts at least this many times
#: max(clock read cost, resolution)
STEP_FACTOR = 10


def fit_record(kind: str, x: Sequence[float], y: Sequence[float], confidence: float,
               threshold: float = DEFAULT_OUTLIER_THRESHOLD,
               x_label: str = "executions",
               order: Sequence[float] | None = None) -> tuple[dict[str, Any], RobustFit]:
    """Robust line fit of ``y`` (seconds) on ``x`` and the common ``case.extra["fit"]`` record.

    Shared by ``linefit`` and the ITERS protocol (and so ``sweep``) so that all use the one
    robust fit (:func:`~steadybench.stats.regression.robust_fit`, ``002`` §4.1) and reports
    plot them alike. ``order`` (the time order of the points) lets the fit warn about drift.
    Raises :class:`MeasurementError` for too few points or a single ``x`` value; the sign of
    the slope is left to the caller.
    """
    if len(x) < 3:
        raise MeasurementError(f"a line fit needs at least 3 points, got {len(x)}")
    if len(set(x)) < 2:
        raise MeasurementError("every point has the same number of executions; no line fits")
    rob = robust_ols(x, y, confidence=confidence, threshold=threshold, order=order)
    fit = rob.fit
    kept = np.asarray(rob.kept)
    loglog = try_loglog_fit(np.asarray(x)[kept], np.asarray(y)[kept])
    details = rob.robust
    record = {
        "kind": kind,
        "x": [float(v) for v in x],
        "x_label": x_label,
        "y": [float(v) for v in y],
        "dropped": list(rob.dropped),
        "slope": fit.slope,
        "intercept": fit.intercept,
        "slope_ci": [fit.slope_ci[0], fit.slope_ci[1]],
        "intercept_ci": [fit.intercept_ci[0], fit.intercept_ci[1]],
        "confidence": confidence,
        "r2": fit.r2,
        "msd": fit.msd,
        "residual_std": fit.residual_std,
        "threshold": rob.threshold if np.isfinite(rob.threshold) else None,  # None: keep all
        "initial": {"slope": rob.initial.slope, "intercept": rob.initial.intercept,
                    "msd": rob.initial.msd, "r2": rob.initial.r2},
        "loglog": loglog.to_dict() if loglog else None,
        "readmitted": list(rob.readmitted),
        "iterations": details.iterations if details else 0,
        "converged": details.converged if details else True,
        "scale": details.scale if details else None,
        "noise_power": details.noise_power if details else 0.0,
        "straight": rob.straight,
        "warnings": list(rob.warnings),
    }
    return record, rob


def fit_points(kind: str, x: list[float], y: list[float], confidence: float,
               threshold: float = DEFAULT_OUTLIER_THRESHOLD,
               x_label: str = "executions",
               order: Sequence[float] | None = None) -> tuple[dict[str, Any], RobustFit]:
    """:func:`fit_record`, refusing a slope that is not positive (never a wrong number)."""
    record, rob = fit_record(kind, x, y, confidence, threshold, x_label, order)
    if not slope_is_positive(rob.fit.slope, x, y):
        raise MeasurementError(
            f"the fitted time per execution is not positive ({rob.fit.slope:.3g} s): the code is "
            "too fast for the clock's noise; use more executions per point (option 'base_batch')")
    return record, rob


def widen(centre: float, interval: Sequence[float], half: float) -> list[float]:
    """``interval``, widened to ``centre ± half`` where that is wider on either side."""
    return [min(float(interval[0]), centre - half), max(float(interval[1]), centre + half)]


class LineFitMethod(Method):
    """Straight-line fitting over 1..M (times b) unrolled executions (``002`` §4–4.1).

    Options: ``points`` (M ≥ 3, default 20), ``base_batch`` (b ≥ 1; default calibrated so that
    b executions last at least 10 × max(clock read cost, resolution)), ``threshold`` (robust
    fit: drop points deviating more than this × the median absolute deviation from the line;
    default :data:`~steadybench.stats.regression.DEFAULT_OUTLIER_THRESHOLD`, ``inf`` keeps
    all).

    Each sweep starts at k = 1 (warm-up samples do not advance it). The interval of the slope
    is the least-squares one of the kept points, widened to the spread of the slopes of whole
    sweeps when that is larger (run-to-run variation), and, when the points are not straight,
    to the slopes of their other readings (two lines, two halves of the counts or of the
    measurement: :func:`~steadybench.stats.regression.straightness`). It describes one
    execution; across independent executions the per-execution slopes make the interval
    (:func:`~steadybench.methods.base.build_estimate`).
    """

    name = "linefit"
    variable_executions = True
    execution_figures = ("overhead",)

    def __init__(self, points: int = 20, base_batch: int | None = None,
                 threshold: float = DEFAULT_OUTLIER_THRESHOLD) -> None:
        self.points = int_option(self.name, "points", points, 3, 10_000)
        self.fixed_batch = None if base_batch is None else int_option(
            self.name, "base_batch", base_batch, 1)
        self.threshold = float_option(self.name, "threshold", threshold, 1.0, low_open=True)
        self.base_batch = self.fixed_batch
        self.read_cost_ns: float | None = None
        self._timer: Timer | None = None
        self._next = 0
        self._warm = 0
        #: (executions, elapsed ns) of every measured sample, used when raw samples are not kept
        self.recorded: list[tuple[int, int]] = []

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        self._timer = Timer(implementation)
        cost, resolution = probe_clock(clock)
        self.read_cost_ns = cost
        if self.fixed_batch is None:
            self.base_batch, _ = calibrate_executions(
                self._timer, clock, STEP_FACTOR * max(cost, resolution), cost)
        else:
            self.base_batch = self.fixed_batch
        self._timer.compile_ahead(*(k * self.base_batch for k in range(1, self.points + 1)))
        self._next = 0
        self._warm = 0
        self.recorded = []

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        assert self._timer is not None and self.base_batch is not None
        k = self._next % self.points + 1
        self._next += 1
        n = k * self.base_batch
        elapsed = self._timer.time(clock, n)
        self.recorded.append((n, elapsed))
        return elapsed, n

    def sample_warmup(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        """A warm-up sample from the top of the sweep down (M, M − 1, …): it compiles and runs
        the largest bodies first and leaves the measured sweep starting at k = 1."""
        assert self._timer is not None and self.base_batch is not None
        k = self.points - self._warm % self.points
        self._warm += 1
        n = k * self.base_batch
        return self._timer.time(clock, n), n

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        confidence = case_confidence(case)
        x = case.values("executions")
        y = case.values("elapsed")
        if not x and not case.keep_samples and self.recorded:
            case.warnings.append("linefit: raw samples not kept; the fit uses the samples the "
                                 "method recorded itself")
            x = [float(n) for n, _ in self.recorded]
            y = [e / 1e9 for _, e in self.recorded]
        try:
            record, rob = fit_points("linefit", x, y, confidence, self.threshold,
                                     order=list(range(len(x))))
        except MeasurementError as exc:
            return fail(case, self.name, f"{exc} (option 'points' = {self.points})")
        fit = rob.fit
        slope_ci = [fit.slope_ci[0], fit.slope_ci[1]]
        overhead_ci = [fit.intercept_ci[0], fit.intercept_ci[1]]
        basis = "residuals of the fit"
        keep = np.zeros(len(x), dtype=bool)
        keep[list(rob.kept)] = True
        design = np.column_stack([np.asarray(x, dtype=float), np.ones(len(x))])
        sweeps = block_half_widths(design, y, keep, self.points, confidence)
        within: float | None = None
        if sweeps is not None:
            (half_slope, half_overhead), solutions = sweeps
            record["sweep_slopes"] = [s[0] for s in solutions]
            within = float(np.std(record["sweep_slopes"], ddof=1)) / abs(fit.slope)
            if half_slope > (slope_ci[1] - slope_ci[0]) / 2:
                basis = f"spread of the slopes of {len(solutions)} sweeps"
            slope_ci = widen(fit.slope, slope_ci, half_slope)
            overhead_ci = widen(fit.intercept, overhead_ci, half_overhead)
        pooled = sum(1 for e in case.processes if e.ok) >= 2
        if not rob.straight and not pooled:
            bounds = rob.slope_bounds()
            if bounds is not None:
                slope_ci = [min(slope_ci[0], bounds[0]), max(slope_ci[1], bounds[1])]
                basis += (", widened to the slopes of the other readings of the points "
                          "(they are not straight)")
            for reason in rob.warnings:
                text = f"linefit: {reason}; the slope is uncertain (see the fit plot)"
                if text not in case.warnings:
                    case.warnings.append(text)
        record["slope_ci_fit"] = record["slope_ci"]
        record["slope_ci"] = slope_ci
        record["ci_basis"] = basis
        case.extra["fit"] = record
        return {
            "value": fit.slope,
            "ci_low": slope_ci[0],
            "ci_high": slope_ci[1],
            "confidence": confidence,
            "overhead": fit.intercept,
            "overhead_ci": overhead_ci,
            "r2": fit.r2,
            "msd": fit.msd,
            "points": fit.n,
            "dropped": len(rob.dropped),
            "readmitted": len(rob.readmitted),
            "straight": rob.straight,
            "ci_basis": basis,
            "within_cov": within,
            "base_batch": self.base_batch,
            "loglog": record["loglog"],
        }

    def options(self) -> dict[str, Any]:
        return {"points": self.points, "base_batch": self.base_batch, "threshold": self.threshold}
