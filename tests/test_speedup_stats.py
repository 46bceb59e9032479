"""The protocol's statistics against 003's worked examples (R output) and scipy."""

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.stats.speedup import (
    mean_test,
    normality_check,
    speedup,
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


