"""Simulated error rates and coverage of the rank, permutation and sequential procedures.

Every simulation uses a fixed seed, so each assertion is deterministic. Allowances:

* a false-positive rate must be ≤ the 99.9% upper point of Binomial(R, α)/R for R replications
  (``fp_bound``): a procedure whose true level is α fails one such check with probability
  ≤ 0.1%, and any of the ~50 in this file with probability ≤ 5% (a 99% point would make a
  spurious failure somewhere in the file likely: with the seeds first tried, the exact
  rank-sum test, whose true level at 30 + 30 is 0.0496, rejected 127 of 2000 Pareto A/A
  pairs, 2.9 standard errors high, above the 99% point 0.0615 — 0.0499 in 100 000 pairs);
* a coverage must lie in [0.93, 0.97] around a nominal 95% (±2.9 binomial standard errors at
  R = 1000, ±3.6 at R = 1500);
* the sequential rule must have A/A false-positive rate ≤ ``fp_bound`` and interval coverage at
  stopping ≥ 0.93.

Distributions of a benchmark time (scale model: NEW = BASE-distributed draws / c, so the true
ratio BASE/NEW is c): normal N(10, 1); log-normal(0, 0.5); bimodal ½·N(10, 0.2) + ½·N(12, 0.2);
Pareto-tailed 1 + Pareto(1.5) (infinite variance).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.stats.permutation import permutation_test
from steadybench.stats.rank import ratio_interval, wilcoxon_two_sample
from steadybench.stats.sequential import SequentialPlan, look

ALPHA = 0.05
RATIO = 1.1
DISTS = ("normal", "lognormal", "bimodal", "pareto")


def fp_bound(reps: int, alpha: float = ALPHA) -> float:
    """99.9% binomial upper allowance for a false-positive rate estimated from ``reps`` runs."""
    return float(sps.binom.ppf(0.999, reps, alpha)) / reps


def draw(rng: np.random.Generator, dist: str, size) -> np.ndarray:
    if dist == "normal":
        return rng.normal(10.0, 1.0, size)
    if dist == "lognormal":
        return rng.lognormal(0.0, 0.5, size)
    if dist == "bimodal":
        upper = rng.random(size) < 0.5
        return np.where(upper, rng.normal(12.0, 0.2, size), rng.normal(10.0, 0.2, size))
    return 1.0 + rng.pareto(1.5, size)


@pytest.mark.parametrize("n", [10, 30, 100])
@pytest.mark.parametrize("dist", DISTS)
def test_ratio_interval_coverage_and_rank_sum_level(n, dist):
    reps = 1000 if n == 100 else 1500
    rng = np.random.default_rng([n, DISTS.index(dist), 1])
    base = draw(rng, dist, (reps, n))
    new = draw(rng, dist, (reps, n)) / RATIO
    covered = 0
    for b, w in zip(base, new, strict=True):
        ci = ratio_interval(b, w)
        covered += ci.low <= RATIO <= ci.high
    coverage = covered / reps
    assert 0.93 <= coverage <= 0.97, coverage
    # the method is the Hodges–Lehmann interval of the log shift: exact below 50 a side
    assert ci.method.startswith("Hodges–Lehmann ratio, " + ("exact" if n < 50 else "Wilcoxon"))
    if n < 50:  # exact intervals: the achieved level is known and ≥ 95%
        assert ci.achieved_confidence >= 0.95
    a = draw(rng, dist, (reps, n))
    b = draw(rng, dist, (reps, n))
    rejected = sum(wilcoxon_two_sample(u, v).p_value <= ALPHA for u, v in zip(a, b, strict=True))
    assert rejected / reps <= fp_bound(reps)


@pytest.mark.parametrize("dist", ["normal", "lognormal", "pareto"])
def test_bonett_price_coverage_large_n(dist):
    reps, n = 1000, 100
    rng = np.random.default_rng([7, DISTS.index(dist)])
    base = draw(rng, dist, (reps, n))
    new = draw(rng, dist, (reps, n)) / RATIO
    covered = sum(
        (lambda ci: ci.low <= RATIO <= ci.high)(ratio_interval(b, w, method="bonett-price"))
        for b, w in zip(base, new, strict=True))
    assert 0.93 <= covered / reps <= 0.97


def test_bonett_price_known_failure_when_the_median_has_no_density():
    # A documented limitation, not a tolerance: with a 50/50 two-mode mixture the population
    # median lies in the empty gap between the modes, the sample median jumps from one mode to
    # the other, and a median-based interval (Bonett–Price included) under-covers badly
    # (~58% at n = 100, ~53% at n = 1000). The Hodges–Lehmann path, used up to
    # PAIRWISE_LIMIT pairs, covers on the same distribution
    # (test_ratio_interval_coverage_and_rank_sum_level[bimodal-100]).
    reps, n = 1000, 100
    rng = np.random.default_rng([7, 99])
    base = draw(rng, "bimodal", (reps, n))
    new = draw(rng, "bimodal", (reps, n)) / RATIO
    covered = sum(
        (lambda ci: ci.low <= RATIO <= ci.high)(ratio_interval(b, w, method="bonett-price"))
        for b, w in zip(base, new, strict=True))
    assert covered / reps < 0.8


@pytest.mark.parametrize(("dist", "sizes"), [("bimodal", (10, 10)), ("bimodal", (8, 14)),
                                             ("pareto", (10, 10)), ("pareto", (8, 14))])
@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_permutation_test_holds_its_level(dist, sizes, statistic):
    reps = 600
    rng = np.random.default_rng([11, DISTS.index(dist), sizes[0], len(statistic)])
    x = draw(rng, dist, (reps, sizes[0]))
    y = draw(rng, dist, (reps, sizes[1]))
    rejections = {"two": 0, "greater": 0, "less": 0}
    for i in range(reps):
        res = permutation_test(x[i], y[i], statistic=statistic, n_resamples=99, seed=i)
        rejections["two"] += res.p_two_sided <= ALPHA
        rejections["greater"] += res.p_greater <= ALPHA
        rejections["less"] += res.p_less <= ALPHA
    for count in rejections.values():
        assert count / reps <= fp_bound(reps)


# --------------------------------------------------------------------------------------------
# sequential A/B


PLAN = SequentialPlan(max_rounds=96, min_rounds=12)  # looks at 12, 24, 48, 96


def round_times(rng: np.random.Generator, shape: str, size) -> np.ndarray:
    """One run's time (arbitrary unit) of a round, before a common drift factor."""
    if shape == "lognormal":
        return rng.lognormal(0.0, 0.05, size)
    if shape == "heavy":
        return 1.0 + 0.02 * np.abs(rng.standard_t(1.5, size))
    if shape == "bimodal":
        return np.where(rng.random(size) < 0.5, 1.0, 1.1) * rng.lognormal(0.0, 0.01, size)
    return rng.lognormal(0.0, 0.02, size)  # "quantized": rounded below (ties and zeros)


def run_sequential(d: np.ndarray, plan: SequentialPlan) -> object:
    """Look at each scheduled look, stop at the first decision (or the last look)."""
    for n in plan.looks():
        result = look(d[:n], plan)
        if result.decision != "continue":
            return result
    return result


@pytest.mark.parametrize("shape", ["lognormal", "heavy", "bimodal", "quantized"])
@pytest.mark.parametrize("effect", [1.0, 1.03])
def test_sequential_error_rate_and_coverage_at_stopping(shape, effect):
    reps = 400 if effect == 1.0 else 300
    rng = np.random.default_rng([13, len(shape), int(effect * 100)])
    rounds = PLAN.max_rounds
    # a drift common to both runs of a round (the machine slowing down, warming up)
    drift = np.exp(np.cumsum(rng.normal(0.0, 0.01, (reps, rounds)), axis=1))
    time_a = effect * round_times(rng, shape, (reps, rounds)) * drift
    time_b = round_times(rng, shape, (reps, rounds)) * drift
    if shape == "quantized":  # a clock of 1% resolution
        time_a, time_b = np.round(time_a, 2), np.round(time_b, 2)
    d = np.log(time_a / time_b)
    wrong = covered = 0
    for row in d:
        result = run_sequential(row, PLAN)
        covered += result.low <= effect <= result.high
        if effect == 1.0:
            wrong += result.decision in ("faster", "slower")
        else:
            wrong += result.decision == "slower"
    assert wrong / reps <= fp_bound(reps)
    assert covered / reps >= 0.93


def test_the_large_sample_interval_keeps_its_level_on_bimodal_data(monkeypatch):
    """Above the pairwise limit ratio_interval uses a random subsample, not Bonett–Price, so the
    bimodal case that breaks Bonett–Price (above) keeps its coverage."""
    from steadybench.stats import rank

    monkeypatch.setattr(rank, "PAIRWISE_LIMIT", 30 * 30)
    monkeypatch.setattr(rank, "SUBSAMPLE", 20)
    rng = np.random.default_rng(2024)
    reps, hits = 400, 0
    for _ in range(reps):
        b = draw(rng, "bimodal", 60)
        w = draw(rng, "bimodal", 60) / RATIO
        ci = ratio_interval(b, w)
        hits += ci.low <= RATIO <= ci.high
    assert 0.93 <= hits / reps <= 0.985
