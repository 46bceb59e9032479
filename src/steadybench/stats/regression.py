"""Least-squares fits used by the measurement methods and the ITERS protocol.

* :func:`ols` — ordinary least squares of ``y`` on ``x`` with Student-t confidence intervals of
  the slope and intercept, R² and the mean square deviation from the line (Moreno and
  Fischmeister, source ``002``, §4, equations 4–5; the Criterion sweep of source ``004``).
* :func:`robust_ols` — the robust refit of ``002`` §4.1: points whose absolute deviation from the
  line is far larger than the *median* absolute deviation are dropped and the line is refitted.
* :func:`loglog_fit` — the geometric variant of ``004`` ("Arithmetic vs geometric mean"): a line
  through ``(log x, log y)``, i.e. ``y = e^b · x^m``, giving the geometric mean factor ``e^b``,
  the power ``m`` and the geometric standard deviation of the points about the curve.
* :func:`solve_least_squares` — the overdetermined system ``A·u = b`` of ``002`` §5 (equations
  7–8) and §5.1 (equation 10), solved by least squares, with a confidence interval of each
  unknown.

Everything here is plain numpy/scipy; results are frozen dataclasses with ``to_dict()`` giving
plain JSON types (``None`` where a figure is undefined).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from .summary import check_confidence

#: Default outlier threshold of the robust refit: a point is dropped when its absolute deviation
#: from the fitted line exceeds this many times the median absolute deviation of all points.
#: For Gaussian noise the median absolute residual is about 0.67 σ, so 8× is about 5.4 σ: an
#: honest point is practically never dropped even though the median of 10–20 residuals is itself
#: noisy, while an interrupt-sized spike (hundreds of σ) always is.
DEFAULT_OUTLIER_THRESHOLD = 8.0

ArrayLike = Sequence[float] | np.ndarray


def _t_quantile(confidence: float, dof: int) -> float:
    from scipy import stats as sps  # here, not at the top: a worker process imports this module

    return float(sps.t.ppf(0.5 + confidence / 2.0, dof))


@dataclass(frozen=True)
class LineFit:
    """The least-squares line ``y = slope·x + intercept`` and its quality figures.

    ``slope_ci``/``intercept_ci`` are two-sided Student-t intervals with ``n − 2`` degrees of
    freedom at ``confidence``; ``msd`` is the mean square deviation of the points from the line
    (``002`` §4.1's quality figure, sum of squared residuals / n); ``residual_std`` is the
    unbiased residual standard deviation ``sqrt(SSR / (n − 2))``; ``r2`` is the coefficient of
    determination (None when all ``y`` are equal).
    """

    slope: float
    intercept: float
    slope_ci: tuple[float, float]
    intercept_ci: tuple[float, float]
    slope_se: float
    intercept_se: float
    r2: float | None
    msd: float
    residual_std: float
    n: int
    confidence: float

    def predict(self, x: ArrayLike | float) -> np.ndarray:
        """The line's value at ``x``."""
        return self.slope * np.asarray(x, dtype=float) + self.intercept

    def residuals(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """``y − line(x)`` for the given points."""
        return np.asarray(y, dtype=float) - self.predict(x)

    def to_dict(self) -> dict[str, object]:
        return {
            "slope": self.slope,
            "intercept": self.intercept,
            "slope_ci": [self.slope_ci[0], self.slope_ci[1]],
            "intercept_ci": [self.intercept_ci[0], self.intercept_ci[1]],
            "slope_se": self.slope_se,
            "intercept_se": self.intercept_se,
            "r2": self.r2,
            "msd": self.msd,
            "residual_std": self.residual_std,
            "n": self.n,
            "confidence": self.confidence,
        }


def _points(x: ArrayLike, y: ArrayLike, minimum: int) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ConfigurationError(f"fit: x has {xa.size} values but y has {ya.size}")
    if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(ya))):
        raise MeasurementError("fit: the points contain NaN or infinite values")
    if xa.size < minimum:
        raise MeasurementError(f"fit: needs at least {minimum} points, got {xa.size}")
    return xa, ya


#: a slope whose contribution over the whole x range is below this share of the largest y is
#: rounding noise, not growth (constant y can give a slope of ±1e-22 from floating point)
GROWTH_RELATIVE_FLOOR = 1e-9


def slope_is_positive(slope: float, x: ArrayLike, y: ArrayLike,
                      floor: float = GROWTH_RELATIVE_FLOOR) -> bool:
    """True when ``y`` really grows with ``x``: the slope is positive and, over the range of
    ``x``, adds more than ``floor`` of the largest ``|y|``. A line fitted to constant data has a
    slope of zero only up to rounding; this keeps it from passing for a tiny positive time."""
    xs = np.asarray(x, dtype=float)
    ys = np.abs(np.asarray(y, dtype=float))
    if not slope > 0 or xs.size == 0:
        return False
    span = float(xs.max() - xs.min())
    return slope * span > floor * float(ys.max(initial=0.0))


def ols(x: ArrayLike, y: ArrayLike, confidence: float = 0.95) -> LineFit:
    """Ordinary least squares of ``y`` on ``x`` (``002`` §4, eqs. 4–5).

    Needs at least 3 points (two for the line, one more for an error estimate) and at least two
    distinct ``x`` values. Standard errors follow the textbook formulas
    ``se(slope) = s / sqrt(Sxx)`` and ``se(intercept) = s·sqrt(1/n + x̄²/Sxx)`` with
    ``s² = SSR / (n − 2)``; the intervals use the Student-t quantile with ``n − 2`` degrees of
    freedom, the same as ``scipy.stats.linregress``.
    """
    check_confidence(confidence)
    xa, ya = _points(x, y, 3)
    n = xa.size
    xm, ym = xa.mean(), ya.mean()
    dx = xa - xm
    sxx = float(dx @ dx)
    if sxx <= 0.0:
        raise MeasurementError("fit: all x values are equal, the slope is undefined")
    slope = float(dx @ (ya - ym)) / sxx
    intercept = float(ym - slope * xm)
    resid = ya - (slope * xa + intercept)
    ssr = float(resid @ resid)
    dy = ya - ym
    sst = float(dy @ dy)
    r2 = None if sst <= 0.0 else max(0.0, 1.0 - ssr / sst)
    s2 = ssr / (n - 2)
    s = math.sqrt(s2)
    slope_se = s / math.sqrt(sxx)
    intercept_se = s * math.sqrt(1.0 / n + xm * xm / sxx)
    t = _t_quantile(confidence, n - 2)
    return LineFit(
        slope=slope,
        intercept=intercept,
        slope_ci=(slope - t * slope_se, slope + t * slope_se),
        intercept_ci=(intercept - t * intercept_se, intercept + t * intercept_se),
        slope_se=slope_se,
        intercept_se=intercept_se,
        r2=r2,
        msd=ssr / n,
        residual_std=s,
        n=n,
        confidence=confidence,
    )


@dataclass(frozen=True)
class RobustFit:
    """The outcome of :func:`robust_ols`: the final ``fit``, the ``initial`` fit of all points,
    the indices of the ``dropped`` points (into the original ``x``) and the ``threshold`` used."""

    fit: LineFit
    initial: LineFit
    dropped: tuple[int, ...]
    kept: tuple[int, ...]
    threshold: float

    def to_dict(self) -> dict[str, object]:
        return {
            **self.fit.to_dict(),
            "dropped": list(self.dropped),
            "threshold": self.threshold,
            "initial": self.initial.to_dict(),
        }


def outlier_mask(residuals: ArrayLike, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
                 scale_floor: float = 0.0) -> np.ndarray:
    """True for residuals whose absolute value exceeds ``threshold`` × the median absolute one.

    ``scale_floor`` bounds the median from below, so that a perfect fit (median deviation 0,
    e.g. a noiseless simulated clock) does not turn rounding noise into outliers.
    """
    r = np.abs(np.asarray(residuals, dtype=float))
    if r.size == 0:
        return np.zeros(0, dtype=bool)
    scale = max(float(np.median(r)), float(scale_floor))
    if scale <= 0.0:
        return np.zeros(r.size, dtype=bool)
    return r > threshold * scale


def robust_ols(x: ArrayLike, y: ArrayLike, confidence: float = 0.95,
               threshold: float = DEFAULT_OUTLIER_THRESHOLD, max_rounds: int = 3,
               min_points: int = 3) -> RobustFit:
    """Fit, drop points far off the line, refit (``002`` §4.1).

    A point is an outlier when its absolute deviation from the current line exceeds
    ``threshold`` × the median absolute deviation (the median rather than the mean, because the
    mean is itself pulled up by the outliers — ``002`` §4.1, footnote 2). The line is refitted on
    the remaining points; this repeats while new outliers appear, at most ``max_rounds`` times.
    Points are never dropped below ``min_points`` (≥ 3) or below half of the points: when a
    round would do so, it is not applied. ``threshold`` must be > 1 (``inf`` disables dropping).
    """
    if not threshold > 1.0:
        raise ConfigurationError(f"outlier threshold must be greater than 1, got {threshold}")
    if max_rounds < 0:
        raise ConfigurationError(f"max_rounds must be ≥ 0, got {max_rounds}")
    xa, ya = _points(x, y, 3)
    min_points = max(3, int(min_points), (xa.size + 1) // 2)
    initial = ols(xa, ya, confidence)
    fit = initial
    keep = np.ones(xa.size, dtype=bool)
    # Relative floor for the median deviation: far below any real noise, far above rounding.
    floor = 1e-9 * max(float(np.max(np.abs(ya))), 1e-300)
    for _ in range(max_rounds):
        resid = fit.residuals(xa, ya)
        out = outlier_mask(resid[keep], threshold, floor)
        if not out.any():
            break
        candidate = keep.copy()
        candidate[np.flatnonzero(keep)[out]] = False
        if candidate.sum() < min_points or np.ptp(xa[candidate]) == 0:
            break
        keep = candidate
        fit = ols(xa[keep], ya[keep], confidence)
    return RobustFit(
        fit=fit,
        initial=initial,
        dropped=tuple(int(i) for i in np.flatnonzero(~keep)),
        kept=tuple(int(i) for i in np.flatnonzero(keep)),
        threshold=float(threshold),
    )


@dataclass(frozen=True)
class LogLogFit:
    """``y = factor · x^power`` fitted as a line through ``(log x, log y)`` (source ``004``).

    ``factor = e^b`` is the geometric mean factor (the fitted ``y`` at ``x = 1``), ``power = m``
    the exponent (1 for a cost proportional to ``x``), ``geo_stdev = exp(s)`` the geometric
    standard deviation of the points about the curve (``s`` the residual standard deviation in log
    space; 1 for a perfect fit), ``r2`` the R² in log space.
    """

    factor: float
    power: float
    geo_stdev: float
    r2: float | None
    n: int

    def to_dict(self) -> dict[str, object]:
        return {"factor": self.factor, "power": self.power, "geo_stdev": self.geo_stdev,
                "r2": self.r2, "n": self.n}


def loglog_fit(x: ArrayLike, y: ArrayLike) -> LogLogFit:
    """The log-log fit of ``004``: regress ``log y`` on ``log x``, exponentiate the intercept.

    Needs at least 3 points with positive ``x`` and ``y`` (logarithms of non-positive values are
    undefined; such points raise :class:`MeasurementError`).
    """
    xa, ya = _points(x, y, 3)
    if np.any(xa <= 0) or np.any(ya <= 0):
        raise MeasurementError("log-log fit: every x and y must be positive")
    fit = ols(np.log(xa), np.log(ya))
    return LogLogFit(
        factor=math.exp(fit.intercept),
        power=fit.slope,
        geo_stdev=math.exp(fit.residual_std),
        r2=fit.r2,
        n=fit.n,
    )


def try_loglog_fit(x: ArrayLike, y: ArrayLike) -> LogLogFit | None:
    """:func:`loglog_fit`, or None where it does not apply (non-positive values, too few)."""
    try:
        return loglog_fit(x, y)
    except MeasurementError:
        return None


@dataclass(frozen=True)
class LeastSquaresSolution:
    """Solution of an overdetermined linear system ``A·u ≈ b`` with per-unknown uncertainty.

    ``values[j]`` is the least-squares estimate of unknown ``j``, ``se[j]`` its standard error
    (square root of the diagonal of ``s²·(AᵀA)⁻¹``, ``s² = SSR / (n − p)``), ``ci[j]`` the
    two-sided Student-t interval with ``dof = n − p`` degrees of freedom. ``rank`` is the
    numerical rank of ``A``; ``msd`` the mean square residual.
    """

    names: tuple[str, ...]
    values: tuple[float, ...]
    se: tuple[float, ...]
    ci: tuple[tuple[float, float], ...]
    residual_std: float
    msd: float
    dof: int
    rank: int
    n: int
    confidence: float

    def __getitem__(self, name: str) -> float:
        return self.values[self.names.index(name)]

    def to_dict(self) -> dict[str, object]:
        return {
            "unknowns": {
                name: {"value": v, "se": s, "ci_low": lo, "ci_high": hi}
                for name, v, s, (lo, hi) in zip(self.names, self.values, self.se, self.ci)
            },
            "residual_std": self.residual_std,
            "msd": self.msd,
            "dof": self.dof,
            "rank": self.rank,
            "n": self.n,
            "confidence": self.confidence,
        }


def null_space_columns(a: np.ndarray, rtol: float = 1e-10) -> list[list[int]]:
    """Groups of column indices of ``a`` that take part in a linear dependency.

    Each group is the support of one basis vector of the null space of ``a`` (columns whose
    combination vanishes, so their unknowns cannot be told apart). Empty when ``a`` has full
    column rank.
    """
    a = np.asarray(a, dtype=float)
    if a.size == 0:
        return []
    _, sv, vt = np.linalg.svd(a, full_matrices=True)
    tol = rtol * (sv[0] if sv.size else 0.0) * max(a.shape)
    rank = int(np.sum(sv > tol))
    groups: list[list[int]] = []
    for vec in vt[rank:]:
        big = np.abs(vec) > 1e-8 * np.max(np.abs(vec))
        group = [int(i) for i in np.flatnonzero(big)]
        if group and group not in groups:
            groups.append(group)
    return groups


def solve_least_squares(a: ArrayLike, b: ArrayLike, confidence: float = 0.95,
                        names: Sequence[str] | None = None,
                        rtol: float = 1e-10) -> LeastSquaresSolution:
    """Least-squares solution of ``A·u ≈ b`` with a CI for each unknown (``002`` §5, eq. 8).

    Solved with ``numpy.linalg.lstsq`` (an SVD, numerically safer than forming ``AᵀA`` as the
    paper's equation 8 does, same solution). Requires more equations than unknowns (so that the
    noise can be estimated) and full column rank; a rank-deficient ``A`` raises
    :class:`MeasurementError` naming the unknowns that cannot be separated.
    """
    check_confidence(confidence)
    am = np.asarray(a, dtype=float)
    if am.ndim != 2:
        raise ConfigurationError("least squares: the matrix must be two-dimensional")
    bv = np.asarray(b, dtype=float).ravel()
    n, p = am.shape
    labels = tuple(names) if names is not None else tuple(f"u{j}" for j in range(p))
    if len(labels) != p:
        raise ConfigurationError(f"least squares: {p} unknowns but {len(labels)} names")
    if bv.size != n:
        raise ConfigurationError(f"least squares: {n} equations but {bv.size} right-hand sides")
    if not (np.all(np.isfinite(am)) and np.all(np.isfinite(bv))):
        raise MeasurementError("least squares: the system contains NaN or infinite values")
    if n <= p:
        raise MeasurementError(
            f"least squares: {n} equations for {p} unknowns; need more equations than unknowns "
            "to estimate the noise")
    sol, _, rank, sv = np.linalg.lstsq(am, bv, rcond=None)
    tol = rtol * (sv[0] if sv.size else 0.0) * max(am.shape)
    rank = int(np.sum(sv > tol))
    if rank < p:
        groups = null_space_columns(am, rtol)
        desc = "; ".join("{" + ", ".join(labels[j] for j in g) + "}" for g in groups)
        raise MeasurementError(
            f"least squares: the system is singular (rank {rank} < {p} unknowns); these unknowns "
            f"cannot be separated: {desc or ', '.join(labels)}")
    resid = bv - am @ sol
    ssr = float(resid @ resid)
    dof = n - p
    s2 = ssr / dof
    cov = s2 * np.linalg.pinv(am.T @ am)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    t = _t_quantile(confidence, dof)
    return LeastSquaresSolution(
        names=labels,
        values=tuple(float(v) for v in sol),
        se=tuple(float(s) for s in se),
        ci=tuple((float(v - t * s), float(v + t * s)) for v, s in zip(sol, se)),
        residual_std=math.sqrt(s2),
        msd=ssr / n,
        dof=dof,
        rank=rank,
        n=n,
        confidence=confidence,
    )


__all__ = [
    "DEFAULT_OUTLIER_THRESHOLD",
    "LeastSquaresSolution",
    "LineFit",
    "LogLogFit",
    "RobustFit",
    "loglog_fit",
    "null_space_columns",
    "ols",
    "outlier_mask",
    "robust_ols",
    "solve_least_squares",
    "try_loglog_fit",
]
