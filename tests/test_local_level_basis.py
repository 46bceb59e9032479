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
    from scipy import stats

    from steadybench.history.local_level import profile_loglik, step_lr_z

    rng = np.random.default_rng(9)
    n = 50
    y = np.cumsum(rng.normal(0, 0.2, n)) + rng.normal(0, 1.0, n) + 3.0 * (np.arange(n) >= 30)
    z, q0 = step_lr_z(y, 30, [10])
    lr = 2 * (profile_loglik(y, [10, 30])[0] - profile_loglik(y, [10])[0])
    t = np.sqrt((n - 4) * np.expm1(lr / n))
    assert z == pytest.approx(-stats.norm.ppf(stats.t.sf(t, n - 4)), rel=1e-9)
    assert q0 == profile_loglik(y, [10])[1]
    assert z > 3  # a 3σ step is plain


@pytest.mark.parametrize("q", [0.0, 0.1])
def test_the_largest_step_statistic_null_is_the_dense_scan(q):
    """The 95 % point of the largest |z| over the places (rotated basis, seeded) against the
    same scan written with the dense covariance and an independent seed, within Monte Carlo
    error (4,000 draws each: the 95 % point's standard error is about 0.02); Bonferroni's bound
    is never below it."""
    from scipy import stats

    from steadybench.history.local_level import Q_GRID, _null_max_z, max_z_p_value

    n = 40
    q = float(Q_GRID[q <= Q_GRID][0])
    t = np.arange(n)
    v = np.eye(n) + q * np.minimum.outer(t, t)
    chol = np.linalg.cholesky(v)
    winv = np.linalg.inv(chol)
    x = winv @ np.column_stack([np.ones(n), t]).astype(float)
    s = winv @ (t[:, None] >= np.arange(1, n)[None, :]).astype(float)
    s = s - x @ np.linalg.lstsq(x, s, rcond=None)[0]
    e = winv @ (chol @ np.random.default_rng(123).standard_normal((n, 4000)))
    dense = np.max(np.abs((s.T @ e) / np.linalg.norm(s, axis=0)[:, None]), axis=0)
    ours = _null_max_z(n, q)
    assert np.quantile(ours, 0.95) == pytest.approx(np.quantile(dense, 0.95), abs=0.08)
    z95 = float(np.quantile(ours, 0.95))
    assert max_z_p_value(z95, n, q) == pytest.approx(0.05, abs=0.002)
    assert max_z_p_value(z95, n, q) <= (n - 1) * 2 * stats.norm.sf(z95)
