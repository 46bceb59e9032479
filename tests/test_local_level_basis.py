"""The closed-form eigenbasis of a random walk's covariance W = [min(s, t)] used by the REML
record noise, against numpy's dense eigendecomposition."""

from __future__ import annotations

import numpy as np
import pytest

from steadybench.history.local_level import _eigenvalues, _rotate, restricted_loglik


@pytest.mark.parametrize("n", [2, 3, 10, 57])
def test_the_closed_form_basis_diagonalises_the_walk_covariance(n):
    t = np.arange(n)
    w = np.minimum.outer(t, t).astype(float)
    ut = _rotate(np.eye(n))  # the rows are the eigenvectors
    assert np.allclose(ut @ ut.T, np.eye(n), atol=1e-12)
    assert np.allclose(ut @ w @ ut.T, np.diag(_eigenvalues(n)), atol=1e-9 * max(n, 1) ** 2)
    assert np.allclose(np.sort(_eigenvalues(n)), np.linalg.eigvalsh(w), rtol=1e-9, atol=1e-9)


def test_the_restricted_likelihood_is_the_dense_eigenbasis_one():
    rng = np.random.default_rng(7)
    n = 40
    y = np.cumsum(rng.normal(0, 0.3, n)) + rng.normal(0, 1.0, n) + 5.0 * (np.arange(n) >= 20)
    lam, u = np.linalg.eigh(np.minimum.outer(np.arange(n), np.arange(n)).astype(float))
    t = np.arange(n)
    x = np.column_stack([np.ones(n), t, (t >= 20).astype(float)])
    ux, uy = u.T @ x, u.T @ y
    grid = np.array([0.0, 0.01, 0.5, 3.0])
    loglik, sigma = restricted_loglik(y, [20], grid=grid)
    for g, q in enumerate(grid):
        wts = 1.0 / (1.0 + q * np.clip(lam, 0.0, None))
        a = ux.T @ (wts[:, None] * ux)
        coef = np.linalg.solve(a, ux.T @ (wts * uy))
        resid = uy - ux @ coef
        s2 = np.sum(wts * resid**2) / (n - 3)
        ll = -0.5 * (-np.sum(np.log(wts)) + np.linalg.slogdet(a)[1] + (n - 3) * np.log(s2))
        assert loglik[g] == pytest.approx(ll, rel=1e-9)
        assert sigma[g] == pytest.approx(np.sqrt(s2), rel=1e-9)


def test_the_profile_likelihood_is_the_dense_gls_likelihood():
    """The full log-likelihood (σ² and the coefficients profiled out) against generalized
    least squares with the dense covariance I + qW, at every q of a grid."""
    from steadybench.history.local_level import profile_loglik

    rng = np.random.default_rng(8)
    n = 35
    t = np.arange(n)
    y = np.cumsum(rng.normal(0, 0.3, n)) + rng.normal(0, 1.0, n) + 4.0 * (t >= 12)
    x = np.column_stack([np.ones(n), t, (t >= 12)]).astype(float)
    best = -np.inf
    for q in (0.0, 0.05, 0.4, 2.0):
        v = np.eye(n) + q * np.minimum.outer(t, t)
        vi = np.linalg.inv(v)
        coef = np.linalg.solve(x.T @ vi @ x, x.T @ vi @ y)
        r = y - x @ coef
        ll = -0.5 * (np.linalg.slogdet(v)[1] + n * np.log(r @ vi @ r / n))
        got, at = profile_loglik(y, [12], grid=np.array([q]))
        assert got == pytest.approx(ll, rel=1e-9) and at == q
        best = max(best, ll)
    assert profile_loglik(y, [12], grid=np.array([0.0, 0.05, 0.4, 2.0]))[0] == pytest.approx(best)


def test_the_step_likelihood_ratio_is_the_difference_of_the_two_fits():
    from steadybench.history.local_level import profile_loglik, step_lr

    rng = np.random.default_rng(9)
    n = 50
    y = np.cumsum(rng.normal(0, 0.2, n)) + rng.normal(0, 1.0, n) + 3.0 * (np.arange(n) >= 30)
    lr, q0 = step_lr(y, 30, [10])
    assert lr == pytest.approx(2 * (profile_loglik(y, [10, 30])[0] - profile_loglik(y, [10])[0]),
                               rel=1e-12)
    assert q0 == profile_loglik(y, [10])[1]
    assert lr > 9  # a 3σ step is plain


def test_nearby_lengths_share_a_null_that_is_never_shorter():
    from steadybench.history.local_level import MAX_NULL_RECORDS, max_lr_p_value, null_length

    assert [null_length(n) for n in (3, 30, 50, 51, 195, 200, 291)] == [3, 30, 50, 60, 200,
                                                                        200, 300]
    assert all(n <= null_length(n) <= MAX_NULL_RECORDS for n in range(3, MAX_NULL_RECORDS + 1))
    with pytest.raises(ValueError, match="at most"):
        max_lr_p_value(10.0, MAX_NULL_RECORDS + 1, 0.0)


def test_the_scan_of_every_place_is_the_difference_of_the_two_fits():
    """The likelihood ratio at every place at once (rotated basis, one matrix product per q)
    against two :func:`profile_loglik` fits per place, themselves checked against the dense
    covariance above; and :func:`step_lr` is the same ratio."""
    from steadybench.history.local_level import _profiled_lr_scan, profile_loglik, step_lr

    rng = np.random.default_rng(10)
    n = 33
    t = np.arange(n)
    ys = [np.cumsum(rng.normal(0, 0.3, n)) + rng.normal(0, 1.0, n) + 0.05 * t,
          rng.normal(0, 1.0, n) + 3.0 * (t >= 20)]
    scan = _profiled_lr_scan(_rotate(np.column_stack(ys)))
    for d, y in enumerate(ys):
        without = profile_loglik(y)[0]
        dense = [2 * (profile_loglik(y, [k])[0] - without) for k in range(1, n)]
        assert scan[:, d] == pytest.approx(np.maximum(dense, 0.0), abs=1e-9)
        assert step_lr(y, 20)[0] == pytest.approx(max(dense[19], 0.0), abs=1e-9)
    assert abs(int(np.argmax(scan[:, 1])) + 1 - 20) <= 1  # the 3σ step: the ratio peaks there


def _same_null(ours, direct, p_value) -> None:
    """The seeded null table ``ours`` against ``direct`` draws: the same distribution
    (two-sample Kolmogorov–Smirnov), 90 % points within Monte Carlo error (its standard error
    from 300 draws is about 0.5 here), and ``p_value`` at the table's own 95 % point is 5 %."""
    from scipy import stats

    from steadybench.history.local_level import NULL_DRAWS

    assert ours.size == NULL_DRAWS
    assert stats.ks_2samp(ours, direct).pvalue > 0.001
    assert np.quantile(ours, 0.9) == pytest.approx(np.quantile(direct, 0.9), abs=1.6)
    assert p_value(float(np.quantile(ours, 0.95))) == pytest.approx(0.05, abs=0.003)


def _walk_series(n: int, q: float, seed: int, draws: int = 300):
    """``draws`` series of ``n`` records drawn directly from the dense covariance I + qW (a
    random walk with white noise) around a level and a slope, seeded."""
    t = np.arange(n)
    chol = np.linalg.cholesky(np.eye(n) + q * np.minimum.outer(t, t))
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        yield 2.0 + 0.1 * t + 0.7 * (chol @ rng.standard_normal(n))


@pytest.mark.parametrize("q", [0.0, 0.1])
def test_the_null_of_the_largest_ratio_is_the_direct_simulation(q):
    """The simulated null of the largest ratio over the places (drawn in the rotated basis,
    seeded) against series drawn directly from the dense covariance I + qW with a level and a
    slope, an independent seed, and the ratio of two :func:`profile_loglik` fits per place:
    the same distribution (two-sample Kolmogorov–Smirnov, 1,000 against 300 draws) and 90 %
    points within Monte Carlo error; the p-value at the table's own 95 % point is 5 %."""

    from steadybench.history.local_level import (
        Q_GRID,
        _null_max_lr,
        max_lr_p_value,
        profile_loglik,
    )

    n = 16
    g = int(np.argmin(np.abs(Q_GRID - q)))
    direct = []
    for y in _walk_series(n, float(Q_GRID[g]), seed=321):
        without = profile_loglik(y)[0]
        direct.append(max(2 * (profile_loglik(y, [k])[0] - without) for k in range(1, n)))
    _same_null(_null_max_lr(n, g), direct, lambda lr: max_lr_p_value(lr, n, float(Q_GRID[g])))


def test_the_null_depends_on_the_walk_ratio():
    """Why the p-value is taken at the walk ratio estimated without the step: the largest
    ratio's 95 % point at 30 records grows with q (10.5 at q = 0, about 16.7 at q = 1:
    benchmarks/over_time.py), so the smaller q a step placed where the walk wandered most
    leaves would be too lenient."""
    from steadybench.history.local_level import Q_GRID, _null_max_lr

    at = [float(np.quantile(_null_max_lr(30, int(np.argmin(np.abs(Q_GRID - q)))), 0.95))
          for q in (0.0, 1.0)]
    assert at[0] + 3.0 < at[1]


def test_the_walk_ratio_bound_is_the_likelihood_ratio_interval_of_the_restricted_fit():
    """walk_ratio_upper (the floor's escape in history.regressions._step_lr): the largest q of
    the grid whose restricted likelihood is within χ²₁'s 80 % point of the best (Wilks), the
    bound reml_noise reports as a walk, recomputed here from the likelihood on the grid with
    scipy's quantile; the grid's end when the fit has too few degrees of freedom."""
    from scipy import stats

    from steadybench.history.local_level import Q_GRID, reml_noise, walk_ratio_upper

    rng = np.random.default_rng(8)
    for walk in (0.0, 0.3):
        y = np.cumsum(rng.normal(0, walk, 60)) + rng.normal(0, 1.0, 60) + (np.arange(60) >= 25)
        loglik, sigma = restricted_loglik(y, [25])
        keep = 2.0 * (loglik.max() - loglik) <= stats.chi2.ppf(0.8, 1)
        g = int(np.nonzero(keep)[0].max())
        assert walk_ratio_upper(y, [25]) == Q_GRID[g]
        assert reml_noise(y, [25])[2] == pytest.approx(np.sqrt(Q_GRID[g]) * sigma[g])
    flat = rng.normal(0, 1.0, 400)
    assert walk_ratio_upper(flat) < 0.03  # 400 white records rule the stated least walk out
    assert walk_ratio_upper([1.0, 2.0, 1.5, 1.7], [2]) == Q_GRID[-1]


def _dense_gls_rss(y: np.ndarray, cuts: list[int], q: float) -> float:
    """yᵀV⁻¹y's residual part after the generalized least-squares fit on a level, a slope and
    the steps at ``cuts``, V = I + q·[min(s, t)], by dense linear algebra."""
    n = y.size
    t = np.arange(n)
    x = np.column_stack([np.ones(n), t, *[(t >= c).astype(float) for c in cuts]])
    vinv = np.linalg.inv(np.eye(n) + q * np.minimum.outer(t, t))
    beta = np.linalg.solve(x.T @ vinv @ x, x.T @ vinv @ y)
    r = y - x @ beta
    return float(r @ vinv @ r)


def test_the_intervention_ratio_is_the_dense_generalized_least_squares_one():
    """intervention_lr against n·ln(RSS₀/RSS₁) of two dense GLS fits at the same q (the grid
    point nearest the q asked for), another step among the regressors of both."""
    from steadybench.history.local_level import Q_GRID, grid_index, intervention_lr

    rng = np.random.default_rng(12)
    n = 35
    y = np.cumsum(rng.normal(0, 0.3, n)) + rng.normal(0, 1.0, n) + 3.0 * (np.arange(n) >= 22)
    for q in (0.0, 0.1, 2.0):
        g = Q_GRID[grid_index(q)]
        dense = n * np.log(_dense_gls_rss(y, [8], g) / _dense_gls_rss(y, [8, 22], g))
        assert intervention_lr(y, 22, [8], q) == pytest.approx(dense, rel=1e-9)
    assert intervention_lr(y, 22, [], 0.1) > 9  # a 3σ step is plain


@pytest.mark.parametrize("q", [0.0, 0.3])
def test_the_null_of_the_largest_intervention_ratio_is_the_direct_simulation(q):
    """The seeded null of the largest intervention ratio over the places, at a q held in the
    statistic as in the draws, against series drawn directly from the dense covariance
    I + qW with a level and a slope (another seed) and the dense GLS ratio at every place:
    the same distribution (two-sample Kolmogorov–Smirnov, 1,000 against 300 draws), 90 %
    points within Monte Carlo error; the p-value at the table's own 95 % point is 5 %."""

    from steadybench.history.local_level import (
        NULL_DRAWS,
        Q_GRID,
        _null_max_intervention_lr,
        grid_index,
        intervention_p_value,
    )

    n = 16
    g = grid_index(q)
    direct = []
    for y in _walk_series(n, float(Q_GRID[g]), seed=654):
        without = _dense_gls_rss(y, [], Q_GRID[g])
        direct.append(max(n * np.log(without / _dense_gls_rss(y, [k], Q_GRID[g]))
                          for k in range(1, n)))
    _same_null(_null_max_intervention_lr(n, g), direct,
               lambda lr: intervention_p_value(lr, n, float(Q_GRID[g])))
    assert intervention_p_value(1e9, n, float(Q_GRID[g])) == 1.0 / (NULL_DRAWS + 1)
