"""Two-sample permutation test of a difference of medians or means.

Sources: Fisher (1935) *The Design of Experiments* §21; Pitman (1937) "Significance tests
which may be applied to samples from any populations", JRSS Suppl. 4, 119–130; the Monte Carlo
p-value (1 + #{T* ≥ T})/(B + 1) of Davison & Hinkley (1997) *Bootstrap Methods and their
Application* §4.3 and Phipson & Smyth (2010) "Permutation p-values should never be zero",
SAGAP 9(1).

The statistic is T = stat(x) − stat(y). Under H₀ the N = n_x + n_y values are exchangeable
(e.g. both samples from one distribution, whatever its shape: bimodal, heavy-tailed, discrete),
so every split of the pooled values into n_x and n_y is equally likely given the pooled values.
Hence:

* ``"exact"`` (all C(N, n_x) splits, when that is ≤ ``n_resamples``):
  p_greater = #{T* ≥ T}/C, p_less = #{T* ≤ T}/C, p_two_sided = #{|T*| ≥ |T|}/C, the observed
  split being one of the C. P(p ≤ a) ≤ a for every a under H₀.
* ``"Monte Carlo"`` (B = ``n_resamples`` uniformly random splits): the same counts with
  (1 + #)/(B + 1), which also gives P(p ≤ a) ≤ a exactly under H₀ (the observed statistic is
  exchangeable with the B resampled ones).

This is the property the location-shift bootstrap test lacked: it called identical bimodal
samples different 36–51% of the time at a nominal 5%. (Its validity is for H₀ "same
distribution"; it is not a test of equal medians between differently shaped distributions.)

Comparisons use a tolerance of 1e-12 relative to the data's scale, so that the observed split
computed in a different summation order still counts as "≥ T" (scipy's ``permutation_test``
does likewise). Work is vectorised and chunked: at most ~2·10⁶ values are materialised at a
time, whatever ``n_resamples``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .rank import finite_sample

STATISTICS = ("median", "mean")

#: values materialised per chunk of resamples
_CHUNK_VALUES = 2_000_000

ArrayLike = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class PermutationResult:
    """``statistic`` = stat(x) − stat(y); the three p-values; ``method`` ``"exact"`` or
    ``"Monte Carlo"``; ``n_resamples`` the number of splits evaluated (C(N, n_x) when exact)."""

    statistic: float
    p_two_sided: float
    p_greater: float
    p_less: float
    method: str
    n_resamples: int
    statistic_name: str


def _stat_rows(values: np.ndarray, statistic: str) -> np.ndarray:
    if statistic == "median":
        return np.median(values, axis=1)
    return np.mean(values, axis=1)


def _split_stats(pooled: np.ndarray, perms: np.ndarray, nx: int, statistic: str) -> np.ndarray:
    """T* for each row of ``perms`` (indices into ``pooled``; the first ``nx`` form x)."""
    vals = pooled[perms]
    return _stat_rows(vals[:, :nx], statistic) - _stat_rows(vals[:, nx:], statistic)


def permutation_test(x: ArrayLike, y: ArrayLike, statistic: str = "median",
                     n_resamples: int = 9999, seed: int = 0) -> PermutationResult:
    """Permutation test of H₀: x and y are exchangeable, with T = stat(x) − stat(y).

    ``p_greater`` is small when x tends to be larger than y. Exact enumeration when
    C(n_x + n_y, n_x) ≤ ``n_resamples``, else ``n_resamples`` random splits from
    ``numpy.random.default_rng(seed)`` (same input and seed, same result).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples!r}")
    n_resamples = int(n_resamples)
    xs, ys = finite_sample(x, "x"), finite_sample(y, "y")
    nx, ny = xs.size, ys.size
    total = nx + ny
    pooled = np.concatenate((xs, ys))
    observed = float(_stat_rows(xs[None, :], statistic)[0] - _stat_rows(ys[None, :],
                                                                            statistic)[0])
    tol = 1e-12 * max(float(np.max(np.abs(pooled))), abs(observed), np.finfo(float).tiny)
    chunk = max(1, _CHUNK_VALUES // total)
    n_splits = math.comb(total, nx)
    ge = le = ge_abs = 0

    def tally(t: np.ndarray) -> None:
        nonlocal ge, le, ge_abs
        ge += int(np.count_nonzero(t >= observed - tol))
        le += int(np.count_nonzero(t <= observed + tol))
        ge_abs += int(np.count_nonzero(np.abs(t) >= abs(observed) - tol))

    if n_splits <= n_resamples:
        combos = itertools.combinations(range(total), nx)
        done = 0
        while done < n_splits:
            block = np.array(list(itertools.islice(combos, chunk)), dtype=np.intp)
            block = block.reshape(-1, nx)
            rows = block.shape[0]
            in_x = np.zeros((rows, total), dtype=bool)
            in_x[np.arange(rows)[:, None], block] = True
            rest = np.nonzero(~in_x)[1].reshape(rows, ny)
            tally(_split_stats(pooled, np.concatenate((block, rest), axis=1), nx, statistic))
            done += rows
        return PermutationResult(statistic=observed, p_two_sided=ge_abs / n_splits,
                                 p_greater=ge / n_splits, p_less=le / n_splits, method="exact",
                                 n_resamples=n_splits, statistic_name=statistic)
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        rows = min(chunk, n_resamples - done)
        perms = rng.permuted(np.broadcast_to(np.arange(total), (rows, total)), axis=1)
        tally(_split_stats(pooled, perms, nx, statistic))
        done += rows
    denom = n_resamples + 1
    return PermutationResult(statistic=observed, p_two_sided=(1 + ge_abs) / denom,
                             p_greater=(1 + ge) / denom, p_less=(1 + le) / denom,
                             method="Monte Carlo", n_resamples=n_resamples,
                             statistic_name=statistic)
