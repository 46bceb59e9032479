"""The restricted likelihood of the local level model with a slope (history/local_level.py)
against an independent implementation: statsmodels' ``UnobservedComponents`` (a Kalman filter
with exact diffuse initialisation, Durbin & Koopman 2012, §5.2). The diffuse likelihood of a
model whose fixed effects are diffuse states is the restricted likelihood (Francke, Koopman &
de Vos, "Likelihood functions for state space models with diffuse initial conditions", Journal
of Time Series Analysis 2010), so at σ² = σ̂²(q) the two differ by the constant
(n − p)/2·(1 + ln 2π) at every q. statsmodels is a test-only reference (the ``test`` extra);
its tests are skipped where it is not installed. With steps among the regressors the reference
is the error contrasts' likelihood, written out."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from steadybench.history.local_level import Q_GRID, reml_noise, restricted_loglik


def _structural():
    return pytest.importorskip("statsmodels.tsa.statespace.structural")


def _series(seed: int, n: int, step_at: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = 0.002 * np.arange(n) + np.cumsum(rng.normal(0, 0.004, n)) + rng.normal(0, 0.01, n)
    return y + (0.05 * (np.arange(n) >= step_at) if step_at is not None else 0.0)


def _diffuse_loglik(y: np.ndarray, white2: float, walk2: float) -> float:
    model = _structural().UnobservedComponents(y, level="lldtrend")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(model.loglike(np.array([white2, walk2])))


GRID = np.array([0.0, 0.01, 0.1, 0.5, 2.0])


@pytest.mark.parametrize("n", [20, 60])
def test_the_restricted_likelihood_is_statsmodels_diffuse_likelihood(n):
    y = _series(n, n)
    loglik, sigma = restricted_loglik(y, grid=GRID)
    constant = (n - 2) / 2.0 * (1.0 + math.log(2.0 * math.pi))
    for g, q in enumerate(GRID):
        s2 = float(sigma[g]) ** 2
        assert loglik[g] - constant == pytest.approx(_diffuse_loglik(y, s2, q * s2), abs=1e-5)


@pytest.mark.parametrize("cuts", [(), (25,), (10, 40)])
def test_the_restricted_likelihood_is_the_error_contrasts_likelihood(cuts):
    """With steps among the regressors, against the likelihood of the error contrasts Kᵀy
    (K an orthonormal basis of the complement of X: Patterson & Thompson 1971's definition),
    which differs from the form used (log|V| + log|XᵀV⁻¹X|) by ½·log|XᵀX|, the same at every
    q. (statsmodels is not the reference here: with the step as a diffuse regression state its
    likelihood moved by 0.25 across this grid against both forms.)"""
    from scipy.linalg import null_space

    n = 60
    y = _series(7, n, 25)
    t = np.arange(n)
    x = np.column_stack([np.ones(n), t, *[(t >= c) for c in cuts]]).astype(float)
    k = null_space(x.T)
    loglik, sigma = restricted_loglik(y, cuts, grid=GRID)
    offset = 0.5 * np.linalg.slogdet(x.T @ x)[1]
    for g, q in enumerate(GRID):
        v = np.eye(n) + q * np.minimum.outer(t, t)
        a, r = k.T @ v @ k, k.T @ y
        s2 = r @ np.linalg.solve(a, r) / (n - x.shape[1])
        contrasts = -0.5 * (np.linalg.slogdet(a)[1] + (n - x.shape[1]) * np.log(s2))
        assert loglik[g] == pytest.approx(contrasts - offset, abs=1e-8)
        assert sigma[g] == pytest.approx(math.sqrt(s2), rel=1e-9)


def test_the_reml_estimate_is_statsmodels_maximum():
    """statsmodels' maximum of the diffuse likelihood, over both variances, is REML's; ours
    searches q on a grid (10 points a decade), so the white noise agrees within 1 % and the
    walk's variance ratio within the grid's step."""
    y = _series(3, 60)
    model = _structural().UnobservedComponents(y, level="lldtrend")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        white2, walk2 = model.fit(disp=False).params
    found = reml_noise(y)
    assert found is not None
    white, walk, _ = found
    assert white == pytest.approx(math.sqrt(white2), rel=0.01)
    step = Q_GRID[-1] / Q_GRID[-2]
    q_ours, q_theirs = (walk / white) ** 2, walk2 / white2
    assert q_theirs / step <= q_ours <= q_theirs * step
