"""The noise of a series of records whose level wanders: white noise on every record plus a
random walk of the level, estimated by restricted maximum likelihood.

The record levels y_t (t = 0 … n − 1) are modelled as

    y_t = a + b·t + Σ_j δ_j·[t ≥ k_j] + w_t + e_t,  w_t = w_{t−1} + u_t (w_0 = 0),
    u_t ~ N(0, q·σ²),  e_t ~ N(0, σ²),

the local level model with a slope (Harvey, *Forecasting, Structural Time Series Models and the
Kalman Filter*, 1989, §2.3), the steps k_j being the candidate changes, so a real step is not
taken for wander. Its covariance is σ²·(I + q·W) with W_st = min(s, t); W = U Λ Uᵀ is known in
closed form (a sine basis, applied by one FFT), so for every q the generalized least squares
fit is a weighted least squares fit with weights 1/(1 + q·λ_i) in the rotated coordinates Uᵀy,
and the restricted likelihood (Patterson & Thompson, Biometrika 1971; Harville, JASA 1977) is
evaluated on a grid of q at that cost. A step is decided by the likelihood-ratio test of
:func:`step_lr` (q profiled with and without the step), against the largest ratio over the
places simulated with q re-profiled in every draw, at q estimated without the step
(:func:`max_lr_p_value`; ``history.regressions._confirmed``); in short series, by the
intervention test with q held at one value in the statistic and its null alike
(:func:`intervention_lr`, :func:`intervention_p_value`). REML (not the least-squares
fit of a variogram used before) because it is the efficient estimate: on simulated histories
(``benchmarks/over_time.py``) it found 5 % steps in 81 % of 30-record series where the
variogram's noisy, clipped walk estimate left 71 %.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

#: the grid of q = walk variance / white variance searched (0 and 10⁻⁴ … 10)
Q_GRID = np.concatenate([[0.0], np.logspace(-4.0, 1.0, 51)])


@functools.lru_cache(maxsize=64)
def _eigenvalues(n: int) -> np.ndarray:
    """Λ of W = [min(s, t)], s, t = 0 … n − 1, in closed form: 0 (record 0, which has no walk
    yet), then 1 / (4 sin²(θ_k / 2)), θ_k = (2k − 1)π / (2n − 1), k = 1 … n − 1 — the
    eigenvalues of a random walk's covariance, whose inverse is the tridiagonal second
    difference with a free end (its eigenvectors sin(jθ) meet that end's condition exactly when
    (2n − 1)θ is an odd multiple of π); checked against ``numpy.linalg.eigh`` in
    ``tests/test_local_level_basis.py``."""
    k = np.arange(1, n)
    theta = (2 * k - 1) * np.pi / (2 * n - 1)
    return np.concatenate([[0.0], 1.0 / (4.0 * np.sin(theta / 2.0) ** 2)])


def _rotate(v: np.ndarray) -> np.ndarray:
    """Uᵀ·v for the eigenvectors U of W (columns in the order of :func:`_eigenvalues`), along
    axis 0, without forming U: record 0 is its own eigenvector, and the others are
    u_k(j) = 2 sin(j θ_k) / √(2n − 1), j = 1 … n − 1, so Uᵀ·v is a sine transform at odd
    frequencies, read off one FFT of length 2(2n − 1) — O(n log n) where the dense
    eigendecomposition was O(n³) once per length and O(n²) per vector."""
    n = v.shape[0]
    size = 2 * n - 1
    padded = np.zeros((2 * size, *v.shape[1:]))
    padded[1:n] = v[1:]
    spectrum = np.fft.rfft(padded, axis=0)
    out = np.empty(v.shape, dtype=float)
    out[0] = v[0]
    out[1:] = -spectrum.imag[1:2 * n - 2:2] * (2.0 / np.sqrt(size))
    return out


def _weighted_fit(y: Sequence[float], cuts: Sequence[int],
                  grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The generalised least-squares fit of ``y`` on an intercept, a slope and a step at each
    of ``cuts``, at every q of ``grid``, in the basis where the local level model's covariance
    is diagonal: the weights (grid × n), the normal matrices (grid × p × p) and the residuals
    (grid × n). Both likelihoods below are read from it."""
    arr = np.asarray(y, dtype=float)
    n = arr.size
    t = np.arange(n)
    x = np.column_stack([np.ones(n), t.astype(float),
                         *[(t >= c).astype(float) for c in cuts if 0 < c < n]])
    ux, uy = _rotate(x), _rotate(arr)
    w = 1.0 / (1.0 + np.outer(grid, _eigenvalues(n)))
    a = np.einsum("gi,ip,ir->gpr", w, ux, ux)
    b = np.einsum("gi,ip,i->gp", w, ux, uy)
    coef = np.linalg.solve(a, b[:, :, None])[:, :, 0]
    return w, a, uy[None, :] - coef @ ux.T


def restricted_loglik(y: Sequence[float], cuts: Sequence[int] = (),
                      grid: np.ndarray = Q_GRID) -> tuple[np.ndarray, np.ndarray]:
    """The restricted log-likelihood (σ² profiled out) and σ̂ at every q of ``grid``, with an
    intercept, a slope and a step at each of ``cuts`` among the regressors."""
    w, a, resid = _weighted_fit(y, cuts, grid)
    n, p = w.shape[1], a.shape[1]
    s2 = np.maximum(np.einsum("gi,gi->g", w, resid * resid) / max(n - p, 1), 1e-300)
    loglik = -0.5 * (-np.sum(np.log(w), axis=1) + np.linalg.slogdet(a)[1]
                     + (n - p) * np.log(s2))
    return loglik, np.sqrt(s2)


def reml_noise(y: Sequence[float], cuts: Sequence[int] = (),
               upper: float = 0.9) -> tuple[float, float, float] | None:
    """σ (the white noise) and √q·σ (the walk per record) at the REML estimate of q, and the
    walk at q's one-sided ``upper`` confidence bound (the largest q of the grid whose
    likelihood-ratio statistic 2(ℓ̂ − ℓ(q)) is within the χ²₁ quantile at 2·``upper`` − 1,
    Wilks 1938); None when the fit leaves fewer than 3 residual degrees of freedom."""
    from scipy import stats

    cuts = sorted({c for c in cuts if 0 < c < len(y)})
    if len(y) - 2 - len(cuts) < 3:
        return None
    loglik, sigma = restricted_loglik(y, cuts)
    g = int(np.argmax(loglik))
    inside = np.nonzero(2.0 * (loglik[g] - loglik) <= stats.chi2.ppf(2.0 * upper - 1.0, 1))[0]
    u = int(inside.max())
    return (float(sigma[g]), float(np.sqrt(Q_GRID[g]) * sigma[g]),
            float(np.sqrt(Q_GRID[u]) * sigma[u]))


def walk_ratio_upper(y: Sequence[float], cuts: Sequence[int] = (),
                     upper: float = 0.9) -> float:
    """q's one-sided ``upper`` confidence bound by the restricted likelihood, as in
    :func:`reml_noise`: the largest q of the grid whose likelihood-ratio statistic
    2(ℓ̂ − ℓ(q)) is within the χ²₁ quantile at 2·``upper`` − 1 (Wilks 1938); the grid's
    largest q when the fit leaves fewer than 3 residual degrees of freedom."""
    from scipy import stats

    cuts = sorted({c for c in cuts if 0 < c < len(y)})
    if len(y) - 2 - len(cuts) < 3:
        return float(Q_GRID[-1])
    loglik, _ = restricted_loglik(y, cuts)
    inside = np.nonzero(2.0 * (loglik.max() - loglik) <= stats.chi2.ppf(2.0 * upper - 1.0, 1))[0]
    return float(Q_GRID[int(inside.max())])


def profile_loglik(y: Sequence[float], cuts: Sequence[int] = (),
                   grid: np.ndarray = Q_GRID) -> tuple[float, float]:
    """The maximum over ``grid`` of the (full, not restricted) log-likelihood, σ² and the
    regression coefficients profiled out, with an intercept, a slope and a step at each of
    ``cuts``; and the q that attains it. Full likelihoods of models with different
    regressors can be compared (restricted ones cannot: their contrasts differ)."""
    w, _, resid = _weighted_fit(y, sorted(set(cuts)), grid)
    n = w.shape[1]
    rss = np.maximum(np.einsum("gi,gi->g", w, resid * resid), 1e-300)
    loglik = -0.5 * (-np.sum(np.log(w), axis=1) + n * np.log(rss / n))
    g = int(np.argmax(loglik))
    return float(loglik[g]), float(grid[g])


#: draws of the simulated null distribution of the largest likelihood ratio over the places
NULL_DRAWS = 1000
#: longest series whose null distribution is simulated: its cost grows as n² per draw and q of
#: the grid (0.2–1 s at 200 records on the 2-core development VM, by load), the memory of
#: :func:`_profile_basis` as n² per q (37 MB at 300); a longer series' step is tested on this
#: many records around it (``history.regressions._confirmed``)
MAX_NULL_RECORDS = 300
#: above this many records the null is simulated at the length rounded up to a multiple of
#: :data:`NULL_LENGTH_STEP` (more places, so a larger null: conservative), so that series of
#: nearby lengths share one table
EXACT_NULL_RECORDS = 50
NULL_LENGTH_STEP = 10


@functools.lru_cache(maxsize=2)
def _profile_basis(n: int) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, float], ...]:
    """For every q of :data:`Q_GRID`, in the rotated basis of a series of ``n`` records: the
    whitening weights √w, an orthonormal basis of the whitened intercept and slope, the
    whitened step regressors of the places k = 1 … n − 1 less their projection on it
    (normalised), and ½·Σ ln w. Computed once per length: a dashboard analyses many series of
    the same length."""
    return tuple(_basis_at(n, float(q)) for q in Q_GRID)


def _basis_at(n: int, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """One q's entry of :func:`_profile_basis`."""
    lam = _eigenvalues(n)
    t = np.arange(n)
    ux = _rotate(np.column_stack([np.ones(n), t.astype(float)]))
    us = _rotate((t[:, None] >= np.arange(1, n)[None, :]).astype(float))
    root_w = 1.0 / np.sqrt(1.0 + q * lam)
    basis, _ = np.linalg.qr(ux * root_w[:, None])
    s = us * root_w[:, None]
    s = s - basis @ (basis.T @ s)
    s /= np.linalg.norm(s, axis=0)
    return root_w, basis, s, float(np.sum(np.log(root_w)))


def _profiled_lr_scan(uy: np.ndarray) -> np.ndarray:
    """The likelihood ratio 2(ℓ₁ − ℓ₀) of a step at every place k = 1 … n − 1 (rows) for each
    rotated series (columns of ``uy``, n × draws), with an intercept and a slope fitted and q
    profiled over :data:`Q_GRID` under each model: :func:`step_lr`'s statistic without other
    cuts, for all places at once. At each q the fit with the step at k lowers the residual sum
    of squares by the squared projection of the whitened residual on the whitened step (the
    Frisch–Waugh–Lovell theorem), so one matrix product gives every place."""
    n = uy.shape[0]
    # ℓ(q) = ½Σ ln w − (n/2)·ln(RSS/n) is largest where c_q·RSS is smallest, with
    # c_q = exp(−Σ ln w / n): the smallest scaled RSS is kept over the grid, one log at the end
    least1: np.ndarray | None = None
    least0: np.ndarray | None = None
    for root_w, basis, s, half_log_w in _profile_basis(n):
        r = uy * root_w[:, None]
        r = r - basis @ (basis.T @ r)
        rss0 = np.maximum(np.einsum("id,id->d", r, r), 1e-300)
        proj = s.T @ r
        scale = math.exp(-2.0 * half_log_w / n)
        rss1 = np.maximum(rss0[None, :] - proj * proj, 1e-300) * scale
        rss0 = rss0 * scale
        least0 = rss0 if least0 is None else np.minimum(least0, rss0)
        least1 = rss1 if least1 is None else np.minimum(least1, rss1)
    assert least0 is not None and least1 is not None
    return np.maximum(n * (np.log(least0)[None, :] - np.log(least1)), 0.0)


def step_lr(y: Sequence[float], k: int, cuts: Sequence[int] = ()) -> tuple[float, float]:
    """The likelihood ratio 2(ℓ₁ − ℓ₀) of a step at ``k`` (the other ``cuts`` in both models)
    with q profiled under each (:func:`profile_loglik`), and the q of the model without the
    step: the statistic :func:`max_lr_p_value` calibrates."""
    n = len(y)
    others = sorted({c for c in cuts if c != k and 0 < c < n})
    with_step, _ = profile_loglik(y, [*others, k])
    without, q0 = profile_loglik(y, others)
    return max(2.0 * (with_step - without), 0.0), q0


@functools.lru_cache(maxsize=512)
def _null_max_lr(n: int, g: int) -> np.ndarray:
    """The sorted largest likelihood ratio over the n − 1 places (:func:`_profiled_lr_scan`)
    in :data:`NULL_DRAWS` seeded series of ``n`` records of the local level model without a
    step, at q = ``Q_GRID[g]``. The ratio is invariant to the level, the slope and σ, so the
    series are drawn in the rotated basis as √(1 + q·λ)·ε. Each draw profiles q again, as the
    series' own statistic did: this is the parametric bootstrap of the whole test at the
    estimate under the null hypothesis (Efron & Tibshirani, *An Introduction to the
    Bootstrap*, 1993, §16.4; Davison & Hinkley, *Bootstrap Methods*, 1997, §4.2), the
    distribution of the largest ratio over unknown places (Hinkley, Biometrika 1970) being
    simulated rather than bounded, as in Andrews, Econometrica 1993."""
    e = np.random.default_rng(20251126 + n).standard_normal((n, NULL_DRAWS))
    uy = e * np.sqrt(1.0 + Q_GRID[g] * _eigenvalues(n))[:, None]
    return np.sort(np.max(_profiled_lr_scan(uy), axis=0))


def null_length(n: int) -> int:
    """The length whose simulated null a series of ``n`` records uses: ``n`` up to
    :data:`EXACT_NULL_RECORDS`, above it rounded up to a multiple of :data:`NULL_LENGTH_STEP`
    (never above :data:`MAX_NULL_RECORDS`)."""
    if n <= EXACT_NULL_RECORDS:
        return n
    return min(-(-n // NULL_LENGTH_STEP) * NULL_LENGTH_STEP, max(MAX_NULL_RECORDS, n))


def max_lr_p_value(lr: float, n: int, q: float) -> float:
    """The p-value of a step whose likelihood ratio (:func:`step_lr`) is ``lr`` when its place
    was chosen from the n − 1 places of a series of ``n`` records, at the walk ratio ``q``
    estimated without the step (nearest :data:`Q_GRID` point): the share of the simulated null
    maxima (:func:`_null_max_lr`, at :func:`null_length`) at least as large. Not a pivot —
    the null's 95 % point at 30 records goes from 10.5 at q = 0 to 16.7 at q = 1 — so the q
    estimated under the null hypothesis is the one that must be used (a q estimated with the
    step, at the place chosen where a walk wandered most, is too small). Neither is a
    per-place χ²₁ or F bound over the places (Bonferroni): at 200 records and q = 0.032 the
    null's 95 % point is 18.8 where Bonferroni's is about 13.4. ``n`` at most
    :data:`MAX_NULL_RECORDS`."""
    if n < 3:
        return 1.0
    if n > MAX_NULL_RECORDS:
        raise ValueError(f"{n} records: at most {MAX_NULL_RECORDS} (test a window around the step)")
    null = _null_max_lr(null_length(n), int(np.argmin(np.abs(Q_GRID - q))))
    exceed = null.size - int(np.searchsorted(null, lr, side="left"))
    return (exceed + 1) / (null.size + 1)


def grid_index(q: float) -> int:
    """The index of the :data:`Q_GRID` point nearest ``q``."""
    return int(np.argmin(np.abs(Q_GRID - q)))


def intervention_lr(y: Sequence[float], k: int, cuts: Sequence[int] = (),
                    q: float = 0.0) -> float:
    """The likelihood ratio n·ln(RSS₀/RSS₁) of a step at ``k`` (the other ``cuts`` in both
    models) with the walk ratio held at ``q`` (the nearest :data:`Q_GRID` point) in both models
    and σ² profiled: the generalized least-squares test of an intervention in the local level
    model with known q (Box & Tiao, JASA 1975; Harvey 1989, §7.6), the walk not free to absorb
    the step. :func:`intervention_p_value` calibrates it."""
    n = len(y)
    grid = Q_GRID[grid_index(q):grid_index(q) + 1]
    others = sorted({c for c in cuts if c != k and 0 < c < n})
    w, _, r0 = _weighted_fit(y, others, grid)
    _, _, r1 = _weighted_fit(y, [*others, k], grid)
    rss0 = max(float(np.sum(w[0] * r0[0] ** 2)), 1e-300)
    rss1 = max(float(np.sum(w[0] * r1[0] ** 2)), 1e-300)
    return max(n * math.log(rss0 / rss1), 0.0)


@functools.lru_cache(maxsize=512)
def _null_max_intervention_lr(n: int, g: int) -> np.ndarray:
    """The sorted largest :func:`intervention_lr` over the n − 1 places in
    :data:`NULL_DRAWS` seeded series of ``n`` records of the local level model without a step
    at q = ``Q_GRID[g]``, q held there in every draw as in the statistic (the exact null of the
    largest ratio at that q; the oracle of ``benchmarks/over_time.py`` is this test at the
    true q)."""
    e = np.random.default_rng(20251126 + n).standard_normal((n, NULL_DRAWS))
    uy = e * np.sqrt(1.0 + Q_GRID[g] * _eigenvalues(n))[:, None]
    root_w, basis, s, _ = _basis_at(n, float(Q_GRID[g]))
    r = uy * root_w[:, None]
    r = r - basis @ (basis.T @ r)
    rss0 = np.maximum(np.einsum("id,id->d", r, r), 1e-300)
    proj = s.T @ r
    scan = n * (np.log(rss0)[None, :] - np.log(np.maximum(rss0[None, :] - proj * proj, 1e-300)))
    return np.sort(np.max(np.maximum(scan, 0.0), axis=0))


def intervention_p_value(lr: float, n: int, q: float) -> float:
    """The p-value of a step whose :func:`intervention_lr` at ``q`` is ``lr`` when its place
    was chosen from the n − 1 places of a series of ``n`` records: the share of the simulated
    null maxima at that q (:func:`_null_max_intervention_lr`) at least as large, at least
    1/(:data:`NULL_DRAWS` + 1). At the true q the null changes little with q (its 95 % point at
    30 records is 10.4–11.5 over q = 0 … 10), but the statistic held at a q smaller than the true
    one counts the wander as steps and grows, so q must not be taken too small:
    ``history.regressions._step_lr`` holds it at an upper confidence bound."""
    if n < 3:
        return 1.0
    if n > MAX_NULL_RECORDS:
        raise ValueError(f"{n} records: at most {MAX_NULL_RECORDS} (test a window around the step)")
    null = _null_max_intervention_lr(n, grid_index(q))
    exceed = null.size - int(np.searchsorted(null, lr, side="left"))
    return (exceed + 1) / (null.size + 1)
