"""Wilcoxon rank tests and Hodges–Lehmann intervals, as R 4.2's ``wilcox.test`` defines them.

Sources: the R 4.2 documentation of ``wilcox.test``, ``pwilcox``/``qwilcox`` and
``psignrank``/``qsignrank`` (R Core Team, ``?wilcox.test``), and the definitions they follow:
Bauer (1972) "Constructing confidence sets using rank statistics", JASA 67, 687–690, and
Hollander & Wolfe (1973, 1999) *Nonparametric Statistical Methods* §3–4 (Hodges–Lehmann
estimates, distribution-free intervals from the sorted Walsh averages / pairwise differences).
The ratio-of-medians interval for large samples is Bonett & Price (2002) "Statistical inference
for a linear function of medians", Psychological Methods 7(3), 370–383, in the form Bonett's
own ``statpsych::ci.ratio.median2`` computes it.

Two-sample rank-sum test (:func:`wilcoxon_two_sample`), R's rules:

* ``W`` = (sum of the ranks of ``x − mu`` in the pooled sample ``c(x − mu, y)``) − n_x(n_x+1)/2,
  i.e. the number of pairs with ``x_i − mu > y_j`` (ties count ½).
* exact by default when n_x < 50 and n_y < 50, and only without ties (``exact=True`` with ties
  falls back to the normal approximation, as R does with a warning; here with a ``note``);
  two-sided exact p = min(1, 2·P(W' ≥ W)) if W > n_x n_y/2 else min(1, 2·P(W' ≤ W)).
* otherwise the normal approximation: z = (W − n_x n_y/2 − CORRECTION)/σ,
  σ² = n_x n_y/12 · ((N+1) − Σ(t³−t)/(N(N−1))) with t the sizes of the tie groups,
  CORRECTION = sign(W − n_x n_y/2)·½ two-sided, +½ "greater", −½ "less" (``correct=True``).

Intervals (``conf.int=TRUE``), two-sided:

* exact: the sorted pairwise differences D (or Walsh averages), qu = qwilcox(α/2) (1 if 0),
  [D(qu), D(n_x n_y − qu + 1)], achieved level 1 − 2·pwilcox(qu − 1); R reports that level
  instead of the requested one when achieved α − α > α/2
  (:attr:`ShiftInterval.reported_confidence`).
* approximate: the shifts d where R's corrected normal statistic of ``c(x − d, y)`` crosses the
  normal quantiles. That statistic is a step function of d that jumps exactly at the pairwise
  differences (Walsh averages for one sample), so the endpoints are pairwise differences: R's
  ``uniroot`` finds them within ``tol.root = 1e-4`` (an *absolute* tolerance, coarse for data in
  seconds), this module brackets them with :func:`scipy.optimize.brentq` and then reads off
  the difference at the jump exactly, i.e. R's answer as ``tol.root → 0``.
* estimate: the Hodges–Lehmann estimate, the median of all pairwise differences (Walsh averages).
  R's exact branch returns exactly this; its approximate branch returns a ``uniroot`` root of
  the uncorrected statistic, which is the same number when the number of differences is odd and
  an arbitrary point between the two middle differences when it is even (R 4.2 gives 0.3025 for
  the Hollander–Wolfe example where the median of differences is 0.305): the median is used.

Degenerate input never raises: when every pooled value is tied the normal statistic is 0/0 and
is taken as z = 0 (p = 1); when all pairwise differences are equal the interval collapses to
that value. Non-finite values raise ``ValueError`` (R drops ``NA``; a benchmark time that is not
a number is an error).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

_STANDARD_NORMAL = NormalDist()


def _ndtr(z: float) -> float:
    """Φ(z), the standard normal distribution function (stdlib, through ``erfc``: accurate in
    both tails). scipy is not imported here, so that ``steadybench ab``, whose looks need only
    this module, starts without it."""
    return _STANDARD_NORMAL.cdf(float(z))


def _ndtri(p: float) -> float:
    """Φ⁻¹(p) (Wichura's AS 241, as R's ``qnorm``); ±inf at p = 0 or 1, as scipy's ``ndtri``."""
    p = float(p)
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _STANDARD_NORMAL.inv_cdf(p)

#: largest number of pairwise differences (or Walsh averages) the intervals materialise
#: (32 MB of float64); above it use :func:`ratio_interval`, which switches to Bonett–Price
PAIRWISE_LIMIT = 4_000_000
#: values a side of the subsample that :func:`ratio_interval` uses above the limit
SUBSAMPLE = 2_000
#: its seed: the same input always gives the same interval
SUBSAMPLE_SEED = 20021

#: R's default exactness bound: exact when every sample size is below it (and no ties)
EXACT_BELOW = 50

#: R's tolerance in ``qwilcox``/``qsignrank`` (``10 * DBL_EPSILON``)
_Q_FUZZ = 10 * np.finfo(float).eps

#: memory bound (float64 cells) of the exact rank-sum distribution (200 MB)
_DP_CELLS = 25_000_000

ALTERNATIVES = ("two-sided", "greater", "less")

ArrayLike = Sequence[float] | np.ndarray


# --------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class RankTestResult:
    """A Wilcoxon test. ``statistic`` is R's W (two-sample) or V (signed rank); ``method`` is
    ``"exact"`` or ``"normal approximation"``; ``z`` the corrected normal deviate (None when
    exact); ``n_y`` is None for the signed-rank test, whose ``n_x`` counts the non-zero
    differences (``zeros`` were dropped, as R does)."""

    statistic: float
    p_value: float
    alternative: str
    method: str
    n_x: int
    n_y: int | None
    z: float | None = None
    ties: bool = False
    zeros: int = 0
    note: str = ""


@dataclass(frozen=True)
class ShiftInterval:
    """Hodges–Lehmann estimate of a location shift and its two-sided interval.

    ``method``: ``"exact"``, ``"normal approximation"`` or ``"degenerate"`` (one-sample data
    with no usable spread, see :func:`signed_rank_interval`). ``confidence`` is the requested
    level; ``achieved_confidence`` the level the interval
    actually has: for an exact interval 1 − 2·P(W ≤ qu − 1) (its exact coverage for continuous
    data, ≥ ``confidence`` unless the request is not achievable at this sample size), for an
    approximate one-sample interval the lowered level when R lowers it, else None.
    ``reported_confidence`` is the level R prints (``attr(conf.int, "conf.level")``): the
    request, unless it is not achievable — exact: achieved α − α > α/2, then 1 − achieved α
    (one-sample: 1 − signif(achieved α, 2)); approximate one-sample: R's doubled α.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float | None
    method: str
    reported_confidence: float
    note: str = ""


def _reported(conf: float, achieved: float, one_sample: bool) -> float:
    """R's conf.level attribute of an exact interval (see :class:`ShiftInterval`)."""
    alpha, achieved_alpha = 1.0 - conf, 1.0 - achieved
    if achieved_alpha - alpha <= alpha / 2:
        return conf
    if one_sample:
        return 1.0 - float(f"{achieved_alpha:.2g}")
    return achieved


@dataclass(frozen=True)
class RatioInterval:
    """Interval of the scale ratio BASE/NEW of positive times (> 1: NEW is faster)."""

    estimate: float
    low: float
    high: float
    confidence: float
    achieved_confidence: float | None
    method: str
    note: str = ""


# --------------------------------------------------------------------------------------------
# helpers


def finite_sample(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a flat float array: at least one value, all finite (ValueError else)."""
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size < 1:
        raise ValueError(f"{name}: need at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: values must be finite (got NaN or infinity)")
    return arr


def _alternative(alternative: str) -> str:
    alt = "two-sided" if alternative == "two.sided" else alternative
    if alt not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alt


def _confidence(confidence: float) -> float:
    if not (isinstance(confidence, int | float) and 0.0 < float(confidence) < 1.0):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _tie_groups(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start index, size) of each run of equal values in a sorted array."""
    n = sorted_values.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cut = np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1
    starts = np.concatenate(([0], cut))
    sizes = np.diff(np.concatenate((starts, [n])))
    return starts, sizes


def _tie_term(sizes: np.ndarray) -> float:
    """Σ (t³ − t) over tie groups (float: no integer overflow)."""
    t = sizes[sizes > 1].astype(float)
    return float(np.sum(t * t * t - t))


def _rank_sum(first: np.ndarray, second: np.ndarray) -> tuple[float, float, bool]:
    """Sum of the mid-ranks (R's ``rank``) of ``first`` in ``c(first, second)``, Σ(t³ − t) of
    the pooled sample, and whether it has ties. O(N log N) time, O(N) memory."""
    pooled = np.concatenate((first, second))
    order = np.argsort(pooled)
    srt = pooled[order]
    starts, sizes = _tie_groups(srt)
    ties = bool(sizes.size < pooled.size)
    if not ties:
        rank_sum = float(np.sum(np.flatnonzero(order < first.size), dtype=float)) + first.size
        return rank_sum, 0.0, False
    mid = starts + (sizes + 1) / 2.0  # 1-based mean rank of each group
    ranks_sorted = np.repeat(mid, sizes)
    rank_sum = float(np.sum(ranks_sorted[order < first.size]))
    return rank_sum, _tie_term(sizes), True


def _norm_p(z: float, alternative: str) -> float:
    if alternative == "less":
        return _ndtr(z)
    if alternative == "greater":
        return _ndtr(-z)
    return min(1.0, 2.0 * min(_ndtr(z), _ndtr(-z)))


def _correction(dz: float, alternative: str, correct: bool) -> float:
    if not correct:
        return 0.0
    if alternative == "greater":
        return 0.5
    if alternative == "less":
        return -0.5
    return 0.5 * float(np.sign(dz))


def _zscore(numerator: float, sigma: float) -> float:
    """numerator/σ, with 0/0 (every value tied: the statistic is its null mean) taken as 0."""
    if sigma > 0:
        return numerator / sigma
    if numerator == 0:
        return 0.0
    return math.copysign(math.inf, numerator)


# --------------------------------------------------------------------------------------------
# exact null distributions (R's dwilcox / dsignrank), as probabilities


@lru_cache(maxsize=128)
def _wilcox_pmf(m: int, n: int) -> np.ndarray:
    """P(W = k), k = 0..m·n, W = #{x_i > y_j} for m x's and n y's, all orders equally likely
    (R's ``dwilcox``). Read-only array.

    Recurrence on the largest pooled value (Mann & Whitney 1947): it is an x with probability
    m/(m+n) and then adds n to W, else a y: p_{m,n}(k) = m/(m+n)·p_{m−1,n}(k−n) +
    n/(m+n)·p_{m,n−1}(k). Only additions of non-negative terms, so every probability, tails
    included, has full relative precision (the Gaussian-binomial product
    ∏ (1 − q^{n+i})/(1 − q^i) is exact algebra but loses everything to cancellation in floating
    point beyond ~150 a side). Memory max(m,n)·min(m,n)²/2 floats: ``ValueError`` above
    :data:`_DP_CELLS` (only reachable with ``exact=True`` on large samples; R's own ``cwilcox``
    needs even more).
    """
    if m > n:
        m, n = n, m  # the distribution is symmetric in (m, n); m = the smaller
    if n * m * m // 2 > _DP_CELLS:
        raise ValueError(f"exact rank-sum distribution for sizes {m} and {n} needs more than "
                         f"{_DP_CELLS:,} cells; use exact=None or exact=False (normal "
                         "approximation)")
    # prev[j] = p_{i-1, j}, arrays over k; i runs over the larger size, j over the smaller
    prev = [np.ones(1) for _ in range(m + 1)]
    for i in range(1, n + 1):
        cur = [np.ones(1)]
        for j in range(1, m + 1):
            arr = np.zeros(i * j + 1)
            # the largest value is on the i side (prob i/(i+j)) and beats the j others
            arr[j:j + prev[j].size] += (i / (i + j)) * prev[j]
            arr[:cur[j - 1].size] += (j / (i + j)) * cur[j - 1]
            cur.append(arr)
        prev = cur
    out = prev[m]
    out.setflags(write=False)
    return out


@lru_cache(maxsize=256)
def _signrank_pmf(n: int) -> np.ndarray:
    """P(V = k), k = 0..n(n+1)/2, V = sum of the ranks given a + sign, each sign a fair coin
    (R's ``dsignrank``): p_n(k) = ½·p_{n−1}(k) + ½·p_{n−1}(k − n)."""
    total = n * (n + 1) // 2
    out = np.zeros(total + 1)
    out[0] = 1.0
    top = 0
    for r in range(1, n + 1):
        shifted = out[:top + 1].copy()
        out[:top + r + 1] *= 0.5
        out[r:r + top + 1] += 0.5 * shifted
        top += r
    out.setflags(write=False)
    return out


def _lower(pmf: np.ndarray, q: float) -> float:
    """P(S ≤ q) (R: ``q = floor(q + 1e-7)``)."""
    k = math.floor(q + 1e-7)
    if k < 0:
        return 0.0
    if k >= pmf.size - 1:
        return 1.0
    return float(np.sum(pmf[:k + 1]))


def _upper(pmf: np.ndarray, q: float) -> float:
    """P(S ≥ q), summed over the upper tail itself (no 1 − cdf cancellation)."""
    k = math.ceil(q - 1e-7)
    if k <= 0:
        return 1.0
    if k > pmf.size - 1:
        return 0.0
    return float(np.sum(pmf[k:]))


def _quantile(pmf: np.ndarray, p: float) -> int:
    """R's ``qwilcox``/``qsignrank``: the smallest q with P(S ≤ q) ≥ p − 10ε for p ≤ ½; for
    p > ½ (R counts from the top) max − (smallest q' with P(S ≤ q') > 1 − p + 10ε)."""
    cdf = np.cumsum(pmf)
    top = pmf.size - 1
    if p <= 0.5:
        return min(int(np.searchsorted(cdf, p - _Q_FUZZ, side="left")), top)
    q = min(int(np.searchsorted(cdf, 1.0 - p + _Q_FUZZ, side="right")), top)
    return top - q


def pwilcox(q: float, m: int, n: int, lower_tail: bool = True) -> float:
    """R's ``pwilcox(q, m, n, lower.tail)``: P(W ≤ q), or P(W > q) when not ``lower_tail``."""
    pmf = _wilcox_pmf(int(m), int(n))
    if lower_tail:
        return _lower(pmf, q)
    return _upper(pmf, math.floor(q + 1e-7) + 1)


def qwilcox(p: float, m: int, n: int) -> int:
    """R's ``qwilcox(p, m, n)``."""
    return _quantile(_wilcox_pmf(int(m), int(n)), p)


def psignrank(q: float, n: int, lower_tail: bool = True) -> float:
    """R's ``psignrank(q, n, lower.tail)``."""
    pmf = _signrank_pmf(int(n))
    if lower_tail:
        return _lower(pmf, q)
    return _upper(pmf, math.floor(q + 1e-7) + 1)


def qsignrank(p: float, n: int) -> int:
    """R's ``qsignrank(p, n)``."""
    return _quantile(_signrank_pmf(int(n)), p)


# --------------------------------------------------------------------------------------------
# two-sample rank-sum test


def wilcoxon_two_sample(x: ArrayLike, y: ArrayLike, alternative: str = "two-sided",
                        exact: bool | None = None, correct: bool = True,
                        mu: float = 0.0) -> RankTestResult:
    """R's ``wilcox.test(x, y, alternative, mu, exact, correct)`` (rank-sum / Mann–Whitney).

    "greater" means x − mu is stochastically larger than y. O((n_x + n_y) log) time and O(n)
    memory in the normal approximation: 10⁶ values a side take well under a second.
    ``exact=True`` on large samples raises ``ValueError`` once the exact distribution would
    need more than ~200 MB (max·min²/2 cells; e.g. beyond ~370 a side).
    """
    alt = _alternative(alternative)
    xs, ys = finite_sample(x, "x"), finite_sample(y, "y")
    if not math.isfinite(mu):
        raise ValueError("mu must be finite")
    nx, ny = xs.size, ys.size
    rank_sum, tie_term, ties = _rank_sum(xs - mu, ys)
    w = rank_sum - nx * (nx + 1) / 2.0
    want_exact = exact if exact is not None else (nx < EXACT_BELOW and ny < EXACT_BELOW)
    note = ""
    if want_exact and not ties:
        pmf = _wilcox_pmf(nx, ny)
        if alt == "greater":
            p = _upper(pmf, w)
        elif alt == "less":
            p = _lower(pmf, w)
        else:
            p = min(1.0, 2.0 * (_upper(pmf, w) if w > nx * ny / 2.0 else _lower(pmf, w)))
        return RankTestResult(statistic=w, p_value=p, alternative=alt, method="exact", n_x=nx,
                              n_y=ny)
    if want_exact:
        note = "cannot compute exact p-value with ties: normal approximation"
    n_all = nx + ny
    dz = w - nx * ny / 2.0
    sigma2 = (nx * ny / 12.0) * ((n_all + 1) - tie_term / (n_all * (n_all - 1)))
    sigma = math.sqrt(max(sigma2, 0.0))
    z = _zscore(dz - _correction(dz, alt, correct), sigma)
    if sigma == 0:
        note = (note + "; " if note else "") + "all values tied: z taken as 0"
    return RankTestResult(statistic=w, p_value=_norm_p(z, alt), alternative=alt,
                          method="normal approximation", n_x=nx, n_y=ny, z=z, ties=ties,
                          note=note)


def _sorted_median(values: np.ndarray) -> float:
    k = values.size
    return float(0.5 * (values[(k - 1) // 2] + values[k // 2]))


def _check_pairs(count: int, what: str) -> None:
    if count > PAIRWISE_LIMIT:
        raise ValueError(
            f"{what}: {count:,} pairwise values exceed PAIRWISE_LIMIT = {PAIRWISE_LIMIT:,} "
            "(memory O(n²)); use ratio_interval, which switches to the O(n) Bonett–Price "
            "interval of a ratio of medians for samples this large")


def _step_root(values: np.ndarray, g, lo: float, hi: float, guess: int | None = None) -> float:
    """The jump of the non-increasing step function ``g`` (R's statistic minus the quantile)
    between ``lo`` (g > 0) and ``hi`` (g < 0). ``g`` only jumps at the sorted ``values``.

    :func:`scipy.optimize.brentq` brackets the sign change as R's ``uniroot`` does; the jump
    is then read off exactly: the smallest value v near the bracket with g ≤ 0 just above v
    (at the midpoint to the next value, where g takes its value between the jumps). ``guess``
    (the index the normal approximation predicts) narrows the starting bracket to a few values
    when g confirms the sign change there, so brentq needs a handful of steps, not ~30."""
    xtol = max((hi - lo) * 1e-9, np.finfo(float).tiny)
    if guess is not None:
        i0, i1 = max(guess - 4, 1), min(guess + 4, values.size - 2)
        if i0 < i1:
            a = 0.5 * (values[i0 - 1] + values[i0])
            b = 0.5 * (values[i1] + values[i1 + 1])
            if lo < a < b < hi and g(a) > 0 > g(b):
                lo, hi = a, b
                gaps = np.diff(np.unique(values[i0 - 1:i1 + 2]))
                gaps = gaps[gaps > 0]
                if gaps.size:
                    xtol = max(min(xtol, 0.25 * float(gaps.min())), np.finfo(float).tiny)
    from scipy import optimize

    r = float(optimize.brentq(g, lo, hi, xtol=xtol, rtol=4 * np.finfo(float).eps,
                              maxiter=500))
    reach = 4 * (xtol + 4 * np.finfo(float).eps * abs(r))
    first = int(values.searchsorted(r - reach, side="left"))
    last = int(values.searchsorted(r + reach, side="right"))
    for v in np.unique(values[first:last]):
        after = int(values.searchsorted(v, side="right"))
        if after >= values.size:
            return float(v)
        mid = 0.5 * (v + values[after])
        if v < mid < values[after] and g(mid) <= 0:
            return float(v)
    near = min(max(int(values.searchsorted(r)), 1), values.size - 1)
    cands = values[near - 1:near + 1]
    return float(cands[np.argmin(np.abs(cands - r))])


def shift_interval(x: ArrayLike, y: ArrayLike, confidence: float = 0.95,
                   exact: bool | None = None, correct: bool = True) -> ShiftInterval:
    """Hodges–Lehmann estimate of the shift x − y and R's two-sided ``conf.int``.

    R's ``wilcox.test(x, y, conf.int=TRUE, conf.level=confidence)``; see the module notes for
    the approximate interval (exact jump points instead of ``uniroot`` with tolerance 1e-4) and
    the estimate (always the median of the pairwise differences). Raises ``ValueError`` above
    :data:`PAIRWISE_LIMIT` differences.
    """
    conf = _confidence(confidence)
    xs, ys = finite_sample(x, "x"), finite_sample(y, "y")
    nx, ny = xs.size, ys.size
    _check_pairs(nx * ny, "shift_interval")
    diffs = np.subtract.outer(xs, ys).ravel()
    diffs.sort()
    estimate = _sorted_median(diffs)
    pooled = np.sort(np.concatenate((xs, ys)))
    ties = bool(np.any(pooled[1:] == pooled[:-1]))
    want_exact = exact if exact is not None else (nx < EXACT_BELOW and ny < EXACT_BELOW)
    alpha = 1.0 - conf
    if want_exact and not ties:
        pmf = _wilcox_pmf(nx, ny)
        qu = _quantile(pmf, alpha / 2.0) or 1
        ql = nx * ny - qu
        achieved = 1.0 - 2.0 * _lower(pmf, qu - 1)
        return ShiftInterval(estimate=estimate, low=float(diffs[qu - 1]),
                             high=float(diffs[ql]), confidence=conf,
                             achieved_confidence=achieved, method="exact",
                             reported_confidence=_reported(conf, achieved, one_sample=False))
    note = "cannot compute exact interval with ties: normal approximation" if want_exact else ""
    low, high = _approx_two_sample(xs, ys, diffs, alpha, correct)
    return ShiftInterval(estimate=estimate, low=low, high=high, confidence=conf,
                         achieved_confidence=None, method="normal approximation",
                         reported_confidence=conf, note=note)


def _approx_two_sample(xs: np.ndarray, ys: np.ndarray, diffs: np.ndarray, alpha: float,
                       correct: bool) -> tuple[float, float]:
    nx, ny = xs.size, ys.size
    nm, n_all = nx * ny, nx + ny
    denom = n_all * (n_all - 1)
    # away from the differences only the ties inside x and inside y count
    base_ties = _tie_term(_tie_groups(np.sort(xs))[1]) + _tie_term(_tie_groups(np.sort(ys))[1])
    sigma0 = math.sqrt((nm / 12.0) * ((n_all + 1) - base_ties / denom))

    half = 0.5 if correct else 0.0
    centre = nm / 2.0

    def stat(d: float) -> float:
        """R's W(d): the corrected normal statistic of c(x − d, y)."""
        hi = int(diffs.searchsorted(d, side="right"))
        if hi and diffs[hi - 1] == d:  # a difference: rank c(x − d, y) as R does
            rank_sum, tie_term, _ = _rank_sum(xs - d, ys)
            dz = rank_sum - nx * (nx + 1) / 2.0 - centre
            sigma = math.sqrt(max((nm / 12.0) * ((n_all + 1) - tie_term / denom), 0.0))
            return _zscore(dz - _correction(dz, "two-sided", correct), sigma)
        # elsewhere W(d) = #{differences > d} and only ties within x and within y count
        dz = (nm - hi) - centre
        return (dz - half if dz > 0 else dz + half if dz < 0 else 0.0) / sigma0

    mumin, mumax = float(diffs[0]), float(diffs[-1])
    w_min, w_max = stat(mumin), stat(mumax)

    def root(zq: float) -> float:
        if w_min - zq <= 0:
            return mumin
        if w_max - zq >= 0:
            return mumax
        guess = round(nm - (centre + zq * sigma0))
        return _step_root(diffs, lambda d: stat(d) - zq, mumin, mumax, guess)

    return root(-_ndtri(alpha / 2.0)), root(_ndtri(alpha / 2.0))


# --------------------------------------------------------------------------------------------
# one-sample signed-rank test


def _nonzero(d: ArrayLike, mu: float) -> tuple[np.ndarray, int]:
    arr = finite_sample(d, "d") - mu
    keep = arr != 0
    return arr[keep], int(arr.size - np.count_nonzero(keep))


def _signed_rank_stat(v: np.ndarray) -> tuple[float, float, bool]:
    """V = Σ ranks of |v| over v > 0 (mid-ranks), Σ(t³ − t) of |v|, ties?"""
    a = np.abs(v)
    order = np.argsort(a)
    srt = a[order]
    starts, sizes = _tie_groups(srt)
    ties = bool(sizes.size < a.size)
    if ties:
        ranks_sorted = np.repeat(starts + (sizes + 1) / 2.0, sizes)
    else:
        ranks_sorted = np.arange(1, a.size + 1, dtype=float)
    stat = float(np.sum(ranks_sorted[v[order] > 0]))
    return stat, _tie_term(sizes), ties


def signed_rank(d: ArrayLike, alternative: str = "two-sided", exact: bool | None = None,
                correct: bool = True, mu: float = 0.0) -> RankTestResult:
    """R's one-sample ``wilcox.test(d, alternative, mu, exact, correct)`` (signed rank).

    Differences equal to ``mu`` are dropped (R's rule); exact when fewer than 50 remain and
    there are neither ties nor zeros; else the normal approximation
    z = (V − n(n+1)/4 − CORRECTION)/σ, σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48.
    """
    alt = _alternative(alternative)
    if not math.isfinite(mu):
        raise ValueError("mu must be finite")
    v, zeros = _nonzero(d, mu)
    n = v.size
    stat, tie_term, ties = _signed_rank_stat(v)
    want_exact = exact if exact is not None else n < EXACT_BELOW
    if want_exact and not ties and not zeros:
        pmf = _signrank_pmf(n)
        if alt == "greater":
            p = _upper(pmf, stat)
        elif alt == "less":
            p = _lower(pmf, stat)
        else:
            p = min(1.0, 2.0 * (_upper(pmf, stat) if stat > n * (n + 1) / 4.0
                                else _lower(pmf, stat)))
        return RankTestResult(statistic=stat, p_value=p, alternative=alt, method="exact",
                              n_x=n, n_y=None)
    notes = []
    if want_exact and ties:
        notes.append("cannot compute exact p-value with ties")
    if want_exact and zeros:
        notes.append("cannot compute exact p-value with zeroes")
    dz = stat - n * (n + 1) / 4.0
    sigma = math.sqrt(max(n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0, 0.0))
    if sigma == 0:
        notes.append("no non-zero differences: z taken as 0")
    z = _zscore(dz - _correction(dz, alt, correct), sigma)
    return RankTestResult(statistic=stat, p_value=_norm_p(z, alt), alternative=alt,
                          method="normal approximation", n_x=n, n_y=None, z=z, ties=ties,
                          zeros=zeros, note="; ".join(notes))


def _walsh(v: np.ndarray) -> np.ndarray:
    """Sorted Walsh averages (v_i + v_j)/2, i ≤ j."""
    i, j = np.triu_indices(v.size)
    w = (v[i] + v[j]) / 2.0
    w.sort()
    return w


def signed_rank_interval(d: ArrayLike, confidence: float = 0.95, exact: bool | None = None,
                         correct: bool = True) -> ShiftInterval:
    """Hodges–Lehmann (pseudo)median of ``d`` and R's one-sample two-sided ``conf.int``.

    R's ``wilcox.test(d, conf.int=TRUE, conf.level=confidence)``: zeros are dropped first (as R
    does); exact: sorted Walsh averages A, qu = qsignrank(α/2, n) (1 if 0),
    [A(qu), A(n(n+1)/2 − qu + 1)]; approximate: R's root finding, including its doubling of α
    when the requested level is not reachable (then ``achieved_confidence`` is the lowered
    level). Estimate: the median of the Walsh averages. Degenerate cases (R returns NaN for the
    approximate ones): no non-zero value → estimate = low = high = 0; every non-zero value equal
    (and the approximation in use) → low = high = that value; a single non-zero value with the
    approximation → the whole line (−inf, inf), midrange estimate, achieved confidence 0.
    """
    conf = _confidence(confidence)
    v, zeros = _nonzero(d, 0.0)
    n = v.size
    if n == 0:
        return ShiftInterval(estimate=0.0, low=0.0, high=0.0, confidence=conf,
                             achieved_confidence=None, method="degenerate",
                             reported_confidence=conf, note="every difference is zero")
    _check_pairs(n * (n + 1) // 2, "signed_rank_interval")
    walsh = _walsh(v)
    estimate = _sorted_median(walsh)
    ties = bool(np.any(np.diff(np.sort(np.abs(v))) == 0))
    want_exact = exact if exact is not None else n < EXACT_BELOW
    alpha = 1.0 - conf
    if want_exact and not ties and not zeros:
        pmf = _signrank_pmf(n)
        qu = _quantile(pmf, alpha / 2.0) or 1
        ql = n * (n + 1) // 2 - qu
        achieved = 1.0 - 2.0 * _lower(pmf, qu - 1)
        return ShiftInterval(estimate=estimate, low=float(walsh[qu - 1]),
                             high=float(walsh[ql]), confidence=conf,
                             achieved_confidence=achieved, method="exact",
                             reported_confidence=_reported(conf, achieved, one_sample=True))
    notes = []
    if want_exact and (ties or zeros):
        notes.append("cannot compute exact interval with "
                     + ("ties" if ties else "zeroes") + ": normal approximation")
    return _approx_one_sample(v, walsh, estimate, conf, correct, notes)


def _approx_one_sample(v: np.ndarray, walsh: np.ndarray, estimate: float, conf: float,
                       correct: bool, notes: list[str]) -> ShiftInterval:
    n = v.size
    srt = np.sort(v)
    base_ties = _tie_term(_tie_groups(srt)[1])  # away from Walsh averages: equal values only
    sigma0 = math.sqrt(max(n * (n + 1) * (2 * n + 1) / 24.0 - base_ties / 48.0, 0.0))

    half = 0.5 if correct else 0.0
    centre = n * (n + 1) / 4.0

    def stat(dd: float) -> float:
        """R's W(d): corrected normal statistic of the signed ranks of x − d (zeros dropped)."""
        hi = int(walsh.searchsorted(dd, side="right"))
        if hi and walsh[hi - 1] == dd:  # a Walsh average: R's ranks (zeros, ± ties)
            xd = v - dd
            xd = xd[xd != 0]
            nd = xd.size
            vstat, tie_term, _ = _signed_rank_stat(xd)
            zd = vstat - nd * (nd + 1) / 4.0
            sigma = math.sqrt(max(nd * (nd + 1) * (2 * nd + 1) / 24.0 - tie_term / 48.0, 0.0))
            if sigma == 0:
                return math.nan
            return (zd - _correction(zd, "two-sided", correct)) / sigma
        # elsewhere V(d) = #{Walsh averages > d}, only ties among equal values count
        zd = (walsh.size - hi) - centre
        return (zd - half if zd > 0 else zd + half if zd < 0 else 0.0) / sigma0

    mumin, mumax = float(srt[0]), float(srt[-1])
    if n > 1 and mumin == mumax:
        notes.append("every non-zero difference is equal: the interval is that value")
        return ShiftInterval(estimate=mumin, low=mumin, high=mumax, confidence=conf,
                             achieved_confidence=None, method="degenerate",
                             reported_confidence=conf, note="; ".join(notes))
    w_min = stat(mumin)
    w_max = stat(mumax) if math.isfinite(w_min) else math.nan
    if not (math.isfinite(w_min) and math.isfinite(w_max)):
        notes.append("the statistic cannot be standardised: interval is the whole line")
        return ShiftInterval(estimate=(mumin + mumax) / 2.0, low=-math.inf, high=math.inf,
                             confidence=conf, achieved_confidence=0.0,
                             method="normal approximation", reported_confidence=0.0,
                             note="; ".join(notes))
    alpha = 1.0 - conf
    while alpha < 1.0 and (w_min + _ndtri(alpha / 2) < 0
                           or w_max - _ndtri(alpha / 2) > 0):
        alpha *= 2.0
    achieved: float | None = None
    if alpha >= 1.0 or 1.0 - conf < alpha * 0.75:
        achieved = 1.0 - min(1.0, alpha)
        notes.append("requested confidence not achievable")
    if alpha >= 1.0:
        med = float(np.median(v))
        low = high = med
    else:
        def root(zq: float) -> float:
            f_lo, f_hi = w_min - zq, w_max - zq
            if f_lo == 0:
                return mumin
            if f_hi == 0:
                return mumax
            guess = round(walsh.size - (centre + zq * sigma0))
            return _step_root(walsh, lambda dd: stat(dd) - zq, mumin, mumax, guess)

        low = root(-_ndtri(alpha / 2))
        high = root(_ndtri(alpha / 2))
    return ShiftInterval(estimate=estimate, low=low, high=high, confidence=conf,
                         achieved_confidence=achieved, method="normal approximation",
                         reported_confidence=conf if achieved is None else achieved,
                         note="; ".join(notes))


# --------------------------------------------------------------------------------------------
# ratio of scales / medians


def _positive(values: ArrayLike, name: str) -> np.ndarray:
    arr = finite_sample(values, name)
    low = float(np.min(arr))
    if low <= 0:
        raise ValueError(f"{name}: a ratio interval needs positive times, got a value of {low!r}"
                         " (≤ 0)")
    return arr


def _bp_log_median(v: np.ndarray) -> tuple[float, float]:
    """log of the sample median and Bonett & Price's (2002) standard error of it:
    a = round(n/2 − √n) (≥ 1), se = (ln v₍ₙ₋ₐ₊₁₎ − ln v₍ₐ₎)/(2·z₀), z₀ = Φ⁻¹(1 − P(B ≤ a − 1)),
    B ~ Binomial(n, ½). Order statistics by ``np.partition``: O(n) time and memory."""
    n = v.size
    a = max(1, round(n / 2 - math.sqrt(n)))  # R's round: half to even, as Python's
    kth = sorted({a - 1, n - a, (n - 1) // 2, n // 2})
    part = np.partition(v, kth)
    median = 0.5 * (part[(n - 1) // 2] + part[n // 2])
    from scipy import stats as sps

    p = float(sps.binom.cdf(a - 1, n, 0.5))
    z0 = -_ndtri(p)
    se = (math.log(part[n - a]) - math.log(part[a - 1])) / (2.0 * z0)
    return math.log(median), se


def ratio_interval(base: ArrayLike, new: ArrayLike, confidence: float = 0.95, *,
                   method: str = "auto") -> RatioInterval:
    """Two-sided interval of the ratio BASE/NEW of positive times (> 1: NEW is faster).

    * ``"hodges-lehmann"`` (``"auto"`` when n_b·n_n ≤ :data:`PAIRWISE_LIMIT`):
      exp of :func:`shift_interval` (log base, log new). Under the scale model NEW = BASE/c
      (in distribution) the logs differ by a shift ln c, so the interval is distribution-free
      (exact when R's exact rule applies) — Bauer (1972); Hollander & Wolfe §4.3.
    * ``"subsample"`` (``"auto"`` above the limit): the Hodges–Lehmann interval on a seeded
      random subsample of :data:`SUBSAMPLE` values a side. A random subsample of independent
      values is independent too, so the interval keeps its level (it is only wider than the
      full-sample one would be); O(n) time, bounded memory.
    * ``"bonett-price"``: Bonett & Price's (2002) interval of the ratio of medians,
      exp(ln m_b − ln m_n ± z_{1−α/2}·√(se_b² + se_n²)) with the distribution-free standard
      errors of :func:`_bp_log_median`; O(n). Not the default: when the density at the median
      is near zero (a 50/50 bimodal time, the median in the gap between the modes) it covers
      far less than its level (58% at n = 100 in ``tests/test_calibration.py``).

    Non-positive or non-finite times raise ``ValueError``. Constant input does not raise: when
    all the log-differences are equal (both samples constant) the Hodges–Lehmann interval is
    that single ratio, and Bonett–Price gives a zero-width interval at the ratio of medians.
    """
    conf = _confidence(confidence)
    b, nw = _positive(base, "base"), _positive(new, "new")
    if method not in ("auto", "hodges-lehmann", "subsample", "bonett-price"):
        raise ValueError("method must be 'auto', 'hodges-lehmann', 'subsample' or "
                         f"'bonett-price', got {method!r}")
    if method == "auto":
        method = "hodges-lehmann" if b.size * nw.size <= PAIRWISE_LIMIT else "subsample"
    suffix = ""
    if method == "subsample":
        rng = np.random.default_rng(SUBSAMPLE_SEED)
        if b.size > SUBSAMPLE:
            b = rng.choice(b, SUBSAMPLE, replace=False)
        if nw.size > SUBSAMPLE:
            nw = rng.choice(nw, SUBSAMPLE, replace=False)
        suffix = f", on a random subsample of {SUBSAMPLE} values a side"
        method = "hodges-lehmann"
    if method == "hodges-lehmann":
        si = shift_interval(np.log(b), np.log(nw), confidence=conf)
        name = ("Hodges–Lehmann ratio, exact Wilcoxon interval" if si.method == "exact"
                else "Hodges–Lehmann ratio, Wilcoxon normal-approximation interval") + suffix
        return RatioInterval(estimate=math.exp(si.estimate), low=math.exp(si.low),
                             high=math.exp(si.high), confidence=conf,
                             achieved_confidence=si.achieved_confidence, method=name,
                             note=si.note)
    if b.size < 2 or nw.size < 2:
        raise ValueError("Bonett–Price interval needs at least 2 values on each side")
    lb, se_b = _bp_log_median(b)
    ln, se_n = _bp_log_median(nw)
    half = -_ndtri((1.0 - conf) / 2.0) * math.hypot(se_b, se_n)
    diff = lb - ln
    return RatioInterval(estimate=math.exp(diff), low=math.exp(diff - half),
                         high=math.exp(diff + half), confidence=conf, achieved_confidence=None,
                         method="Bonett–Price ratio of medians")
