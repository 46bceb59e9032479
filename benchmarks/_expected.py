"""What a test that holds its level could score in ``over_time.py``'s real part, given the
noise the runs themselves showed (shared by ``over_time.py`` and ``over_time_rescore.py``).

Issue 25's targets for 20 + 20 pairs are "identical code called different in ≤ 1 of 20" and
"the 5 % slowdown called slower in ≥ 16 of 20". Neither is certain even for a perfect test:

* at 95 % confidence each identical pair is called different with probability 0.05, so the
  count is Binomial(20, 0.05): ≤ 1 with probability 0.736;
* each slowdown pair is found with the power of its own comparison (its standard error and
  degrees of freedom, :meth:`steadybench.compare.between.AcrossTime.power`); the count of
  found pairs is a sum of Bernoulli variables with those probabilities (a Poisson–binomial),
  whose mean is the expected number found and whose tail gives the chance of ≥ 16.

These are the figures a calibrated method would be expected to reach on the machine as it was
during the run: the gap between them and the target is the machine's, not the method's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

from steadybench.compare.between import change_power


def at_least(probabilities: Sequence[float], k: int) -> float:
    """P(at least ``k`` of independent events with these probabilities happen): the upper
    tail of the Poisson–binomial distribution, by the usual dynamic programme."""
    dist = [1.0]
    for p in probabilities:
        nxt = [0.0] * (len(dist) + 1)
        for j, q in enumerate(dist):
            nxt[j] += q * (1.0 - p)
            nxt[j + 1] += q * p
        dist = nxt
    return float(sum(dist[k:]))


def power(se: float, df: float, slowdown: float, confidence: float = 0.95) -> float:
    """The chance that a comparison with standard error ``se`` (of ln time) and ``df`` degrees
    of freedom calls a true ``slowdown`` different (:func:`~steadybench.compare.between.
    change_power`); NaN for a pair without a comparison."""
    if not (math.isfinite(se) and math.isfinite(df)) or se <= 0:
        return math.nan
    return change_power(slowdown, se, df, confidence)


def expected_lines(tests: Sequence[tuple[float, float]], identical: int, slowdown: float,
                   found_target: int = 16, differ_target: int = 1,
                   confidence: float = 0.95) -> list[str]:
    """Two lines: what a calibrated test is expected to score on these pairs. ``tests`` holds
    (se, df) of each slowdown pair's comparison; ``identical`` is the number of identical
    pairs."""
    powers = [p for p in (power(se, df, slowdown, confidence) for se, df in tests)
              if math.isfinite(p)]
    alpha = 1.0 - confidence
    held = float(stats.binom.cdf(differ_target, identical, alpha)) if identical else math.nan
    lines = [f"  a test that holds its level calls identical code different {alpha * identical:.1f}"
             f" of {identical} times on average, and ≤ {differ_target} with probability "
             f"{held:.0%}"]
    if powers:
        ordered = sorted(powers)
        lines.append(
            f"  with the standard errors these runs measured, the {slowdown:.0%} slowdown is "
            f"found with probability {ordered[len(ordered) // 2]:.0%} per pair (median; "
            f"{ordered[0]:.0%}–{ordered[-1]:.0%}): {sum(powers):.1f} of {len(powers)} expected, "
            f"≥ {found_target} with probability {at_least(powers, found_target):.1%}")
    return lines
