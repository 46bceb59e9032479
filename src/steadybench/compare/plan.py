"""How many runs a comparison needs, from pilot samples.

* CI of ±w of the **mean**: the smallest n with t(1−α/2, n−1)·s/√n ≤ w·x̄ (Jain 1991, §13.9).
* CI of ±w of the **median**: asymptotic variance of the sample median 1/(4·n·f(m)²)
  (Kendall & Stuart; f estimated by a Gaussian kernel density at the pilot median), so
  n = (z·/(2·f(m)·w·m))².
* Detect a change of y with power P, two-sided at the declared confidence (as ``compare``
  decides): for the t-test, the smallest n per side whose power from the noncentral t
  distribution reaches P (σ from the pilot, δ = y·x̄); for the Wilcoxon–Mann–Whitney test,
  Noether's (1987) formula n = (z₁₋α/₂ + z_P)² / (6·(p′ − ½)²) per side, p′ = P(X + δ > X′)
  estimated from all pairs of pilot values (counted on the sorted pilot, O(n log n)).

Where n has no closed form, it is found by bisection on a monotone condition (O(log n)
evaluations), so ``--detect 0.1%`` answers as fast as ``--detect 10%``. The unit is the
independent execution, as in ``compare``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats as sps

from ..errors import ConfigurationError
from ..stats.speedup import SMALL_SAMPLE

MAX_RUNS = 10**9


def smallest_n(ok: Callable[[int], bool], low: int = 2, high: int = MAX_RUNS) -> int:
    """The smallest n in [low, high] with ``ok(n)``, for a condition that stays true once true:
    doubling from ``low`` until it holds, then bisection (O(log n) evaluations, all near the
    answer); ``high`` when even it fails."""
    if ok(low):
        return low
    hi = low
    while True:  # invariant: not ok(low)
        hi = min(hi * 2, high)
        if ok(hi):
            break
        if hi >= high:
            return high
        low = hi
    while hi - low > 1:  # ok(hi) and not ok(low)
        mid = (low + hi) // 2
        if ok(mid):
            hi = mid
        else:
            low = mid
    return hi


def runs_for_mean_ci(mean: float, sd: float, width: float, confidence: float) -> int:
    if sd == 0:
        return 2
    q = 0.5 + confidence / 2
    target = width * abs(mean)
    return smallest_n(lambda n: float(sps.t.ppf(q, n - 1)) * sd / math.sqrt(n) <= target)


def runs_for_median_ci(values: np.ndarray, width: float, confidence: float) -> int | None:
    if np.all(values == values[0]):
        return 2
    if values.size < 3:
        return None
    median = float(np.median(values))
    density = float(sps.gaussian_kde(values)(median)[0])
    if density <= 0:
        return None
    z = sps.norm.ppf(0.5 + confidence / 2)
    return max(2, math.ceil((z / (2 * density * width * abs(median))) ** 2))


def t_power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided two-sample t-test with n per side and effect δ/σ
    (:func:`two_sided_t_power` with 2n − 2 degrees of freedom)."""
    return two_sided_t_power(effect * math.sqrt(n / 2), 2 * n - 2, alpha)


def two_sided_t_power(ncp: float, df: float, alpha: float) -> float:
    """The probability that a two-sided t-test at level α rejects when its statistic has
    noncentrality ``ncp`` (δ/SE) and ``df`` degrees of freedom: the noncentral t; its normal
    limit above 10⁵ degrees of freedom (or infinite ones), or wherever scipy's noncentral t
    returns NaN, as it does for a large noncentrality."""
    if df <= 100_000:
        crit = sps.t.ppf(1 - alpha / 2, df)
        power = float(sps.nct.sf(crit, df, ncp) + sps.nct.cdf(-crit, df, ncp))
        if math.isfinite(power):
            return power
    z = float(sps.norm.ppf(1 - alpha / 2))
    return float(sps.norm.sf(z - ncp) + sps.norm.cdf(-z - ncp))


def runs_for_t_power(effect: float, power: float, alpha: float) -> int:
    if effect == math.inf:
        return 2
    return smallest_n(lambda n: t_power(n, effect, alpha) >= power)


def superiority(values: np.ndarray, delta: float) -> float:
    """p′ = P(X + δ > X′) over all ordered pairs of distinct pilot values (ties count ½),
    from the sorted values in O(n log n)."""
    x = np.sort(values)
    n = x.size
    shifted = x + delta
    below = np.searchsorted(x, shifted, side="left")  # X′ < X + δ
    equal = np.searchsorted(x, shifted, side="right") - below
    wins = float(below.sum()) + 0.5 * float(equal.sum())
    self_pairs = n * (1.0 if delta > 0 else 0.5 if delta == 0 else 0.0)  # the pairs i = j
    return (wins - self_pairs) / (n * (n - 1))


def runs_for_rank_power(values: np.ndarray, delta: float, power: float,
                        alpha: float) -> int | None:
    p_prime = superiority(values, delta)
    if p_prime == 0.5:
        return None
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return max(2, math.ceil(z * z / (6 * (p_prime - 0.5) ** 2)))


def plan(values: Sequence[float] | np.ndarray, *, ci_width: float | None = None,
         detect: float | None = None, power: float = 0.9,
         confidence: float = 0.95) -> dict[str, Any]:
    """Runs needed for each goal asked (fractions: ``ci_width=0.01`` for ±1%)."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        raise ConfigurationError(f"plan needs at least 2 pilot samples, has {arr.size}")
    if not 0 < confidence < 1:
        raise ConfigurationError(f"confidence must be between 0 and 1, got {confidence}")
    if not 0 < power < 1:
        raise ConfigurationError(f"power must be between 0 and 1, got {power}")
    if ci_width is None and detect is None:
        raise ConfigurationError("say what to plan for: --ci-width X% and/or --detect Y%")
    mean, sd = float(arr.mean()), float(arr.std(ddof=1))
    out: dict[str, Any] = {"pilot": {"n": int(arr.size), "mean": mean,
                                     "median": float(np.median(arr)), "stdev": sd,
                                     "cov": sd / mean if mean else None},
                           "confidence": confidence, "notes": []}
    if sd == 0:
        out["notes"].append("the pilot has no variation: any number of runs ≥ 2 gives a "
                            "zero-width interval; measure a noisier pilot to plan")
    if ci_width is not None:
        if not 0 < ci_width < 1:
            raise ConfigurationError(f"CI width must be between 0% and 100%, got {ci_width}")
        out["ci"] = {"width": ci_width,
                     "runs_mean": runs_for_mean_ci(mean, sd, ci_width, confidence),
                     "runs_median": runs_for_median_ci(arr, ci_width, confidence)}
    if detect is not None:
        if not 0 < detect < 1:
            raise ConfigurationError(f"change to detect must be between 0% and 100%, "
                                     f"got {detect}")
        alpha = 1 - confidence
        effect = detect * abs(mean) / sd if sd > 0 else math.inf
        out["detect"] = {"change": detect, "power": power, "effect_size": effect,
                         "runs_per_side_t": runs_for_t_power(effect, power, alpha),
                         "runs_per_side_rank": (runs_for_rank_power(arr, detect * abs(mean),
                                                                    power, alpha)
                                                if sd > 0 else 2)}
    runs = [v for goal in ("ci", "detect") for k, v in out.get(goal, {}).items()
            if k.startswith("runs") and isinstance(v, int)]
    if runs and min(runs) < SMALL_SAMPLE:
        out["notes"].append("with fewer than 30 executions a side, compare's mean protocol "
                            "first checks normality and may call the result inconclusive "
                            "(003 §2.1); the median protocol (the default) has no such step")
    return out
