"""Confidence intervals of a proportion and the number of trials needed to estimate one.

Used for the suite analysis of the Speedup-Test protocol (``003`` §4): the proportion C = p/n of
benchmarks that a change accelerates, its interval at a declared confidence, and the number of
benchmarks n ≥ z²·C(1−C)/r² needed to know it within ±r.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as sps

from .summary import check_confidence


@dataclass(frozen=True)
class ProportionInterval:
    """A proportion ``estimate`` = x/n with its interval and the method that gave it."""

    x: int
    n: int
    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    reason: str = ""

    def to_dict(self) -> dict[str, float | int | str]:
        return {"x": self.x, "n": self.n, "estimate": self.estimate, "low": self.low,
                "high": self.high, "confidence": self.confidence, "method": self.method,
                "reason": self.reason}


def _check_counts(x: int, n: int) -> None:
    if n <= 0 or x < 0 or x > n:
        raise ValueError(f"need 0 <= x <= n and n > 0, got x={x}, n={n}")


def wilson_cc(x: int, n: int, confidence: float = 0.95) -> ProportionInterval:
    """Wilson score interval with continuity correction, exactly as R's ``prop.test(x, n)``.

    Source: Newcombe (1998), "Two-sided confidence intervals for the single proportion", method
    4; R ``stats::prop.test`` (one sample, ``correct=TRUE``, null p = ½), which caps the Yates
    correction at |x − n/2|. ``003`` §4 Example 4.1: ``prop.test(17, 30, conf.level=0.90)`` →
    [0.4027157, 0.7184049].
    """
    check_confidence(confidence)
    _check_counts(x, n)
    est = x / n
    yates = min(0.5, abs(x - n * 0.5))
    z = float(sps.norm.ppf((1.0 + confidence) / 2.0))
    z22n = z * z / (2.0 * n)
    pc = est + yates / n
    if pc >= 1:
        high = 1.0
    else:
        high = (pc + z22n + z * math.sqrt(pc * (1 - pc) / n + z22n / (2 * n))) / (1 + 2 * z22n)
    pc = est - yates / n
    if pc <= 0:
        low = 0.0
    else:
        low = (pc + z22n - z * math.sqrt(pc * (1 - pc) / n + z22n / (2 * n))) / (1 + 2 * z22n)
    return ProportionInterval(x, n, est, max(0.0, low), min(1.0, high), confidence,
                              "wilson-cc")


def clopper_pearson(x: int, n: int, confidence: float = 0.95) -> ProportionInterval:
    """Exact (Clopper–Pearson, 1934) interval from Beta quantiles; R's ``binom.test``."""
    check_confidence(confidence)
    _check_counts(x, n)
    a = 1.0 - confidence
    low = 0.0 if x == 0 else float(sps.beta.ppf(a / 2, x, n - x + 1))
    high = 1.0 if x == n else float(sps.beta.ppf(1 - a / 2, x + 1, n - x))
    return ProportionInterval(x, n, x / n, low, high, confidence, "clopper-pearson")


def proportion_interval(x: int, n: int, confidence: float = 0.95) -> ProportionInterval:
    """The interval ``003`` §4 asks for: Wilson-cc when n·C ≥ 10, else exact Clopper–Pearson.

    The normal-approximation family is valid only when n·C ≥ 10 (``003`` §4, after Jain 1991);
    below that the exact interval is used and the reason is recorded.
    """
    _check_counts(x, n)
    if x < 10:
        ci = clopper_pearson(x, n, confidence)
        return ProportionInterval(ci.x, ci.n, ci.estimate, ci.low, ci.high, ci.confidence,
                                  ci.method, f"n·C = {x} < 10: the normal approximation does "
                                  "not hold, exact Clopper–Pearson interval used")
    return wilson_cc(x, n, confidence)


def trials_needed(proportion: float, precision: float, confidence: float = 0.95) -> int:
    """Smallest n with z²·C(1−C)/r² ≤ n: benchmarks needed to know C within ±r (``003`` §4).

    ``003`` Example 4.2: C = 17/30, r = 0.05, 95% → 378. When C is 0 or 1 the formula gives 0;
    the worst case C = ½ is used instead (the caller should say so).
    """
    check_confidence(confidence)
    if not 0 < precision < 1:
        raise ValueError(f"precision must be in (0, 1), got {precision}")
    c = proportion if 0 < proportion < 1 else 0.5
    z = float(sps.norm.ppf((1.0 + confidence) / 2.0))
    return math.ceil(z * z * c * (1 - c) / (precision * precision) - 1e-9)
