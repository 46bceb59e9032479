"""The statistical tests of the Speedup-Test protocol (``003``: Touati, Worms, Briais).

``003`` §2 and Fig. 1 decide whether a program P′ (NEW) is faster than P (BASE) from k and m
independent execution times:

* with fewer than 30 runs on a side, check normality with Shapiro–Wilk (§2.1) before a t-test;
* a one-sided two-sample t-test that mean(BASE) > mean(NEW) at the declared confidence (§2.2);
  Student when an F-test does not reject equal variances, Welch otherwise (R's ``var.test`` and
  ``t.test``, as in the reference tool);
* the median protocol: a Wilcoxon–Mann–Whitney test (:mod:`steadybench.stats.rank`, R's
  rules); speedup = median(BASE)/median(NEW) (§2.3).

Every function returns plain values or small dataclasses; undefined quantities (zero variance,
too few values) are ``None`` with a note, never a division by zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

#: below this many runs on a side, the protocol checks its assumptions first (``003`` §2, item 2)
SMALL_SAMPLE = 30


def _arr(values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=float)


def is_constant(values: Sequence[float] | np.ndarray) -> bool:
    """True when every value is the same (zero variance)."""
    arr = _arr(values)
    return arr.size > 0 and bool(np.all(arr == arr[0]))


def normality_check(values: Sequence[float] | np.ndarray, confidence: float) -> dict[str, Any]:
    """Shapiro–Wilk test (``003`` §2.1): normality is rejected when p < 1 − confidence.

    ``003`` Example 2.1: T1 = (2.799, 2.046, 1.259, 1.877, 2.244) gives W = 0.9862,
    p = 0.9647. Undefined below 3 values (``rejected`` is None) and for constant samples (a
    degenerate normal: not rejected, with a note).
    """
    arr = _arr(values)
    out: dict[str, Any] = {"test": "shapiro-wilk", "n": int(arr.size), "statistic": None,
                           "pvalue": None, "rejected": None, "note": ""}
    if arr.size < 3:
        out["note"] = "Shapiro–Wilk needs at least 3 values"
        return out
    if is_constant(arr):
        out.update(rejected=False, note="constant sample: Shapiro–Wilk undefined (zero variance)")
        return out
    res = sps.shapiro(arr)
    out.update(statistic=float(res.statistic), pvalue=float(res.pvalue),
               rejected=bool(res.pvalue < 1.0 - confidence))
    return out


def variance_test(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
                  confidence: float) -> dict[str, Any]:
    """Two-sided F-test of equal variances (R ``var.test``): F = s²(BASE)/s²(NEW).

    Equal variances are rejected when p < 1 − confidence. With zero variance on a side the test
    is undefined and the variances are treated as unequal (so Welch's test is used).
    """
    a, b = _arr(base), _arr(new)
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    out: dict[str, Any] = {"test": "f-test", "statistic": None, "pvalue": None,
                           "df": [int(a.size - 1), int(b.size - 1)], "rejected": True, "note": ""}
    if va == 0 or vb == 0:
        out["note"] = "zero variance on a side: F-test undefined, variances taken as unequal"
        return out
    f = va / vb
    dist = sps.f(a.size - 1, b.size - 1)
    p = min(1.0, 2.0 * min(float(dist.cdf(f)), float(dist.sf(f))))
    out.update(statistic=f, pvalue=p, rejected=bool(p < 1.0 - confidence))
    return out


@dataclass(frozen=True)
class MeanTest:
    """Two-sample t-test of d = mean(BASE) − mean(NEW) (Student or Welch)."""

    kind: str  # "student" or "welch"
    difference: float
    se: float
    df: float
    statistic: float
    #: one-sided p-value of H1: mean(BASE) > mean(NEW) (NEW faster)
    p_faster: float
    #: one-sided p-value of H1: mean(BASE) < mean(NEW) (NEW slower)
    p_slower: float

    def lower_bound(self, level: float) -> float:
        """One-sided lower confidence bound of d at ``level`` (R ``t.test(alt="greater")``)."""
        return self.difference - float(sps.t.ppf(level, self.df)) * self.se

    def upper_bound(self, level: float) -> float:
        """One-sided upper confidence bound of d at ``level``."""
        return self.difference + float(sps.t.ppf(level, self.df)) * self.se


def mean_test(base: Sequence[float] | np.ndarray, new: Sequence[float] | np.ndarray,
              equal_var: bool) -> MeanTest | None:
    """Student (pooled) or Welch t-test of mean(BASE) − mean(NEW) (``003`` §2.2; Jain 1991 §13).

    None when both samples have zero variance (the t statistic is undefined; the caller decides
    from the data). ``003`` Example 2.1 at 95%: one-sided interval [0.3414632, ∞).
    """
    a, b = _arr(base), _arr(new)
    na, nb = a.size, b.size
    va, vb = float(np.var(a, ddof=1)), float(np.var(b, ddof=1))
    diff = float(a.mean() - b.mean())
    if equal_var:
        df = float(na + nb - 2)
        pooled = ((na - 1) * va + (nb - 1) * vb) / df
        se = math.sqrt(pooled * (1.0 / na + 1.0 / nb))
    else:
        qa, qb = va / na, vb / nb
        se = math.sqrt(qa + qb)
        df = (qa + qb) ** 2 / (qa * qa / (na - 1) + qb * qb / (nb - 1)) if se > 0 else math.nan
    if se == 0:
        return None
    t = diff / se
    return MeanTest("student" if equal_var else "welch", diff, se, df, t,
                    float(sps.t.sf(t, df)), float(sps.t.cdf(t, df)))










def speedup(base_value: float | None, new_value: float | None) -> float | None:
    """BASE/NEW (``003`` §2.3); None when undefined (a zero or missing NEW value)."""
    if base_value is None or new_value is None or new_value == 0:
        return None
    return float(base_value) / float(new_value)
