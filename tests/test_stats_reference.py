"""Rank, Kolmogorov–Smirnov, permutation and sequential statistics against references computed
independently of the implementation.

References are of three kinds:

* brute force from the definitions: every split of the pooled sample (rank-sum, KS with ties,
  permutation tests), every vector of signs (signed rank), R's ``W(d)`` evaluated by ranking
  with ``scipy.stats.rankdata`` between every pair of consecutive differences;
* formulas evaluated by hand in the test (normal approximations, Bonett–Price);
* R output: the examples of R's help pages (``?wilcox.test``) and R 4.2.2 runs whose calls are
  quoted next to each number (``Rscript -e '...'`` reproduces them).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.stats import rank
from steadybench.stats.ks import ks_two_sample
from steadybench.stats.permutation import permutation_test
from steadybench.stats.rank import (
    pwilcox,
    qsignrank,
    qwilcox,
    ratio_interval,
    shift_interval,
    signed_rank,
    signed_rank_interval,
    wilcoxon_two_sample,
)
from steadybench.stats.sequential import SequentialPlan, look

# --------------------------------------------------------------------------------------------
# brute-force references


def splits(total: int, nx: int):
    """Every labelling of ``total`` positions with ``nx`` x's, as boolean masks."""
    for combo in itertools.combinations(range(total), nx):
        mask = np.zeros(total, dtype=bool)
        mask[list(combo)] = True
        yield mask


def w_count(x: np.ndarray, y: np.ndarray) -> float:
    """R's W: pairs with x > y, ties ½ (equals the rank-sum form)."""
    d = np.subtract.outer(x, y)
    return float(np.sum(d > 0) + 0.5 * np.sum(d == 0))


def brute_rank_sum_pmf(m: int, n: int) -> np.ndarray:
    counts = np.zeros(m * n + 1)
    ranks = np.arange(1, m + n + 1)
    for mask in splits(m + n, m):
        counts[int(ranks[mask].sum() - m * (m + 1) // 2)] += 1
    return counts / counts.sum()


def brute_signrank_pmf(n: int) -> np.ndarray:
    counts = np.zeros(n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[int(np.dot(signs, np.arange(1, n + 1)))] += 1
    return counts / counts.sum()


def r_exact_p(dist: np.ndarray, stat: float, centre: float, alternative: str) -> float:
    """R's exact p-value rules from a null pmf."""
    k = int(round(stat))
    upper, lower = float(dist[k:].sum()), float(dist[:k + 1].sum())
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2 * (upper if stat > centre else lower))


def r_quantile(dist: np.ndarray, p: float) -> int:
    """qwilcox/qsignrank for p ≤ ½: the smallest q with P(S ≤ q) ≥ p."""
    return int(np.argmax(np.cumsum(dist) >= p - 1e-12))


def brute_ks_p(x, y, alternative: str) -> float:
    """P(statistic ≥ observed) over every relabelling of the pooled values, the statistic being
    evaluated only at the ends of runs of equal values."""
    w = np.concatenate((x, y))
    m, n = len(x), len(y)
    order = np.argsort(w, kind="stable")
    ends = np.r_[w[order][1:] != w[order][:-1], True]

    def stat(mask: np.ndarray) -> int:
        i = np.cumsum(mask[order])
        j = np.arange(1, m + n + 1) - i
        d = (i * n - j * m)[ends]
        return {"two-sided": np.max(np.abs(d)), "greater": np.max(d), "less": np.max(-d)}[
            alternative]

    obs = stat(np.r_[np.ones(m, bool), np.zeros(n, bool)])
    hits = [stat(mask) >= obs for mask in splits(m + n, m)]
    return float(np.mean(hits))


# --------------------------------------------------------------------------------------------
# null distributions


@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 3), (4, 4), (3, 7), (6, 6), (8, 8)])
def test_rank_sum_distribution_matches_enumeration(m, n):
    ref = np.cumsum(brute_rank_sum_pmf(m, n))
    ours = np.array([pwilcox(q, m, n) for q in range(m * n + 1)])
    assert ours == pytest.approx(ref, abs=1e-14)
    assert pwilcox(m * n - 1, m, n, lower_tail=False) == pytest.approx(1 - ref[-2], abs=1e-15)
    for p in (0.001, 0.01, 0.025, 0.05, 0.25, 0.5):
        assert qwilcox(p, m, n) == r_quantile(brute_rank_sum_pmf(m, n), p)


def test_rank_sum_distribution_against_r():
    # R 4.2.2: qwilcox(0.025, 10, 10) = 24; pwilcox(23, 10, 10) = 0.0216285262724891
    assert qwilcox(0.025, 10, 10) == 24
    assert pwilcox(23, 10, 10) == pytest.approx(0.0216285262724891, rel=1e-12)
    # tails keep full relative precision: P(W = 0) = 1/C(98, 49)
    assert pwilcox(0, 49, 49) == pytest.approx(1 / math.comb(98, 49), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 12])
def test_signed_rank_distribution_matches_enumeration(n):
    dist = brute_signrank_pmf(n)
    pmf = rank._signrank_pmf(n)
    assert pmf == pytest.approx(dist, abs=1e-15)
    for p in (0.001, 0.025, 0.05, 0.3):
        assert qsignrank(p, n) == r_quantile(dist, p)
    # R 4.2.2: qsignrank(0.025, 20) = 53; psignrank(52, 20) = 0.0242204666137695
    assert qsignrank(0.025, 20) == 53
    assert rank.psignrank(52, 20) == pytest.approx(0.0242204666137695, rel=1e-12)


# --------------------------------------------------------------------------------------------
# rank-sum test


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("mu", [0.0, 0.4])
def test_exact_rank_sum_p_matches_enumeration(alternative, mu):
    rng = np.random.default_rng(11)
    x, y = rng.normal(0.5, 1, 6), rng.normal(0, 1, 7)
    pooled = np.concatenate((x - mu, y))
    obs = w_count(x - mu, y)
    null = [w_count(pooled[mask], pooled[~mask]) for mask in splits(13, 6)]
    dist = np.bincount(np.array(null, dtype=int), minlength=43) / len(null)
    res = wilcoxon_two_sample(x, y, alternative=alternative, mu=mu)
    assert res.method == "exact"
    assert res.statistic == obs
    assert res.p_value == pytest.approx(r_exact_p(dist, obs, 21, alternative), abs=1e-14)


def test_r_help_example_hollander_wolfe():
    # ?wilcox.test, Hollander & Wolfe (1973) p. 69: permeability constants
    x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46]
    y = [1.15, 0.88, 0.90, 0.74, 1.21]
    res = wilcoxon_two_sample(x, y, alternative="greater")
    assert (res.statistic, res.method) == (35, "exact")
    assert res.p_value == pytest.approx(0.1272, abs=5e-5)  # help page; R 4.2.2: 0.127206127206127
    assert res.p_value == pytest.approx(0.127206127206127, rel=1e-12)
    # wilcox.test(x, y, conf.int = TRUE, conf.level = .9): [-0.08, 0.72], estimate 0.305
    ci = shift_interval(x, y, confidence=0.9)
    assert (ci.low, ci.high, ci.estimate) == pytest.approx((-0.08, 0.72, 0.305), abs=1e-12)
    assert ci.method == "exact" and ci.reported_confidence == 0.9
    # R 4.2.2: wilcox.test(x, y, alternative = "greater", exact = FALSE, correct = FALSE)
    approx = wilcoxon_two_sample(x, y, alternative="greater", exact=False, correct=False)
    assert approx.p_value == pytest.approx(0.110335680959923, rel=1e-10)
    # R 4.2.2: wilcox.test(x, y, exact = FALSE): 0.244623605126983
    assert wilcoxon_two_sample(x, y, exact=False).p_value == pytest.approx(0.244623605126983,
                                                                            rel=1e-10)


def test_exactness_rules_sample_size_and_ties():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=50), rng.normal(size=50)
    assert wilcoxon_two_sample(a[:49], b[:49]).method == "exact"
    assert wilcoxon_two_sample(a, b[:49]).method == "normal approximation"
    assert wilcoxon_two_sample(a[:49], b).method == "normal approximation"
    assert wilcoxon_two_sample(a, b, exact=True).method == "exact"
    tied = wilcoxon_two_sample([1.0, 2.0, 3.0], [3.0, 4.0, 5.0])
    assert tied.method == "normal approximation" and tied.ties
    forced = wilcoxon_two_sample([1.0, 2.0, 3.0], [3.0, 4.0, 5.0], exact=True)
    assert forced.method == "normal approximation" and "ties" in forced.note
    # ties are judged on x − mu pooled with y
    assert wilcoxon_two_sample([1.5, 2.5], [1.0, 3.0], mu=0.5).method == "normal approximation"
    assert signed_rank(a[:49]).method == "exact"
    assert signed_rank(a).method == "normal approximation"
    assert signed_rank([0.0, 1.0, -2.0, 3.0]).method == "normal approximation"  # a zero
    assert signed_rank([1.0, -1.0, 2.0]).method == "normal approximation"  # tied |d|


def test_normal_approximation_by_hand_with_ties():
    x = np.array([1.0, 2.0, 2.0, 3.0, 5.0, 5.0, 7.0])
    y = np.array([2.0, 3.0, 3.0, 4.0, 6.0, 8.0])
    nx, ny = 7, 6
    ranks = sps.rankdata(np.concatenate((x, y)))
    w = ranks[:nx].sum() - nx * (nx + 1) / 2
    _, t = np.unique(np.concatenate((x, y)), return_counts=True)
    n_all = nx + ny
    sigma = math.sqrt(nx * ny / 12 * ((n_all + 1) - np.sum(t**3 - t) / (n_all * (n_all - 1))))
    dz = w - nx * ny / 2
    for alternative, corr, p_of in [
        ("two-sided", np.sign(dz) * 0.5, lambda z: 2 * min(sps.norm.cdf(z), sps.norm.sf(z))),
        ("greater", 0.5, sps.norm.sf),
        ("less", -0.5, sps.norm.cdf),
    ]:
        res = wilcoxon_two_sample(x, y, alternative=alternative)
        assert res.statistic == w
        assert res.z == pytest.approx((dz - corr) / sigma, rel=1e-12)
        assert res.p_value == pytest.approx(p_of((dz - corr) / sigma), rel=1e-12)
    # R 4.2.2, x <- round(10 * sin(1:40)); y <- round(10 * cos(1:60)) + 1;
    # wilcox.test(x, y): W = 1137.5, p-value = 0.662187085845713
    xs = np.round(10 * np.sin(np.arange(1, 41)))
    ys = np.round(10 * np.cos(np.arange(1, 61))) + 1
    res = wilcoxon_two_sample(xs, ys)
    assert res.statistic == 1137.5
    assert res.p_value == pytest.approx(0.662187085845713, rel=1e-10)


def test_8x8_exact_and_asymptotic_disagree_at_5_percent():
    x = np.arange(1, 9) + np.array([0.1, 0.7, 0.3, 0.9, 0.5, 0.2, 0.8, 0.4])
    y = np.arange(4, 12) + np.array([0.6, 0.15, 0.35, 0.05, 0.95, 0.45, 0.25, 0.75])
    pooled = np.concatenate((x, y))
    null = np.array([w_count(pooled[m], pooled[~m]) for m in splits(16, 8)])
    w = w_count(x, y)
    brute = min(1.0, 2 * np.mean(null <= w))  # w = 13 < 32
    z = (w - 32 + 0.5) / math.sqrt(64 * 17 / 12)
    exact = wilcoxon_two_sample(x, y)
    approx = wilcoxon_two_sample(x, y, exact=False)
    assert exact.method == "exact" and approx.method == "normal approximation"
    assert exact.p_value == pytest.approx(brute, abs=1e-14) == 642 / 12870
    assert approx.p_value == pytest.approx(2 * sps.norm.cdf(z), rel=1e-12)
    # R 4.2.2: wilcox.test(x, y) 0.0498834498834499; exact = FALSE: 0.0520296176222252
    assert exact.p_value == pytest.approx(0.0498834498834499, rel=1e-12)
    assert approx.p_value == pytest.approx(0.0520296176222252, rel=1e-10)
    assert exact.p_value < 0.05 < approx.p_value


# --------------------------------------------------------------------------------------------
# signed-rank test


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_signed_rank_p_matches_sign_flips(alternative):
    rng = np.random.default_rng(4)
    d = rng.normal(0.4, 1, 10)
    r = sps.rankdata(np.abs(d))
    v = r[d > 0].sum()
    null = np.array([np.dot(s, r) for s in itertools.product((0, 1), repeat=10)])
    dist = np.bincount(null.astype(int), minlength=56) / null.size
    res = signed_rank(d, alternative=alternative)
    assert res.method == "exact" and res.statistic == v
    assert res.p_value == pytest.approx(r_exact_p(dist, v, 27.5, alternative), abs=1e-14)


def test_r_help_example_depression_paired():
    # ?wilcox.test, Hollander & Wolfe (1973) p. 29: Hamilton depression scale, first and
    # second visit. R 4.2.2 and the help page: paired, alternative = "greater":
    # V = 40, p-value = 0.01953 (= 10/512); the two-sided p-value is 0.03906.
    x = np.array([1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30])
    y = np.array([0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29])
    res = signed_rank(x - y, alternative="greater")
    assert (res.statistic, res.method) == (40, "exact")
    assert res.p_value == pytest.approx(10 / 512, abs=1e-15)
    assert signed_rank(x - y).p_value == pytest.approx(20 / 512, abs=1e-15)
    # same data as y - x against "less" (help page: V = 5, p-value = 0.01953)
    assert signed_rank(y - x, alternative="less").statistic == 5
    # R 4.2.2: wilcox.test(x, y, paired = TRUE, conf.int = TRUE): [0.010, 0.786], 0.46
    ci = signed_rank_interval(x - y)
    assert (ci.low, ci.high, ci.estimate) == pytest.approx((0.010, 0.786, 0.46), abs=1e-12)


# --------------------------------------------------------------------------------------------
# intervals


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_exact_shift_interval_is_r_definition(confidence):
    rng = np.random.default_rng(9)
    x, y = rng.lognormal(0.2, 0.5, 6), rng.lognormal(0, 0.5, 7)
    dist = brute_rank_sum_pmf(6, 7)
    alpha = 1 - confidence
    qu = r_quantile(dist, alpha / 2) or 1
    diffs = np.sort(np.subtract.outer(x, y).ravel())
    ci = shift_interval(x, y, confidence=confidence)
    assert ci.method == "exact"
    assert (ci.low, ci.high) == (diffs[qu - 1], diffs[42 - qu])
    assert ci.estimate == np.median(diffs)
    assert ci.achieved_confidence == pytest.approx(1 - 2 * dist[:qu].sum(), abs=1e-14)
    assert ci.achieved_confidence >= confidence - 1e-12


def test_exact_interval_unreachable_level_uses_qu_1():
    # qwilcox(0.025, 2, 3) = 0, so R takes qu = 1: the range of the differences, whose level
    # is 1 − 2·P(W = 0) = 1 − 2/10, reported instead of 0.95 (achieved α − α > α/2)
    x, y = [3.0, 5.0], [1.0, 2.0, 4.5]
    ci = shift_interval(x, y)
    assert (ci.low, ci.high) == (-1.5, 4.0)
    assert ci.achieved_confidence == pytest.approx(0.8)
    assert ci.reported_confidence == pytest.approx(0.8)
    one = signed_rank_interval([0.3, -0.1, 0.7])  # qsignrank(0.025, 3) = 0: level 1 − 2/8
    assert (one.low, one.high) == (-0.1, 0.7)
    assert one.achieved_confidence == pytest.approx(0.75)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_exact_signed_rank_interval_is_r_definition(confidence):
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 1, 12)
    dist = brute_signrank_pmf(12)
    qu = r_quantile(dist, (1 - confidence) / 2) or 1
    walsh = np.sort([(d[i] + d[j]) / 2 for i in range(12) for j in range(i, 12)])
    ci = signed_rank_interval(d, confidence=confidence)
    assert (ci.low, ci.high) == pytest.approx((walsh[qu - 1], walsh[78 - qu]), abs=1e-15)
    assert ci.estimate == pytest.approx(np.median(walsh), abs=1e-15)


def r_w_two_sample(x, y, d):
    """R's W(d) in wilcox.test's approximate conf.int: corrected z of rank(c(x − d, y))."""
    nx, ny = len(x), len(y)
    pooled = np.concatenate((x - d, y))
    r = sps.rankdata(pooled)
    dz = r[:nx].sum() - nx * (nx + 1) / 2 - nx * ny / 2
    _, t = np.unique(pooled, return_counts=True)
    n = nx + ny
    sigma = math.sqrt(nx * ny / 12 * ((n + 1) - np.sum(t**3 - t) / (n * (n - 1))))
    return (dz - np.sign(dz) * 0.5) / sigma


def test_approximate_shift_interval_is_where_r_statistic_crosses():
    rng = np.random.default_rng(13)
    x, y = rng.normal(0.5, 1, 9), rng.normal(0, 1, 11)
    diffs = np.unique(np.subtract.outer(x, y))
    mids = (diffs[1:] + diffs[:-1]) / 2
    w = np.array([r_w_two_sample(x, y, m) for m in mids])
    z = sps.norm.isf(0.025)
    # lower end: the difference after which W(d) drops to ≤ z; upper: after which it is < −z
    low = diffs[np.argmax(w <= z)]
    high = diffs[np.argmax(w <= -z)]
    ci = shift_interval(x, y, exact=False)
    assert ci.method == "normal approximation"
    assert (ci.low, ci.high) == (low, high)
    # R 4.2.2: x <- 10 + sin(1:60); y <- 10.3 + cos(1:70);
    # wilcox.test(x, y, conf.int = TRUE, tol.root = 1e-13)$conf.int
    xs, ys = 10 + np.sin(np.arange(1, 61)), 10.3 + np.cos(np.arange(1, 71))
    big = shift_interval(xs, ys)
    assert (big.low, big.high) == pytest.approx((-0.494064739900649, -0.0583262997057622),
                                                rel=1e-12)
    assert wilcoxon_two_sample(xs, ys).p_value == pytest.approx(0.0156576243852533, rel=1e-10)
    # R 4.2.2: wilcox.test(sin(1:55) + 0.2, conf.int = TRUE, tol.root = 1e-13)
    one = signed_rank_interval(np.sin(np.arange(1, 56)) + 0.2)
    assert (one.low, one.high) == pytest.approx((0.0259561877515342, 0.397305872507405),
                                                rel=1e-12)
    # ties: x <- round(10 * sin(1:40)); y <- round(10 * cos(1:60)) + 1 → [-3, 2]
    tied = shift_interval(np.round(10 * np.sin(np.arange(1, 41))),
                          np.round(10 * np.cos(np.arange(1, 61))) + 1)
    assert (tied.low, tied.high) == (-3.0, 2.0)


def r_w_one_sample(x, d):
    """R's W(d) in the one-sample approximate conf.int (zeros dropped, signed mid-ranks)."""
    xd = x - d
    xd = xd[xd != 0]
    n = xd.size
    r = sps.rankdata(np.abs(xd))
    zd = r[xd > 0].sum() - n * (n + 1) / 4
    _, t = np.unique(np.abs(xd), return_counts=True)
    sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24 - np.sum(t**3 - t) / 48)
    return (zd - np.sign(zd) * 0.5) / sigma


@pytest.mark.parametrize("seed", range(4))
def test_approximate_intervals_with_ties_cross_where_r_statistic_does(seed):
    rng = np.random.default_rng(100 + seed)
    x = np.round(rng.normal(0.4, 1, 40), 1)
    y = np.round(rng.normal(0, 1, 35), 1)
    assert np.any(x == 0)  # ties, and zeros for the one-sample interval
    z = sps.norm.isf(0.025)
    diffs = np.unique(np.subtract.outer(x, y))
    w = np.array([r_w_two_sample(x, y, m) for m in (diffs[1:] + diffs[:-1]) / 2])
    ci = shift_interval(x, y)
    assert ci.method == "normal approximation"
    # decimal data: x_i − y_j = −0.3 may come out as −0.3 or −0.29999999999999993 (one ulp
    # apart, no point between them), hence the 1e-12
    assert (ci.low, ci.high) == pytest.approx((diffs[np.argmax(w <= z)],
                                               diffs[np.argmax(w <= -z)]), abs=1e-12)
    # R drops the zeros of x before everything, conf.int included
    nz = x[x != 0]
    walsh = np.unique([(nz[i] + nz[j]) / 2 for i in range(nz.size) for j in range(i, nz.size)])
    w1 = np.array([r_w_one_sample(nz, m) for m in (walsh[1:] + walsh[:-1]) / 2])
    one = signed_rank_interval(x)
    assert one.method == "normal approximation"
    assert (one.low, one.high) == pytest.approx((walsh[np.argmax(w1 <= z)],
                                                 walsh[np.argmax(w1 <= -z)]), abs=1e-12)


def test_pairwise_limit_refuses(monkeypatch):
    monkeypatch.setattr(rank, "PAIRWISE_LIMIT", 100)
    with pytest.raises(ValueError, match="PAIRWISE_LIMIT"):
        shift_interval(np.arange(1.0, 12.0), np.arange(1.0, 11.0))
    with pytest.raises(ValueError, match="PAIRWISE_LIMIT"):
        signed_rank_interval(np.arange(1.0, 15.0))
    # ratio_interval switches to a random subsample instead (never O(n²), keeps its level)
    monkeypatch.setattr(rank, "SUBSAMPLE", 8)
    res = ratio_interval(np.arange(1.0, 12.0), np.arange(1.0, 11.0))
    assert "subsample of 8 values" in res.method


# --------------------------------------------------------------------------------------------
# ratio intervals


def test_bonett_price_documented_example():
    # statpsych::ci.ratio.median2 documentation (Bonett's implementation of Bonett & Price
    # 2002): Median1/Median2 = 1.162162, LL = 0.927667, UL = 1.455933
    y1 = [36, 44, 47, 42, 49, 39, 46, 31, 33, 48]
    y2 = [32, 39, 26, 35, 43, 27, 40, 37, 34, 29, 49, 42, 40]
    res = ratio_interval(y1, y2, method="bonett-price")
    assert (res.estimate, res.low, res.high) == pytest.approx((1.162162, 0.927667, 1.455933),
                                                              abs=5e-7)


def test_bonett_price_by_hand():
    base = [2.0, 3.0, 5.0, 7.0, 11.0]  # n = 5: a = round(2.5 − √5) = 0 → 1: y(1), y(5)
    new = [1.0, 1.5, 2.0, 4.0]  # n = 4: a = round(2 − 2) = 0 → 1: y(1), y(4)
    z_b = sps.norm.isf(1 / 32)  # P(B ≤ 0), B ~ Bin(5, ½)
    z_n = sps.norm.isf(1 / 16)  # Bin(4, ½)
    se_b = (math.log(11) - math.log(2)) / (2 * z_b)
    se_n = (math.log(4) - math.log(1)) / (2 * z_n)
    est = 5.0 / 1.75
    half = 1.959963984540054 * math.hypot(se_b, se_n)
    res = ratio_interval(base, new, method="bonett-price")
    assert res.estimate == pytest.approx(est, rel=1e-14)
    assert (res.low, res.high) == pytest.approx((est * math.exp(-half), est * math.exp(half)),
                                                rel=1e-12)


def test_ratio_interval_hodges_lehmann_is_exp_of_log_shift():
    base = [1.10, 1.31, 1.05, 1.22, 1.40, 1.18, 1.27]
    new = [1.02, 0.98, 1.11, 1.07, 0.95, 1.13]
    res = ratio_interval(base, new)
    ref = shift_interval(np.log(base), np.log(new))
    assert res.method == "Hodges–Lehmann ratio, exact Wilcoxon interval"
    assert (res.estimate, res.low, res.high) == pytest.approx(
        (math.exp(ref.estimate), math.exp(ref.low), math.exp(ref.high)), rel=1e-15)
    assert res.achieved_confidence == ref.achieved_confidence


def test_degenerate_and_invalid_input():
    with pytest.raises(ValueError, match="positive"):
        ratio_interval([1.0, 0.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        ratio_interval([1.0, 2.0], [-1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        wilcoxon_two_sample([1.0, np.nan], [1.0])
    with pytest.raises(ValueError, match="at least one"):
        wilcoxon_two_sample([], [1.0])
    with pytest.raises(ValueError, match="2 values"):
        ratio_interval([1.0], [1.0, 2.0], method="bonett-price")
    # constant samples: no crash; every difference equal → that single value
    same = ratio_interval([1.5] * 5, [1.5] * 5)
    assert (same.estimate, same.low, same.high) == (1.0, 1.0, 1.0)
    twice = ratio_interval([2.0] * 4, [1.0] * 6)
    assert (twice.estimate, twice.low, twice.high) == pytest.approx((2.0, 2.0, 2.0))
    bp = ratio_interval([2.0] * 4, [1.0] * 6, method="bonett-price")
    assert (bp.estimate, bp.low, bp.high) == (2.0, 2.0, 2.0)
    tied = wilcoxon_two_sample([3.0] * 4, [3.0] * 5)  # every value tied: z = 0
    assert tied.p_value == 1.0 and tied.z == 0.0
    assert signed_rank([0.0, 0.0]).p_value == 1.0
    zero = signed_rank_interval([0.0, 0.0, 0.0])
    assert (zero.low, zero.high) == (0.0, 0.0)
    const = signed_rank_interval([0.2] * 60)
    assert (const.low, const.estimate, const.high) == (0.2, 0.2, 0.2)


# --------------------------------------------------------------------------------------------
# Kolmogorov–Smirnov


KS_X = [1, 2, 2, 3, 3, 4, 5]
KS_Y = [2, 3, 3, 4, 4, 5, 6, 6]


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_ks_exact_with_ties_is_the_permutation_distribution(alternative):
    res = ks_two_sample(KS_X, KS_Y, alternative=alternative)
    assert res.method == "exact" and res.ties
    assert res.p_value == pytest.approx(brute_ks_p(KS_X, KS_Y, alternative), abs=1e-14)
    rng = np.random.default_rng(21)
    for _ in range(6):
        x = rng.integers(0, 4, int(rng.integers(2, 7))).astype(float)
        y = rng.integers(0, 5, int(rng.integers(2, 7))).astype(float)
        got = ks_two_sample(x, y, alternative=alternative).p_value
        assert got == pytest.approx(brute_ks_p(x, y, alternative), abs=1e-14)


def test_ks_against_r_4_2():
    # R 4.2.2: ks.test(c(1,2,2,3,3,4,5), c(2,3,3,4,4,5,6,6)): D = 0.339285714285714,
    # p = 0.365967365967367 (scipy.stats.ks_2samp, which ignores the ties, gives 0.660)
    two = ks_two_sample(KS_X, KS_Y)
    assert two.statistic == pytest.approx(0.339285714285714, abs=1e-14)
    assert two.p_value == pytest.approx(0.365967365967367, abs=1e-13)
    assert ks_two_sample(KS_X, KS_Y, "greater").p_value == pytest.approx(0.230613830613832,
                                                                         abs=1e-13)
    less = ks_two_sample(KS_X, KS_Y, "less")  # R: D^- = 5.6e-17 (rounding), p = 1
    assert (less.statistic, less.p_value) == (0.0, 1.0)
    # exact = FALSE: 0.783347384828174 (R's pkstwo at tol 1e-6)
    assert ks_two_sample(KS_X, KS_Y, exact=False).p_value == pytest.approx(0.783347384828174,
                                                                           abs=1e-13)
    # x <- round(10 * sin(1:40)); y <- round(10 * cos(1:60)) + 1 (40·60 < 10000: exact)
    x = np.round(10 * np.sin(np.arange(1, 41)))
    y = np.round(10 * np.cos(np.arange(1, 61))) + 1
    res = ks_two_sample(x, y)
    assert (res.statistic, res.method) == (0.125, "exact")
    assert res.p_value == pytest.approx(0.696590532653897, abs=1e-13)
    assert ks_two_sample(x, y, "greater").p_value == pytest.approx(0.358768467442929, abs=1e-13)
    assert ks_two_sample(x, y, exact=False).p_value == pytest.approx(0.847488453948251,
                                                                     abs=1e-13)


def test_ks_less_with_ties_departs_from_r_4_2_2_which_uses_the_greater_distribution():
    # x = (-1, 1, -1), y = (-1, -1). Pooled: four -1's, one 1. D⁻ = max(F_y − F_x) at run ends
    # = 1 − 2/3 = 1/3. Relabellings: if the 1 is an x (6 of 10) the run of -1's holds two x's,
    # F_y − F_x = 1/3 ≥ 1/3; if it is a y (4 of 10) F_y − F_x = −1/2 there: P = 6/10.
    # R 4.2.2's psmirnov evaluates F_x − F_y for both one-sided alternatives and prints 0.4,
    # which is P(D⁺ ≥ 1/3) (the 4 relabellings with the 1 in y).
    x, y = [-1.0, 1.0, -1.0], [-1.0, -1.0]
    res = ks_two_sample(x, y, alternative="less")
    assert res.statistic == pytest.approx(1 / 3)
    assert res.p_value == pytest.approx(0.6) == brute_ks_p(x, y, "less")
    # x <- round(10 * sin(1:40)); y <- round(10 * cos(1:60)) + 1: R 4.2.2 prints
    # 0.823616359151652 for "less"; that is the upper tail of D⁺ at the observed D⁻
    xs = np.round(10 * np.sin(np.arange(1, 41)))
    ys = np.round(10 * np.cos(np.arange(1, 61))) + 1
    from steadybench.stats import ks

    _, _, ends = ks._lattice(xs, ys)
    assert ks._exact_upper(40, 60, ends, 100, "greater") == pytest.approx(0.823616359151652,
                                                                            abs=1e-13)
    assert ks_two_sample(xs, ys, "less").p_value != pytest.approx(0.823616359151652, abs=1e-3)


def test_ks_no_ties_matches_classical_exact_and_one_sided_asymptotic():
    rng = np.random.default_rng(8)
    x, y = rng.normal(0, 1, 6), rng.normal(0.8, 1, 7)
    for alternative in ("two-sided", "greater", "less"):
        res = ks_two_sample(x, y, alternative=alternative)
        assert not res.ties
        assert res.p_value == pytest.approx(brute_ks_p(x, y, alternative), abs=1e-14)
    big_x, big_y = rng.normal(0, 1, 150), rng.normal(0.3, 1, 120)
    res = ks_two_sample(big_x, big_y, alternative="greater")
    assert res.method == "asymptotic"  # 150·120 ≥ 10000
    n = 150 * 120 / 270
    assert res.p_value == pytest.approx(math.exp(-2 * n * res.statistic**2), rel=1e-12)
    two = ks_two_sample(big_x, big_y)
    # R's pkstwo truncates the series at tolerance 1e-6: within 1e-5 of the exact limit
    assert two.p_value == pytest.approx(sps.kstwobign.sf(math.sqrt(n) * two.statistic),
                                        abs=1e-5)


def test_ks_statistic_only_at_run_ends():
    # inside the run of 1's the ECDFs are undefined; at its end both are 1
    res = ks_two_sample([1.0, 1.0], [1.0, 1.0, 2.0])
    assert res.statistic == pytest.approx(1 / 3)
    assert ks_two_sample([1.0, 1.0], [1.0, 1.0]).p_value == 1.0


# --------------------------------------------------------------------------------------------
# permutation test


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_permutation_exact_matches_enumeration(statistic):
    fn = np.median if statistic == "median" else np.mean
    x = np.array([3.1, 4.7, 2.2, 5.9])
    y = np.array([1.4, 2.6, 0.9, 3.3, 1.8])
    pooled = np.concatenate((x, y))
    obs = fn(x) - fn(y)
    null = np.array([fn(pooled[m]) - fn(pooled[~m]) for m in splits(9, 4)])
    eps = 1e-12
    res = permutation_test(x, y, statistic=statistic)
    assert res.method == "exact" and res.n_resamples == 126
    assert res.statistic == pytest.approx(obs)
    assert res.p_greater == pytest.approx(np.mean(null >= obs - eps))
    assert res.p_less == pytest.approx(np.mean(null <= obs + eps))
    assert res.p_two_sided == pytest.approx(np.mean(np.abs(null) >= abs(obs) - eps))


def test_permutation_monte_carlo_is_seeded_and_never_zero():
    x = np.arange(10.0, 22.0)
    y = np.arange(0.0, 12.0)
    res = permutation_test(x, y, n_resamples=999, seed=3)
    assert res.method == "Monte Carlo" and res.n_resamples == 999
    assert res.p_greater == pytest.approx(1 / 1000)  # the observed split is the most extreme
    assert res.p_less == 1.0
    again = permutation_test(x, y, n_resamples=999, seed=3)
    assert again == res
    with pytest.raises(ValueError, match="statistic"):
        permutation_test(x, y, statistic="mode")


# --------------------------------------------------------------------------------------------
# sequential plan


def test_sequential_plan_schedule_and_spending():
    plan = SequentialPlan()
    assert plan.looks() == (20, 40, 80, 160, 320)
    alphas = [1 - plan.level_at(n) for n in plan.looks()]
    assert alphas == pytest.approx([0.05 * k / 256 for k in (1, 3, 12, 48, 192)])
    assert sum(alphas) == pytest.approx(0.05, abs=1e-15)
    # a stop by budget after 100 rounds uses everything not spent by the looks at 20, 40, 80
    assert plan.level_at(100, final=True) == pytest.approx(1 - 0.05 * (1 - 1 / 16))
    assert plan.level_at(10, final=True) == pytest.approx(0.95)
    with pytest.raises(ValueError, match="not a scheduled look"):
        plan.level_at(100)
    # every look must be reachable by the exact signed-rank interval: 2^(1−n) ≤ α_k
    assert SequentialPlan.smallest_min_rounds(0.95, 320, 2.0) == 15
    with pytest.raises(ValueError, match="min_rounds ≥ 15"):
        SequentialPlan(min_rounds=10)
    assert SequentialPlan(min_rounds=20, max_rounds=170).looks() == (20, 34, 58, 100, 170)
    assert SequentialPlan(min_rounds=20, max_rounds=20).looks() == (20,)


def test_sequential_look_decisions():
    plan = SequentialPlan(max_rounds=96, min_rounds=12)
    assert plan.looks() == (12, 24, 48, 96)
    up = np.log(1.2) + 0.01 * np.sin(np.arange(12))  # A 20% slower every round: B faster
    first = look(up, plan)
    assert first.decision == "faster" and first.interim and first.low > 1
    assert first.level == pytest.approx(1 - 0.05 / 64)
    assert look(-up, plan).decision == "slower"
    noise = 0.01 * np.sin(np.arange(1, 97) * 1.7)
    assert look(noise[:24], plan).decision == "continue"
    last = look(noise, plan)
    assert last.decision == "no difference" and not last.interim
    band = look(noise, plan, threshold=0.05)
    assert band.decision == "equivalent"
    assert band.low > 1 / 1.05 and band.high < 1.05
    # "faster" needs the whole interval above 1 + threshold; here it lies inside the band
    assert look(up, plan, threshold=0.5).decision == "equivalent"  # 20% is inside ±50%
    with pytest.raises(ValueError, match="not a scheduled look"):
        look(noise[:30], plan)
    stop = look(noise[:30], plan, final=True)
    assert not stop.interim and stop.level == pytest.approx(1 - 0.05 * (1 - (24 / 96) ** 2))
    # too few rounds for the level: the interval is the whole line, no decision
    early = look(np.full(3, 0.5) + [0.0, 0.01, 0.02], plan, final=True)
    assert (early.low, early.high, early.decision) == (0.0, math.inf, "no difference")


def test_student_t_quantile_matches_r_qt():
    """stats/student.py (closed form, no scipy) against R 4.2's ``qt``: the grid in
    tests/data/r_qt.csv was written by ``df <- c(1:60, 99, 100, 249, 500, 999, 1000, 2000, 3999,
    4000); p <- c(0.55, 0.6, 0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.9999,
    0.025, 0.005); g <- expand.grid(p = p, df = df); g$q <- qt(g$p, g$df)``."""
    import csv

    from steadybench.stats.student import t_quantile

    rows = list(csv.DictReader((Path(__file__).parent / "data" / "r_qt.csv").open()))
    assert len(rows) == 14 * 69
    for row in rows:
        p, df, expected = float(row["p"]), int(float(row["df"])), float(row["q"])
        assert t_quantile(p, df) == pytest.approx(expected, rel=1e-11, abs=0), (p, df)
    assert t_quantile(0.5, 7) == 0.0 and t_quantile(1.0, 3) == math.inf
