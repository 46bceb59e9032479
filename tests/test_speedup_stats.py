"""The protocol's statistics against 003's worked examples (R output) and scipy."""

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.stats.bootstrap import bca_ratio_ci, bootstrap_test
from steadybench.stats.speedup import (
    mean_test,
    normality_check,
    rank_test,
    shift_check,
    speedup,
    tost,
    variance_test,
)

# 003 Example 2.1 (seconds)
T1 = [2.799, 2.046, 1.259, 1.877, 2.244]
T2 = [1.046, 0.259, 0.877, 1.244, 1.799]


def test_shapiro_matches_worked_example():
    for sample in (T1, T2):
        chk = normality_check(sample, 0.95)
        assert chk["statistic"] == pytest.approx(0.9862, abs=5e-5)
        assert chk["pvalue"] == pytest.approx(0.9647, abs=5e-5)
        assert chk["rejected"] is False


def test_normality_undefined_and_constant():
    assert normality_check([1.0, 2.0], 0.95)["rejected"] is None
    chk = normality_check([3.0] * 5, 0.95)
    assert chk["rejected"] is False and "constant" in chk["note"]
    skewed = np.r_[np.ones(20), 50.0]
    assert normality_check(skewed + np.linspace(0, 0.01, 21), 0.95)["rejected"] is True


def test_t_test_one_sided_bounds_match_r():
    # R: t.test(T1, T2, alternative="greater", conf.level=0.99) -> [-0.02574667, Inf)
    mt = mean_test(T1, T2, equal_var=False)
    assert mt.lower_bound(0.99) == pytest.approx(-0.02574667, abs=1e-7)
    assert mt.lower_bound(0.95) == pytest.approx(0.3414632, abs=1e-7)
    # Example 2.2: t.test(T2, T1, alternative="greater", conf.level=0.01) -> [0.02574667, Inf)
    assert mean_test(T2, T1, equal_var=False).lower_bound(0.01) == pytest.approx(0.02574667,
                                                                                 abs=1e-7)
    # speedups of Examples 2.1 and 2.2
    assert speedup(np.median(T1), np.median(T2)) == pytest.approx(1.956, abs=1e-3)
    assert speedup(np.mean(T2), np.mean(T1)) == pytest.approx(0.5110024, abs=1e-7)
    assert speedup(np.median(T2), np.median(T1)) == pytest.approx(0.5112414, abs=1e-7)


@pytest.mark.parametrize("equal_var", [True, False])
def test_t_test_matches_scipy(equal_var):
    rng = np.random.default_rng(3)
    a, b = rng.normal(10, 1, 12), rng.normal(9.5, 2, 17)
    mt = mean_test(a, b, equal_var)
    ref_g = sps.ttest_ind(a, b, equal_var=equal_var, alternative="greater")
    ref_l = sps.ttest_ind(a, b, equal_var=equal_var, alternative="less")
    assert mt.statistic == pytest.approx(ref_g.statistic)
    assert mt.p_faster == pytest.approx(ref_g.pvalue)
    assert mt.p_slower == pytest.approx(ref_l.pvalue)
    assert mt.df == pytest.approx(ref_g.df)
    assert mt.lower_bound(0.9) == pytest.approx(ref_g.confidence_interval(0.9).low)


def test_t_test_undefined_for_two_constants():
    assert mean_test([1.0, 1.0], [2.0, 2.0], equal_var=False) is None


def test_f_test_matches_definition():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0, 1, 15), rng.normal(0, 3, 11)
    res = variance_test(a, b, 0.95)
    f = np.var(a, ddof=1) / np.var(b, ddof=1)
    assert res["statistic"] == pytest.approx(f)
    assert res["pvalue"] == pytest.approx(2 * sps.f.cdf(f, 14, 10))
    assert res["rejected"] is True
    assert variance_test([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], 0.95)["rejected"] is True


def test_rank_test_matches_scipy():
    ref = sps.mannwhitneyu(T1, T2, alternative="greater", method="exact")
    rt = rank_test(T1, T2)
    assert rt.p_faster == pytest.approx(ref.pvalue) and rt.p_faster == pytest.approx(1 / 126)
    assert rt.statistic == 24.0
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 40), rng.normal(0.3, 1, 40)
    assert rank_test(a, b).p_slower == pytest.approx(
        sps.mannwhitneyu(a, b, alternative="less").pvalue)


def test_shift_check_detects_shape_change():
    rng = np.random.default_rng(6)
    assert not shift_check(rng.normal(0, 1, 25), rng.normal(5, 1, 25), 0.95)["rejected"]
    assert shift_check(rng.normal(0, 1, 25), rng.normal(0, 10, 25), 0.95)["rejected"]


def test_bca_ratio_matches_scipy_bootstrap():
    rng = np.random.default_rng(7)
    a, b = rng.normal(2.0, 0.1, 30), rng.normal(1.0, 0.05, 30)
    ci = bca_ratio_ci(a, b, 0.9, "median", 1000, seed=11)
    def ratio(x, y, axis):
        return np.median(x, axis=axis) / np.median(y, axis=axis)

    ref = sps.bootstrap((a, b), ratio,
                        confidence_level=0.9, n_resamples=1000, method="BCa",
                        rng=np.random.default_rng(11))
    assert ci["low"] == pytest.approx(ref.confidence_interval.low)
    assert ci["high"] == pytest.approx(ref.confidence_interval.high)
    assert ci["low"] < np.median(a) / np.median(b) < ci["high"]
    assert bca_ratio_ci([1.0, 1.0], [2.0, 2.0]) is None


def test_bootstrap_test_separates_and_keeps():
    rng = np.random.default_rng(8)
    a, b = rng.lognormal(0, 0.2, 15), rng.lognormal(0, 0.2, 15)
    for stat in ("mean", "median"):
        res = bootstrap_test(a * 2, b, stat, 2000, seed=1)
        assert res["p_faster"] < 0.01 and res["p_slower"] > 0.99
        same = bootstrap_test(a, b, stat, 2000, seed=1)
        assert min(same["p_faster"], same["p_slower"]) > 0.01


def test_tost():
    rng = np.random.default_rng(9)
    a = rng.normal(100, 1, 40)
    b = rng.normal(100.2, 1, 40)
    for kind in ("mean", "median"):
        assert tost(a, b, 2.0, kind=kind)["pvalue"] < 0.05
        assert tost(a, b + 5, 2.0, kind=kind)["pvalue"] > 0.5
    # mean TOST equals two shifted one-sided Welch tests from scipy
    p1 = sps.ttest_ind(b - 2.0, a, equal_var=False, alternative="less").pvalue
    p2 = sps.ttest_ind(a, b + 2.0, equal_var=False, alternative="less").pvalue
    assert tost(a, b, 2.0, kind="mean")["pvalue"] == pytest.approx(max(p1, p2))
    assert tost([1.0] * 3, [1.01] * 3, 0.02)["pvalue"] == 0.0
