"""Stopping an A/B comparison early without inflating its error rates: repeated confidence
intervals of the signed-rank (Hodges–Lehmann) type over rounds of interleaved runs.

The data. A live A/B command runs rounds; each round executes A and B once, in an order drawn
by a fair coin, and yields d_i = ln(time_A_i / time_B_i). If A and B are the same program the
label of each of the two runs of a round is a fair coin independent of the times, so the sign
of d_i is a fair coin independent of |d_i| and of everything else — even when the machine
drifts between rounds. The signed-rank statistic then has exactly its tabulated null
distribution (conditionally on the |d_i|), and so do the exact intervals built from it. For
coverage when A ≠ B the intervals assume d_i − θ symmetric about 0, θ = ln(ratio): true when
A's times are B's times scaled by e^θ and the two noise terms of a round are exchangeable (the
randomised order makes them so).

The procedure (Jennison & Turnbull 1989 "Interim analyses: the repeated confidence interval
approach", JRSS B 51, 305–361; Jennison & Turnbull 2000 *Group Sequential Methods with
Applications to Clinical Trials*, ch. 9). The data are examined at the rounds
n_1 < … < n_K = ``max_rounds`` of :meth:`SequentialPlan.looks`. The error α = 1 − confidence is
spent by the power family of Kim & DeMets (1987, "Design and analysis of group sequential
tests based on the type I error spending rate function", Biometrika 74, 149–154):
α(t) = α·t^ρ, t = n/``max_rounds``; look k gets α_k = α(t_k) − α(t_{k−1}) and reports
:func:`~steadybench.stats.rank.signed_rank_interval` at level 1 − α_k (exact whenever there are
neither ties nor zeros and n ≤ :data:`EXACT_MAX`, a deliberate departure from R's n < 50 rule,
so that the guarantee is exact rather than asymptotic; with ties, zeros or more rounds it is the
normal approximation with R's tie and continuity corrections). By the union (Bonferroni) bound
P(some interval misses θ) ≤ Σ α_k = α. This does not rely on the joint distribution of the
looks, so it holds *whatever the stopping rule*: stop at the first look that decides, keep going
after a decision, skip looks (their α is forfeited, which only makes it conservative). A stop
before ``max_rounds`` for a reason that does not depend on the signs of the d_i (a time or
round budget, an interrupt not provoked by the interim results) may use the α not yet spent:
``look(..., final=True)`` at level 1 − (α − α(t_j)), t_j the last scheduled look before it.

Guarantees, at confidence 1 − α:

* the family of repeated intervals covers the true ratio simultaneously with probability
  ≥ 1 − α, so the interval reported at stopping covers it with probability ≥ 1 − α;
* in an A/A comparison (or any wrong claim: "faster" when B is not faster by more than the
  threshold, and so on) the probability of a wrong decision is ≤ α under any data-dependent
  stopping at the looks, because every wrong decision needs an interval that misses the truth.

Choice of ρ and of the first look. With ρ = 2 and the default doubling schedule 20, 40, 80,
160, 320 rounds, α_k = α·(1, 3, 12, 48, 192)/256, i.e. (0.0002, 0.0006, 0.0023, 0.0094,
0.0375) at 95%: the last interval has level 96.25% (z = 2.08 instead of 1.96 for a
fixed-length experiment: ~6% wider), while a large effect can still stop the run after 1/16 of
the budget. ρ = 1 (close to Pocock's boundaries) spends α/16 at the first look but leaves the
last at 97.5% (z = 2.24, 14% wider); ρ = 3 (close to O'Brien–Fleming) leaves the first look
only α/4096 = 1.2e-5, which the exact signed-rank interval cannot reach below 18 rounds and
which needs an overwhelming effect. The first look must be able to exclude a ratio of 1 at all:
the exact interval at n rounds has achieved level 1 − 2·P(V ≤ qu − 1) ≥ 1 − α_1 only if
2^{1−n} ≤ α_1 (otherwise R's rule ``qu = 1`` would return [min d, max d] at a *lower* level and
break the bound). :meth:`SequentialPlan.smallest_min_rounds` finds the least such n (15 for the
defaults: 2^{−14} = 6.1e-5 ≤ 0.05·(15/320)² = 1.1e-4); the default 20 leaves room for up to
13 of the 210 Walsh averages on the wrong side at the first look (qsignrank(α_1/2, 20) = 14).
Plans whose looks cannot reach their levels are refused; an interval whose achieved level is
below the requested one (an early final stop, R's α doubling with ties) is replaced by the
whole line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .rank import signed_rank_interval

#: largest number of rounds for which a look uses the exact signed-rank interval (its null
#: distribution costs O(n³): ~0.1 s at 500, computed once; beyond, the normal approximation)
EXACT_MAX = 500

DECISIONS = ("faster", "slower", "equivalent", "continue", "no difference")


@dataclass(frozen=True)
class SequentialPlan:
    """When to look and at which level: repeated confidence intervals with Kim–DeMets power
    spending α(t) = α·t^ρ and a Bonferroni union bound (module notes)."""

    confidence: float = 0.95
    max_rounds: int = 320
    min_rounds: int = 20
    rho: float = 2.0
    max_looks: int = 6

    def __post_init__(self) -> None:
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got "
                             f"{self.confidence!r}")
        if not 1 <= self.min_rounds <= self.max_rounds:
            raise ValueError(f"need 1 ≤ min_rounds ≤ max_rounds, got {self.min_rounds} and "
                             f"{self.max_rounds}")
        if not (self.rho > 0 and math.isfinite(self.rho)):
            raise ValueError(f"rho must be positive, got {self.rho!r}")
        if self.max_looks < 1:
            raise ValueError(f"max_looks must be at least 1, got {self.max_looks}")
        if 2.0 ** (1 - self.max_rounds) > self.alpha:
            least = math.ceil(1 + math.log2(1 / self.alpha) - 1e-12)
            raise ValueError(
                f"an exact signed-rank interval over {self.max_rounds} rounds cannot exclude a "
                f"ratio of 1 at confidence {self.confidence:g} (it needs 2^(1−n) ≤ "
                f"{self.alpha:.3g}); use max_rounds ≥ {least}")
        for n in self.looks():
            alpha_k = 1.0 - self.level_at(n)
            if 2.0 ** (1 - n) > alpha_k:
                least = self.smallest_min_rounds(self.confidence, self.max_rounds, self.rho)
                raise ValueError(
                    f"the look at {n} rounds spends α = {alpha_k:.3g}, which an exact "
                    f"signed-rank interval over {n} rounds cannot reach (it needs "
                    f"2^(1−n) ≤ α); use min_rounds ≥ {least} (or fewer looks, a larger rho)")

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    @staticmethod
    def smallest_min_rounds(confidence: float, max_rounds: int, rho: float) -> int:
        """The least n with 2^{1−n} ≤ α·(n/max_rounds)^ρ: the first look at n rounds can
        exclude a ratio of 1 with the exact signed-rank interval."""
        alpha = 1.0 - confidence
        for n in range(1, max_rounds + 1):
            if 2.0 ** (1 - n) <= alpha * (n / max_rounds) ** rho:
                return n
        return max_rounds

    def looks(self) -> tuple[int, ...]:
        """The rounds at which the data are examined: geometric from ``min_rounds`` to
        ``max_rounds`` (doubling when that gives at most ``max_looks`` looks, else the ratio
        that does), always ending with ``max_rounds``."""
        lo, hi = self.min_rounds, self.max_rounds
        if lo >= hi:
            return (hi,)
        k = min(self.max_looks, 1 + math.ceil(math.log2(hi / lo) - 1e-12))
        if k <= 1:
            return (hi,)
        ratio = (hi / lo) ** (1.0 / (k - 1))
        points = sorted({min(hi, round(lo * ratio ** i)) for i in range(k - 1)} | {hi})
        return tuple(points)

    def spent(self, rounds: int) -> float:
        """α(t) = α·t^ρ, t = rounds/max_rounds (capped at 1)."""
        t = min(1.0, max(0.0, rounds / self.max_rounds))
        return self.alpha * t ** self.rho

    def level_at(self, rounds: int, final: bool = False) -> float:
        """Confidence of the repeated interval at a scheduled look (1 − α_k), or, with
        ``final``, at a stop after ``rounds`` that uses all the α not spent by the scheduled
        looks before it (1 − (α − α(t_j)), t_j the last look < ``rounds``). A final look at a
        scheduled look's round count *replaces* that look: doing both would spend α_k twice."""
        schedule = self.looks()
        before = [n for n in schedule if n < rounds]
        spent_before = self.spent(before[-1]) if before else 0.0
        if final or rounds == self.max_rounds:
            if not 1 <= rounds <= self.max_rounds:
                raise ValueError(f"a final look needs 1 ≤ rounds ≤ max_rounds = "
                                 f"{self.max_rounds}, got {rounds}")
            return 1.0 - (self.alpha - spent_before)
        if rounds not in schedule:
            raise ValueError(f"{rounds} rounds is not a scheduled look {schedule}; pass "
                             "final=True for a stop by budget or interrupt")
        return 1.0 - (self.spent(rounds) - spent_before)


@dataclass(frozen=True)
class Look:
    """One examination of the data. ``estimate``, ``low`` and ``high`` are on the ratio scale
    time_A/time_B (> 1: B is faster); ``level`` the confidence of this repeated interval;
    ``decision`` one of :data:`DECISIONS`; ``interim`` False at the last (or a final) look."""

    rounds: int
    estimate: float
    low: float
    high: float
    level: float
    decision: str
    interim: bool
    method: str
    threshold: float = 0.0
    note: str = ""


def look(log_ratios: Sequence[float] | np.ndarray, plan: SequentialPlan, threshold: float = 0.0,
         final: bool = False) -> Look:
    """Examine ``log_ratios`` (d_i = ln(time_A_i/time_B_i), one per round) at a look of ``plan``.

    With δ = ln(1 + ``threshold``) and [L, U] the interval of ln(time_A/time_B):

    * ``"faster"`` (B faster by more than the threshold): L > δ, i.e. low > 1 + threshold;
    * ``"slower"`` (B slower by more than the threshold): U < −δ, i.e. high < 1/(1 + threshold);
    * ``"equivalent"`` (only when threshold > 0): −δ < L and U < δ, i.e. the interval lies
      inside (1/(1 + threshold), 1 + threshold);
    * otherwise ``"continue"`` at an interim look, ``"no difference"`` at the last one (the
      look at ``max_rounds``, or ``final=True``: a stop by budget or interrupt).

    ``len(log_ratios)`` must be one of ``plan.looks()`` unless ``final``.
    """
    d = np.asarray(log_ratios, dtype=float).ravel()
    n = d.size
    if n < 1:
        raise ValueError("no rounds to look at")
    if not np.all(np.isfinite(d)):
        raise ValueError("log ratios must be finite")
    if not (threshold >= 0 and math.isfinite(threshold)):
        raise ValueError(f"threshold must be ≥ 0, got {threshold!r}")
    final = final or n == plan.max_rounds
    level = plan.level_at(n, final=final)
    si = signed_rank_interval(d, confidence=level, exact=n <= EXACT_MAX)
    low, high, note = si.low, si.high, si.note
    kind = "exact" if si.method == "exact" else si.method
    if si.achieved_confidence is not None and si.achieved_confidence < level - 1e-12:
        low, high = -math.inf, math.inf
        note = ((note + "; ") if note else "") + (
            f"{n} rounds cannot give a {level:.6g} interval: the interval is the whole line")
    delta = math.log1p(threshold)
    if low > delta:
        decision = "faster"
    elif high < -delta:
        decision = "slower"
    elif threshold > 0 and -delta < low and high < delta:
        decision = "equivalent"
    else:
        decision = "no difference" if final else "continue"
    method = (f"repeated {kind} signed-rank interval (Kim–DeMets ρ={plan.rho:g}, "
              "Bonferroni over looks)")
    return Look(rounds=n, estimate=math.exp(si.estimate), low=math.exp(low), high=math.exp(high),
                level=level, decision=decision, interim=not final, method=method,
                threshold=threshold, note=note)
