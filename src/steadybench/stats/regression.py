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
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from .robust import robust_sd
from .summary import check_confidence

#: Default cut of the robust fit (:func:`robust_fit`): a point is dropped when its absolute
#: deviation from the fitted line exceeds this many times the median absolute deviation of the
#: points from the line. For Gaussian noise the median absolute residual is about 0.674 σ, so
#: 6× is about 4 σ. Because the median of 20 residuals is itself noisy, about 0.25 % of honest
#: points go on 20-point fits (0.15 % on 60; the slope's 95 % interval still covered the truth
#: in 95–96 % of 1500 simulated fits), while an interrupt (a 1 µs interrupt against 2 ns of
#: clock jitter is 500 σ) always goes. At 5× almost three times as many honest points go; at
#: 8× a disturbance of a few times the noise (a cache miss, a short preemption) stays in and
#: tilts the line.
DEFAULT_OUTLIER_THRESHOLD = 6.0

ArrayLike = Sequence[float] | np.ndarray


def _t_quantile(confidence: float, dof: int) -> float:
    # scipy-free (stats/student.py, checked against R's qt): importing scipy.stats costs a
    # second of a counted run, whose only statistic is this line's interval
    from .student import t_quantile

    return t_quantile(0.5 + confidence / 2.0, dof)


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


# ---------------------------------------------------------------------------- robust fit
#: smallest group of points whose median absolute residual enters the noise model of
#: :func:`noise_weights`
MAD_GROUP_MIN = 10
#: most groups the points are split into for the noise model
MAD_GROUPS_MAX = 4
#: the noise model lets the noise grow with the count only when the groups' typical counts
#: span at least this factor (an ITERS sweep over decades; not 1..20 executions)
SCALE_SPAN = 4.0
#: most fit → residuals → cut rounds of :func:`robust_fit`
MAX_ITERATIONS = 50
#: above this many points the L1 start of :func:`robust_fit` is fitted to a seeded random
#: subsample of this size (the rounds that follow use every point)
LAD_SUBSAMPLE = 4000
#: a fit whose cut drops more than this share of the points is "not straight" (10 % of points
#: disturbed by interrupts drop more than a third of 20 points in 0.2 % of cases)
DROPPED_SHARE_LIMIT = 1 / 3
#: significance of the curvature and drift checks of :func:`robust_fit`
STRAIGHTNESS_ALPHA = 1e-3
#: curvature or drift matters when the rate (time per execution) changes by more than this
#: share over the range of the points (or over the measurement)
STRAIGHTNESS_EFFECT = 0.02
#: points needed before the bimodality check is made
BIMODAL_MIN_POINTS = 20


def lad_fit(a: ArrayLike, y: ArrayLike, iterations: int = 200) -> np.ndarray:
    """Least absolute deviations (L1) solution of ``A·u ≈ y`` by iteratively reweighted least
    squares (weights ``1/|r|``, bounded; Schlossmacher 1973).

    The start of :func:`robust_fit`: unlike least squares, the L1 fit is not pulled by a few
    huge residuals in ``y`` (interrupts), as long as the design itself has no wild rows, which
    is true of execution counts.
    """
    am = np.asarray(a, dtype=float)
    yv = np.asarray(y, dtype=float)
    u = np.linalg.lstsq(am, yv, rcond=None)[0]
    for _ in range(iterations):
        ar = np.abs(yv - am @ u)
        med = float(np.median(ar))
        tiny = max(med * 1e-6, float(np.max(np.abs(yv), initial=0.0)) * 1e-15, 1e-300)
        sw = 1.0 / np.sqrt(np.maximum(ar, tiny))
        new = np.linalg.lstsq(am * sw[:, None], yv * sw, rcond=None)[0]
        if np.allclose(new, u, rtol=1e-10, atol=0.0):
            return new
        u = new
    return u


def mad_groups(sizes: ArrayLike, min_size: int = MAD_GROUP_MIN,
               max_groups: int = MAD_GROUPS_MAX) -> np.ndarray:
    """Group index of each point: up to ``max_groups`` groups of neighbouring ``sizes`` (by
    rank), each of at least ``min_size`` points; one group when there are too few points."""
    s = np.asarray(sizes, dtype=float)
    n = s.size
    count = max(1, min(max_groups, n // max(min_size, 1)))
    groups = np.zeros(n, dtype=int)
    if count > 1:
        order = np.argsort(s, kind="stable")
        for g, chunk in enumerate(np.array_split(order, count)):
            groups[chunk] = g
    return groups


def noise_weights(resid: np.ndarray, sizes: np.ndarray,
                  groups: np.ndarray) -> tuple[np.ndarray, float]:
    """How the noise grows with the count: ``w_i = (size_i / median size)^β``, with β the
    slope of log(median absolute residual) on log(median size) over the :func:`mad_groups`,
    clipped to [0, 1] (0: the same noise at every count, as on a clock's jitter; 1: noise
    proportional to the count, as BATCHTIME's at large ITERS). β is 0 with one group, with
    sizes that are not all positive, or when the groups' typical sizes span less than
    :data:`SCALE_SPAN` (a 1..20 sweep: the noise is taken as equal). Returns ``(w, β)``."""
    ones = np.ones(resid.size)
    if groups.size == 0 or groups.max() == 0 or np.any(sizes <= 0):
        return ones, 0.0
    labels = np.unique(groups)
    g_size = np.array([float(np.median(sizes[groups == g])) for g in labels])
    g_mad = np.array([float(np.median(np.abs(resid[groups == g]))) for g in labels])
    if np.any(g_mad <= 0) or g_size.max() < SCALE_SPAN * g_size.min():
        return ones, 0.0
    beta = float(np.clip(np.polyfit(np.log(g_size), np.log(g_mad), 1)[0], 0.0, 1.0))
    return (sizes / float(np.median(sizes))) ** beta, beta


def _full_rank(a: np.ndarray) -> bool:
    return a.shape[0] >= a.shape[1] and np.linalg.matrix_rank(a) == a.shape[1]


def _closest(a: np.ndarray, ratio: np.ndarray, minimum: int) -> np.ndarray:
    """The points closest to the line (smallest ``ratio``), at least ``minimum`` of them and
    enough to identify every unknown: what a round keeps when its cut would keep too few."""
    keep = np.zeros(ratio.size, dtype=bool)
    ranked = np.argsort(ratio, kind="stable")
    keep[ranked[:minimum]] = True
    for i in ranked[minimum:]:
        if _full_rank(a[keep]):
            break
        keep[i] = True
    return keep


def coefficient_test(design: np.ndarray, y: np.ndarray, column: int) -> tuple[float, float]:
    """Coefficient ``column`` of the least-squares fit of ``y`` on ``design`` and a two-sided
    p-value: the larger of the classical Student-t one (exact for equal normal noise) and the
    one with the heteroscedasticity-consistent HC3 standard error (MacKinnon & White 1985;
    valid when the noise grows with the count, as BATCHTIME's does), so that neither small
    samples nor growing noise pass for curvature or drift."""
    from scipy import stats as sps

    n, p = design.shape
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    resid = y - design @ coef
    xtx_inv = np.linalg.pinv(design.T @ design)
    h = np.einsum("ij,jk,ik->i", design, xtx_inv, design)
    w = resid ** 2 / np.maximum(1.0 - h, 1e-12) ** 2
    hc3 = xtx_inv @ (design.T * w) @ design @ xtx_inv
    dof = max(n - p, 1)
    classical = float(resid @ resid) / dof * xtx_inv
    b = float(coef[column])
    se = math.sqrt(max(float(hc3[column, column]), float(classical[column, column]), 0.0))
    if se == 0.0:
        return b, 0.0 if b != 0.0 else 1.0
    return b, float(2.0 * sps.t.sf(abs(b / se), dof))


def bimodal_gap(z: ArrayLike) -> tuple[float, float, float]:
    """How strongly ``z`` splits into two groups: ``(statistic, gap, split)``.

    The largest gap between neighbouring sorted values with at least 20 % of the values on each
    side, in robust standard deviations of the two sides (1.4826 × the median absolute
    deviation about each side's median, averaged), times ``n / ln n`` (the largest spacing of a
    unimodal sample shrinks about as ``ln n / n``) is the statistic (compare it with
    :func:`bimodal_limit`); ``gap`` is that gap in the units of ``z`` and ``split`` its middle.
    All 0 with fewer than :data:`BIMODAL_MIN_POINTS` values.
    """
    v = np.sort(np.asarray(z, dtype=float))
    n = v.size
    if n < BIMODAL_MIN_POINTS:
        return 0.0, 0.0, 0.0
    lo = max(2, math.ceil(0.2 * n))
    gaps = np.diff(v)[lo - 1:n - lo]  # gaps[k] lies between v[lo + k - 1] and v[lo + k]
    best, best_gap, split = 0.0, 0.0, 0.0
    for k in np.argsort(gaps, kind="stable")[::-1][:5]:
        j = lo + int(k)
        left, right = v[:j], v[j:]
        spread = 0.5 * (robust_sd(left) + robust_sd(right))
        gap = float(gaps[k])
        score = gap / spread if spread > 0 else (math.inf if gap > 0 else 0.0)
        if score > best:
            best, best_gap, split = score, gap, float(v[j - 1] + v[j]) / 2
    return best * n / math.log(n), best_gap, split


def bimodal_limit(n: int) -> float:
    """The value of :func:`bimodal_gap` above which ``n`` residuals are called bimodal:
    ``13 + 28·(20/n)^0.8``, just above the 99.9th percentile of the statistic for unimodal
    samples (normal, exponential, gamma(2), log-normal(σ = 1) and uniform, cut at 5 median
    absolute deviations like the fit's residuals; 4 000–20 000 simulations at each n = 20, 30,
    50, 100, 200, 500, 1000: at most 41, 33, 25, 18, 16, 15, 13)."""
    return 13.0 + 28.0 * (20.0 / max(n, 1)) ** 0.8


@dataclass(frozen=True)
class Finding:
    """One way the points are not a straight line (:func:`straightness`): ``kind`` is
    ``dropped``, ``bimodal``, ``curved``, ``drift`` or ``unsettled``; ``message`` says it in
    words; ``alternatives`` are the solutions of the other readings of the points (the two
    lines, the two halves of the counts or of the measurement), which an honest interval
    must cover."""

    kind: str
    message: str
    alternatives: tuple[tuple[float, ...], ...] = ()


def _solve_subset(a: np.ndarray, y: np.ndarray, rows: np.ndarray) -> tuple[float, ...] | None:
    """Least-squares solution of the rows ``rows`` (a boolean mask), or None when they cannot
    identify every unknown."""
    if rows.sum() <= a.shape[1] or not _full_rank(a[rows]):
        return None
    return tuple(float(v) for v in np.linalg.lstsq(a[rows], y[rows], rcond=None)[0])


def _alternatives(a: np.ndarray, y: np.ndarray, *masks: np.ndarray) -> tuple[tuple[float, ...],
                                                                          ...]:
    found = (_solve_subset(a, y, m) for m in masks)
    return tuple(sol for sol in found if sol is not None)


def straightness(a: np.ndarray, y: np.ndarray, kept: np.ndarray, sizes: np.ndarray,
                 order: np.ndarray | None = None) -> list[Finding]:
    """Why the points are not one straight line (empty when they are), ``002`` §4.1: the mean
    square deviation says *how well* the line models the points; these say *how* it does not.

    * ``dropped``: more than :data:`DROPPED_SHARE_LIMIT` of the points are off the line (a
      second line of a minority, or no line at all); the alternative is the fit of the
      dropped points.
    * ``bimodal``: the kept residuals form two separate groups (:func:`bimodal_gap` above
      :func:`bimodal_limit`; two parallel lines), or the residuals per execution of the upper
      half of the counts do (two speeds: lines that fan out from one intercept), and the gap
      is more than :data:`STRAIGHTNESS_EFFECT` of the rise of the line (of its slope); the
      alternatives are the fits of the two groups.
    * ``curved``: a quadratic term in the counts is significant (:func:`coefficient_test` at
      :data:`STRAIGHTNESS_ALPHA`) and changes the slope by more than
      :data:`STRAIGHTNESS_EFFECT` from the smallest to the largest count; the alternatives
      are the fits of the lower and the upper half of the counts.
    * ``drift`` (with ``order``, when it is not tied to the counts): the slope changes with
      time by more than :data:`STRAIGHTNESS_EFFECT` over the measurement, significantly; the
      alternatives are the fits of the first and the second half in time.

    Effect sizes matter as much as significance: with thousands of points any systematic
    wiggle of a nanosecond is significant, and only a change that moves the slope is reported.
    """
    findings: list[Finding] = []
    n_all = y.size
    dropped = ~kept
    share = float(dropped.sum()) / n_all if n_all else 0.0
    if share > DROPPED_SHARE_LIMIT:
        findings.append(Finding(
            "dropped", f"{share:.0%} of the points are far off the line (more than a third): "
                       "they may follow two lines, not one", _alternatives(a, y, dropped)))
    ak, yk, sk = a[kept], y[kept], sizes[kept]
    n, p = ak.shape
    coef = np.linalg.lstsq(ak, yk, rcond=None)[0]
    fitted = ak @ coef
    resid = yk - fitted
    span = float(np.ptp(sk)) if sk.size else 0.0
    if span <= 0 or n < p + 4:
        return findings
    centred_all = (sizes - sk.mean()) / span
    centred = centred_all[kept]
    rate = float(np.polyfit(centred, fitted, 1)[0])  # rise of the fit over the range
    if rate == 0:
        return findings
    resid_all = y - a @ coef
    stat, gap, split = bimodal_gap(resid)
    two: tuple[np.ndarray, float] | None = None
    if stat > bimodal_limit(n) and gap > STRAIGHTNESS_EFFECT * abs(rate):
        two = (resid_all, split)  # two parallel lines
    elif np.all(sizes > 0):
        # two speeds: lines through one intercept fan out, and the residual per execution
        # splits into two groups where the counts are large
        per = resid_all / sizes
        upper = kept & (sizes >= np.median(sk))
        stat, gap, split = bimodal_gap(per[upper])
        if stat > bimodal_limit(int(upper.sum())) and \
                gap > STRAIGHTNESS_EFFECT * abs(rate) / span:
            two = (per, split)
    if two is not None:
        value, split = two
        findings.append(Finding(
            "bimodal", "the points form two separate groups (bimodal): they follow two lines, "
                       "not one",
            _alternatives(a, y, kept & (value < split), kept & (value > split))))
    b2, p2 = coefficient_test(np.column_stack([ak, centred ** 2]), yk, p)
    change = abs(2.0 * b2 / rate)  # slope at the top end minus the bottom end, over the rate
    if p2 < STRAIGHTNESS_ALPHA and change > STRAIGHTNESS_EFFECT:
        middle = float(np.median(centred))
        findings.append(Finding(
            "curved", f"the points curve: the time per execution changes by {change:.0%} "
                      "from the smallest to the largest count",
            _alternatives(a, y, kept & (centred_all <= middle), kept & (centred_all >= middle))))
    if order is not None and n >= p + 6:
        t_all = np.asarray(order, dtype=float)
        t = t_all[kept]
        if np.ptp(t) > 0:
            t0, width = float(t.min()), float(np.ptp(t))
            t = (t - t0) / width
            if abs(float(np.corrcoef(t, centred)[0, 1])) < 0.5:
                b3, p3 = coefficient_test(np.column_stack([ak, t, t * centred]), yk, p + 1)
                drift = abs(b3 / rate)
                if p3 < STRAIGHTNESS_ALPHA and drift > STRAIGHTNESS_EFFECT:
                    half = (t_all - t0) / width
                    findings.append(Finding(
                        "drift", f"the time per execution drifted by {drift:.0%} during the "
                                 "measurement",
                        _alternatives(a, y, kept & (half <= 0.5), kept & (half >= 0.5))))
    return findings


@dataclass(frozen=True)
class RobustSolution:
    """The outcome of :func:`robust_fit`.

    ``solution`` is the least-squares solution of the kept points with its intervals;
    ``start`` the L1 fit the iteration began from; ``kept``/``dropped`` index the points;
    ``readmitted`` lists points dropped in some round but kept at the end; ``iterations`` the
    rounds made; ``converged`` False when the rounds ran out; ``scale`` the median absolute
    residual (of the residuals divided by the noise model's weights) at the end and
    ``noise_power`` the model's β (:func:`noise_weights`); ``findings`` how the
    points are not straight (:func:`straightness`; empty when they are) and ``warnings`` the
    same in words.
    """

    solution: LeastSquaresSolution
    start: tuple[float, ...]
    kept: tuple[int, ...]
    dropped: tuple[int, ...]
    readmitted: tuple[int, ...]
    iterations: int
    converged: bool
    threshold: float
    scale: float
    noise_power: float
    findings: tuple[Finding, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(f.message for f in self.findings)

    @property
    def straight(self) -> bool:
        return not self.findings

    def bounds(self, column: int) -> tuple[float, float] | None:
        """The smallest and largest value of unknown ``column`` over the alternative readings
        of the points (None when the points are straight or no alternative could be solved)."""
        values = [alt[column] for f in self.findings for alt in f.alternatives]
        return (min(values), max(values)) if values else None

    @property
    def values(self) -> tuple[float, ...]:
        return self.solution.values

    def to_dict(self) -> dict[str, object]:
        return {
            **self.solution.to_dict(),
            "start": list(self.start),
            "dropped": list(self.dropped),
            "readmitted": list(self.readmitted),
            "iterations": self.iterations,
            "converged": self.converged,
            "threshold": self.threshold if math.isfinite(self.threshold) else None,
            "scale": self.scale,
            "noise_power": self.noise_power,
            "straight": self.straight,
            "warnings": list(self.warnings),
            "findings": [{"kind": f.kind, "message": f.message,
                          "alternatives": [list(alt) for alt in f.alternatives]}
                         for f in self.findings],
        }


def column_scales(a: np.ndarray) -> np.ndarray:
    """A power of two per column of ``a`` near its largest magnitude (1 for a zero or
    non-finite column): dividing by it is exact in floating point and brings every column to
    [0.5, 1] in magnitude, so that a count column reaching 10¹² beside a column of ones is not
    taken for rank-deficient (the column equilibration of Golub & Van Loan, *Matrix
    Computations*, §3.5.2; issue 27 item 2)."""
    big = np.max(np.abs(a), axis=0, initial=0.0) if a.size else np.ones(a.shape[-1])
    out = np.ones(big.shape)
    ok = np.isfinite(big) & (big > 0)
    out[ok] = np.ldexp(1.0, np.frexp(big[ok])[1])
    return out


def _unscaled(values: Sequence[float], scales: np.ndarray) -> tuple[float, ...]:
    return tuple(float(v) / float(s) for v, s in zip(values, scales))


def robust_fit(a: ArrayLike, y: ArrayLike, *, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
               confidence: float = 0.95, names: Sequence[str] | None = None,
               sizes: ArrayLike | None = None, order: ArrayLike | None = None,
               max_iterations: int = MAX_ITERATIONS, min_points: int = 3) -> RobustSolution:
    """:func:`_robust_fit` on columns scaled by :func:`column_scales`, the unknowns (values,
    intervals, start, alternatives) scaled back: the outcome is that of the unscaled system,
    without its rounding (BATCHTIME on counts up to 10¹² beside an intercept)."""
    am = np.asarray(a, dtype=float)
    if am.ndim != 2:
        raise ConfigurationError("robust fit: the matrix must be two-dimensional")
    if sizes is None and am.shape[1]:
        sizes = am[:, 0]
    scales = column_scales(am) if np.all(np.isfinite(am)) else np.ones(am.shape[1])
    rob = _robust_fit(am / scales, y, threshold=threshold, confidence=confidence, names=names,
                      sizes=sizes, order=order, max_iterations=max_iterations,
                      min_points=min_points)
    if np.all(scales == 1.0):
        return rob
    sol = rob.solution
    solution = replace(
        sol, values=_unscaled(sol.values, scales), se=_unscaled(sol.se, scales),
        ci=tuple((lo / float(s), hi / float(s)) for (lo, hi), s in zip(sol.ci, scales)))
    findings = tuple(replace(f, alternatives=tuple(_unscaled(alt, scales)
                                                   for alt in f.alternatives))
                     for f in rob.findings)
    return replace(rob, solution=solution, start=_unscaled(rob.start, scales),
                   findings=findings)


def _robust_fit(a: ArrayLike, y: ArrayLike, *, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
                confidence: float = 0.95, names: Sequence[str] | None = None,
                sizes: ArrayLike | None = None, order: ArrayLike | None = None,
                max_iterations: int = MAX_ITERATIONS, min_points: int = 3) -> RobustSolution:
    """The robust fit of ``002`` §4.1, for a line (``A = [x, 1]``) or a system (§5, eq. 7).

    1. Start from the L1 fit (:func:`lad_fit`), which interrupts do not pull (of a seeded
       random subsample of :data:`LAD_SUBSAMPLE` points when there are more).
    2. Residuals of *all* points from the current fit; the scale is the median absolute
       residual (the MAD about the line; the median, not the mean, as ``002`` §4.1 footnote 2
       says). When the counts (``sizes``, default the first column) span decades, as an
       ITERS sweep's do, the noise is allowed to grow with the count as a power law fitted to
       the median residual of groups of neighbouring counts (:func:`noise_weights`), so that
       the largest counts, whose noise is largest, do not look like outliers.
    3. Keep the points within ``threshold`` × the scale (× their weight), refit by least
       squares,
       and repeat from 2 until the kept set stops changing (at most ``max_iterations``
       rounds). Every round judges every point, so a point dropped early is re-admitted when
       the better line brings it within the cut.

    The cut: :data:`DEFAULT_OUTLIER_THRESHOLD` × the median absolute residual. Points are
    never dropped below ``min_points`` (≥ 3, ≥ unknowns + 1) or half of the points, nor so
    that the kept rows cannot identify every unknown; such a round is not applied.
    ``threshold = inf`` keeps every point. ``order`` (the time order of the points) enables the
    drift check of :func:`straightness`, whose findings are the ``warnings``.
    """
    check_confidence(confidence)
    if not threshold > 1.0:
        raise ConfigurationError(f"outlier threshold must be greater than 1, got {threshold}")
    if max_iterations < 0:
        raise ConfigurationError(f"max_iterations must be ≥ 0, got {max_iterations}")
    am = np.asarray(a, dtype=float)
    if am.ndim != 2:
        raise ConfigurationError("robust fit: the matrix must be two-dimensional")
    yv = np.asarray(y, dtype=float).ravel()
    n, p = am.shape
    if yv.size != n:
        raise ConfigurationError(f"robust fit: {n} rows but {yv.size} values")
    if not (np.all(np.isfinite(am)) and np.all(np.isfinite(yv))):
        raise MeasurementError("fit: the points contain NaN or infinite values")
    if n <= p:
        raise MeasurementError(f"fit: needs at least {p + 1} points, got {n}")
    if not _full_rank(am):
        # let the least-squares solver name the unknowns that cannot be separated
        solve_least_squares(am, yv, confidence, names)
    size_v = am[:, 0] if sizes is None else np.asarray(sizes, dtype=float).ravel()
    groups = mad_groups(size_v)
    minimum = max(3, int(min_points), p + 1, (n + 1) // 2)
    # Relative floor of the scale: far below any real noise, far above rounding.
    floor = 1e-9 * max(float(np.max(np.abs(yv))), 1e-300)
    if n > LAD_SUBSAMPLE:  # the start needs robustness, not precision: a seeded subsample
        pick = np.sort(np.random.default_rng(0).choice(n, LAD_SUBSAMPLE, replace=False))
        start = lad_fit(am[pick], yv[pick]) if _full_rank(am[pick]) else lad_fit(am, yv)
    else:
        start = lad_fit(am, yv)
    keep = np.ones(n, dtype=bool)
    ever_dropped = np.zeros(n, dtype=bool)
    seen: set[bytes] = set()
    iterations = 0
    converged = True
    coef = start
    if math.isfinite(threshold):
        converged = False
        for iterations in range(1, max_iterations + 1):
            resid = yv - am @ coef
            weights, _ = noise_weights(resid, size_v, groups)
            scale = max(float(np.median(np.abs(resid) / weights)), floor)
            ratio = np.abs(resid) / (scale * weights)
            candidate = ratio <= threshold
            if candidate.sum() < minimum or not _full_rank(am[candidate]):
                candidate = _closest(am, ratio, minimum)
            if iterations > 1 and np.array_equal(candidate, keep):
                converged = True
                break
            key = candidate.tobytes()
            if key in seen:
                # The kept set cycles: points on the edge of the cut go in and out in turn.
                # Keep them (the union of the last two sets) and stop.
                keep = keep | candidate
                coef = np.linalg.lstsq(am[keep], yv[keep], rcond=None)[0]
                converged = True
                break
            seen.add(key)
            keep = candidate
            ever_dropped |= ~keep
            coef = np.linalg.lstsq(am[keep], yv[keep], rcond=None)[0]
    sol = solve_least_squares(am[keep], yv[keep], confidence, names)
    resid = yv - am @ np.asarray(sol.values)
    findings = straightness(am, yv, keep, size_v,
                            None if order is None else np.asarray(order, dtype=float))
    if not converged and math.isfinite(threshold):
        findings.append(Finding(
            "unsettled", f"the robust fit did not settle on one set of points in {iterations} "
                         "rounds: the points are not one clear line",
            _alternatives(am, yv, np.ones(n, dtype=bool))))
    weights, power = noise_weights(resid, size_v, groups)
    return RobustSolution(
        solution=sol,
        start=tuple(float(v) for v in start),
        kept=tuple(int(i) for i in np.flatnonzero(keep)),
        dropped=tuple(int(i) for i in np.flatnonzero(~keep)),
        readmitted=tuple(int(i) for i in np.flatnonzero(ever_dropped & keep)),
        iterations=iterations,
        converged=converged,
        threshold=float(threshold),
        scale=float(np.median(np.abs(resid) / weights)),
        noise_power=power,
        findings=tuple(findings),
    )


@dataclass(frozen=True)
class RobustFit:
    """The outcome of :func:`robust_ols`: the final ``fit`` of the kept points, the ``initial``
    fit of all points, the indices of the ``dropped`` points (into the original ``x``), the
    ``threshold`` used, and the details of :class:`RobustSolution` (``robust``): re-admitted
    points, rounds, the noise scale, and the ``warnings`` when the points are not straight."""

    fit: LineFit
    initial: LineFit
    dropped: tuple[int, ...]
    kept: tuple[int, ...]
    threshold: float
    robust: RobustSolution | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.robust.warnings if self.robust is not None else ()

    @property
    def straight(self) -> bool:
        return not self.warnings

    @property
    def readmitted(self) -> tuple[int, ...]:
        return self.robust.readmitted if self.robust is not None else ()

    def slope_bounds(self) -> tuple[float, float] | None:
        """The range of the slope over the other readings of points that are not straight
        (:meth:`RobustSolution.bounds`); None when they are straight."""
        return self.robust.bounds(0) if self.robust is not None else None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            **self.fit.to_dict(),
            "dropped": list(self.dropped),
            "threshold": self.threshold if math.isfinite(self.threshold) else None,
            "initial": self.initial.to_dict(),
        }
        if self.robust is not None:
            out.update(readmitted=list(self.robust.readmitted),
                       iterations=self.robust.iterations, converged=self.robust.converged,
                       scale=self.robust.scale, noise_power=self.robust.noise_power,
                       straight=self.straight, warnings=list(self.warnings))
        return out


def outlier_mask(residuals: ArrayLike, threshold: float = DEFAULT_OUTLIER_THRESHOLD,
                 scale_floor: float = 0.0) -> np.ndarray:
    """True for residuals whose absolute value exceeds ``threshold`` × the median absolute one
    (one round of the cut of :func:`robust_fit`, with one group).

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
               threshold: float = DEFAULT_OUTLIER_THRESHOLD,
               max_rounds: int = MAX_ITERATIONS, min_points: int = 3,
               order: ArrayLike | None = None) -> RobustFit:
    """The robust line of ``002`` §4.1: :func:`robust_fit` with ``A = [x, 1]``.

    ``fit`` is the ordinary least-squares line (:func:`ols`) of the kept points, ``initial``
    that of all points. ``order`` (the time order of the points, e.g. the sample index) lets
    the fit warn about drift.
    """
    xa, ya = _points(x, y, 3)
    if np.ptp(xa) == 0:
        raise MeasurementError("fit: all x values are equal, the slope is undefined")
    initial = ols(xa, ya, confidence)
    rob = robust_fit(np.column_stack([xa, np.ones_like(xa)]), ya, threshold=threshold,
                     confidence=confidence, names=("slope", "intercept"),
                     max_iterations=max_rounds, min_points=min_points, order=order)
    kept = np.asarray(rob.kept, dtype=int)
    fit = ols(xa[kept], ya[kept], confidence) if kept.size < xa.size else initial
    return RobustFit(fit=fit, initial=initial, dropped=rob.dropped, kept=rob.kept,
                     threshold=float(threshold), robust=rob)


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
    # with at least as many rows as columns the thin SVD has every right singular vector and
    # no n×n factor (100,000 rounds of `blocks` asked numpy for 74.5 GiB: issue 27 item 13)
    _, sv, vt = np.linalg.svd(a, full_matrices=a.shape[0] < a.shape[1])
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
