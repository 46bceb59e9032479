"""history/pairs.py: the sampled pair slopes equal sampling from every slope (same seed)."""

import numpy as np
import pytest

from steadybench.history.pairs import pair_slopes


def _every_then_sample(arr, breaks, limit, seed):
    edges = [0, *breaks, arr.size]
    parts = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                parts.append((arr[j] - arr[i]) / (j - i))
    every = np.asarray(parts)
    if every.size > limit:
        every = np.random.default_rng(seed).choice(every, limit, replace=False)
    return every


@pytest.mark.parametrize(("n", "breaks", "limit"), [
    (60, [], 500), (60, [10, 45], 300), (60, [1, 59], 200), (30, [], 435), (30, [], 434),
    (1, [], 10), (2, [], 10), (40, [39], 100)])
def test_pair_slopes_equal_the_slopes_drawn_from_every_pair(n, breaks, limit):
    arr = np.random.default_rng(n + limit).normal(size=n).cumsum()
    want = _every_then_sample(arr, breaks, limit, 7)
    got = pair_slopes(arr, breaks, limit, 7)
    assert got.shape == want.shape
    assert np.array_equal(got, want)


def test_theil_sen_of_a_long_series_is_the_median_of_the_same_sample():
    from steadybench.history.regressions import THEIL_SEN_PAIRS, theil_sen

    y = np.random.default_rng(5).normal(size=700) + 0.001 * np.arange(700)
    i, j = np.triu_indices(700, k=1)
    every = (y[j] - y[i]) / (j - i)
    assert every.size > THEIL_SEN_PAIRS
    sample = np.random.default_rng(20251125).choice(every, THEIL_SEN_PAIRS, replace=False)
    assert theil_sen(y) == float(np.median(sample))
