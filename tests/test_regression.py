"""Tests of steadybench.stats.regression against scipy and worked examples."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.errors import ConfigurationError, MeasurementError
from steadybench.stats.regression import (
    DEFAULT_OUTLIER_THRESHOLD,
    loglog_fit,
    null_space_columns,
    ols,
    robust_ols,
    solve_least_squares,
    try_loglog_fit,
)


def _noisy_line(n=20, slope=40.4, intercept=18.8, sd=2.0, seed=1):
    rng = np.random.default_rng(seed)
    x = np.arange(1, n + 1, dtype=float)
    return x, slope * x + intercept + rng.normal(0, sd, n)


def test_ols_matches_linregress():
    x, y = _noisy_line()
    fit = ols(x, y, confidence=0.9)
    ref = sps.linregress(x, y)
    assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-12)
    assert fit.slope_se == pytest.approx(ref.stderr, rel=1e-10)
    assert fit.intercept_se == pytest.approx(ref.intercept_stderr, rel=1e-10)
    assert fit.r2 == pytest.approx(ref.rvalue ** 2, rel=1e-12)
    t = sps.t.ppf(0.95, len(x) - 2)
    assert fit.slope_ci[0] == pytest.approx(ref.slope - t * ref.stderr, rel=1e-10)
    assert fit.slope_ci[1] == pytest.approx(ref.slope + t * ref.stderr, rel=1e-10)
    resid = y - (ref.slope * x + ref.intercept)
    assert fit.msd == pytest.approx(np.mean(resid ** 2), rel=1e-10)
    assert fit.residual_std == pytest.approx(math.sqrt(np.sum(resid ** 2) / (len(x) - 2)))
    assert fit.n == 20 and fit.confidence == 0.9


def test_ols_worked_example_paper_equations():
    # Eq. 4–5 of Moreno & Fischmeister computed by hand on 3 points: (1,2), (2,4), (3,7).
    fit = ols([1, 2, 3], [2, 4, 7])
    m = 3
    sx, sy, sxy, sxx = 6, 13, 1 * 2 + 2 * 4 + 3 * 7, 14
    d = m * sxx - sx ** 2
    assert fit.slope == pytest.approx((m * sxy - sx * sy) / d)
    assert fit.intercept == pytest.approx((sxx * sy - sx * sxy) / d)


def test_ols_exact_line_has_zero_msd_and_unit_r2():
    fit = ols([1, 2, 3, 4], [3, 5, 7, 9])
    assert fit.slope == pytest.approx(2) and fit.intercept == pytest.approx(1)
    assert fit.msd == pytest.approx(0, abs=1e-20)
    assert fit.r2 == pytest.approx(1)
    assert fit.slope_ci[0] == pytest.approx(2) and fit.slope_ci[1] == pytest.approx(2)


def test_ols_bad_input():
    with pytest.raises(MeasurementError, match="at least 3"):
        ols([1, 2], [1, 2])
    with pytest.raises(MeasurementError, match="x values are equal"):
        ols([1, 1, 1], [1, 2, 3])
    with pytest.raises(ConfigurationError):
        ols([1, 2, 3], [1, 2])
    with pytest.raises(MeasurementError, match="NaN"):
        ols([1, 2, 3], [1, float("nan"), 3])
    with pytest.raises(ConfigurationError):
        ols([1, 2, 3], [1, 2, 3], confidence=1.5)


def test_fit_to_dict_is_json():
    x, y = _noisy_line()
    d = robust_ols(x, y).to_dict()
    assert json.loads(json.dumps(d)) == d


def test_robust_refit_drops_spikes_and_recovers_line():
    x, y = _noisy_line(sd=1.0)
    y[6] += 5000.0
    y[13] += 3000.0
    rob = robust_ols(x, y)
    assert rob.dropped == (6, 13)
    assert len(rob.kept) == 18
    clean = ols(np.delete(x, [6, 13]), np.delete(y, [6, 13]))
    assert rob.fit.slope == pytest.approx(clean.slope)
    assert rob.fit.slope_ci[0] < 40.4 < rob.fit.slope_ci[1]
    assert not (rob.initial.slope_ci[0] < 40.4 < rob.initial.slope_ci[1]) or \
        rob.initial.msd > 100 * rob.fit.msd


def test_robust_keeps_gaussian_points_and_perfect_lines():
    x, y = _noisy_line(sd=1.0, seed=7)
    assert robust_ols(x, y).dropped == ()
    assert robust_ols([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]).dropped == ()


def test_robust_threshold_configurable_and_checked():
    x, y = _noisy_line(sd=1.0)
    y[3] += 8.0  # ~8 sigma: dropped at a low threshold, kept when disabled
    assert 3 in robust_ols(x, y, threshold=DEFAULT_OUTLIER_THRESHOLD).dropped
    assert robust_ols(x, y, threshold=math.inf).dropped == ()
    with pytest.raises(ConfigurationError, match="threshold"):
        robust_ols(x, y, threshold=0.5)


def test_robust_never_drops_below_half():
    # Wild points everywhere: the refit must keep at least half of them.
    rng = np.random.default_rng(3)
    x = np.arange(1, 11, dtype=float)
    y = x + rng.standard_cauchy(10) * 100
    rob = robust_ols(x, y, threshold=1.01)
    assert len(rob.kept) >= 5


def test_loglog_fit_power_law():
    x = np.array([1, 2, 4, 8, 16, 32], dtype=float)
    y = 3.0 * x ** 1.5
    fit = loglog_fit(x, y)
    assert fit.factor == pytest.approx(3.0)
    assert fit.power == pytest.approx(1.5)
    assert fit.geo_stdev == pytest.approx(1.0)
    ref = sps.linregress(np.log(x), np.log(y * np.exp([0.1, -0.1, 0.05, 0, -0.05, 0.02])))
    noisy = loglog_fit(x, y * np.exp([0.1, -0.1, 0.05, 0, -0.05, 0.02]))
    assert noisy.factor == pytest.approx(math.exp(ref.intercept))
    assert noisy.power == pytest.approx(ref.slope)
    assert noisy.geo_stdev > 1.0
    with pytest.raises(MeasurementError, match="positive"):
        loglog_fit([1, 2, 3], [1, 0, 2])
    assert try_loglog_fit([1, 2, 3], [1, -1, 2]) is None


def test_solve_least_squares_matches_lstsq_and_covariance():
    rng = np.random.default_rng(5)
    k = np.arange(1, 21)
    a = np.column_stack([k, np.where(k == 1, 1, k + 1), np.ones_like(k)]).astype(float)
    truth = np.array([100.0, 30.0, 8.5])
    b = a @ truth + rng.normal(0, 0.5, k.size)
    sol = solve_least_squares(a, b, names=["Te", "Ti", "eps"])
    ref, *_ = np.linalg.lstsq(a, b, rcond=None)
    assert np.allclose(sol.values, ref)
    resid = b - a @ ref
    s2 = resid @ resid / (k.size - 3)
    cov = s2 * np.linalg.inv(a.T @ a)
    assert np.allclose(sol.se, np.sqrt(np.diag(cov)))
    t = sps.t.ppf(0.975, k.size - 3)
    assert sol.ci[0][1] == pytest.approx(ref[0] + t * math.sqrt(cov[0, 0]))
    for j, v in enumerate(truth):
        assert sol.ci[j][0] < v < sol.ci[j][1]
    assert sol["Ti"] == pytest.approx(ref[1])
    d = sol.to_dict()
    assert json.loads(json.dumps(d)) == d


def test_solve_least_squares_simple_regression_equals_ols():
    x, y = _noisy_line()
    a = np.column_stack([x, np.ones_like(x)])
    sol = solve_least_squares(a, y, names=["slope", "intercept"])
    fit = ols(x, y)
    assert sol["slope"] == pytest.approx(fit.slope)
    assert sol.ci[0][0] == pytest.approx(fit.slope_ci[0])
    assert sol.ci[1][1] == pytest.approx(fit.intercept_ci[1])


def test_solve_least_squares_singular_names_unknowns():
    k = np.arange(1, 11, dtype=float)
    a = np.column_stack([k, k + 1, np.ones_like(k)])  # M_k = N_k + 1 for all k: dependent
    with pytest.raises(MeasurementError, match=r"singular.*\{Te, Ti, eps\}"):
        solve_least_squares(a, k, names=["Te", "Ti", "eps"])
    with pytest.raises(MeasurementError, match="more equations"):
        solve_least_squares(np.eye(3), [1, 2, 3])


def test_null_space_columns():
    a = np.array([[1, 1, 2, 0], [1, 1, 3, 1], [1, 1, 1, 5], [1, 1, 0, 2]], dtype=float)
    assert null_space_columns(a) == [[0, 1]]
    assert null_space_columns(np.eye(3)) == []


def test_slope_is_positive_ignores_rounding_on_constant_data():
    import numpy as np

    from steadybench.stats.regression import ols, slope_is_positive

    x = np.array([1, 2, 4, 8, 16, 33, 41, 50, 61, 74], dtype=float)
    y = np.full(x.size, 0.001)
    fit = ols(x, y)
    assert abs(fit.slope) < 1e-15  # zero up to rounding, sign arbitrary
    assert not slope_is_positive(fit.slope, x, y)
    assert not slope_is_positive(1e-22, x, y) and not slope_is_positive(-1.0, x, y)
    assert slope_is_positive(1e-6, x, 1e-6 * x + 0.001)
