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
