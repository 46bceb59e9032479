"""Streaming statistics and summaries against independently computed reference values."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.errors import ConfigurationError
from steadybench.stats import StreamingStats, ci_mean, ci_median, describe, describe_stream
from steadybench.stats.outliers import tukey_fences
from steadybench.stats.summary import median_rank_bounds


def test_welford_matches_numpy_on_large_offset_data():
    rng = np.random.default_rng(1)
    # A large offset defeats the naive sum-of-squares formula (catastrophic cancellation);
    # the reference variance is computed on the centred data, where it is exact to rounding.
    data = 1e6 + rng.normal(0, 1, 10_000)
    s = StreamingStats().extend(data)
    assert s.n == 10_000
    assert s.mean == pytest.approx(np.mean(data), rel=1e-14)
    assert s.variance == pytest.approx(np.var(data - 1e6, ddof=1), rel=1e-9)
    naive = (np.sum(data**2) - data.size * np.mean(data) ** 2) / (data.size - 1)
    assert abs(naive - np.var(data - 1e6, ddof=1)) > abs(s.variance - np.var(data - 1e6, ddof=1))
    assert (s.min, s.max) == (data.min(), data.max())


def test_chan_merge_equals_one_pass():
    rng = np.random.default_rng(2)
    a, b = rng.exponential(3, 500), rng.normal(10, 2, 1234)
    merged = StreamingStats().extend(a).merge(StreamingStats().extend(b))
    both = np.concatenate([a, b])
    assert merged.n == both.size
    assert merged.mean == pytest.approx(both.mean(), rel=1e-12)
    assert merged.variance == pytest.approx(both.var(ddof=1), rel=1e-12)
    assert StreamingStats().merge(StreamingStats()).n == 0


def test_streaming_undefined_values():
    empty = StreamingStats()
    assert empty.variance is None and empty.stdev is None
    one = StreamingStats().extend([5.0])
    assert one.mean == 5.0 and one.variance is None
    assert describe_stream(empty)["mean"] is None
    assert describe_stream(one)["stdev"] is None and describe_stream(one)["median"] is None
    assert StreamingStats.from_dict(one.to_dict()) == one


def test_describe_matches_numpy():
    data = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    d = describe(data)
    assert d["mean"] == pytest.approx(np.mean(data))
    assert d["median"] == pytest.approx(np.median(data))
    assert d["stdev"] == pytest.approx(np.std(data, ddof=1))
    assert d["q1"] == pytest.approx(np.percentile(data, 25))
    assert d["q3"] == pytest.approx(np.percentile(data, 75))
    assert d["iqr"] == pytest.approx(d["q3"] - d["q1"])
    assert d["cov"] == pytest.approx(np.std(data, ddof=1) / np.mean(data))


def test_describe_undefined_cases():
    assert all(v is None for v in describe([]).values())
    one = describe([2.0])
    assert one["mean"] == 2.0 and one["stdev"] is None and one["cov"] is None
    same = describe([1e-7] * 5)
    assert same["stdev"] == 0.0 and same["cov"] == 0.0 and same["mean"] == 1e-7
    zero = describe([0.0, 0.0, 0.0])
    assert zero["cov"] is None  # s / 0 is undefined, not inf


def test_ci_mean_matches_scipy_t_interval():
    data = [10.1, 9.8, 10.4, 10.0, 9.9, 10.3, 10.2]
    ci = ci_mean(data, 0.9)
    low, high = sps.t.interval(0.9, len(data) - 1, loc=np.mean(data), scale=sps.sem(data))
    assert (ci.low, ci.high) == (pytest.approx(low), pytest.approx(high))
    assert ci_mean([1.0], 0.95) is None
    with pytest.raises(ConfigurationError):
        ci_mean(data, 1.5)


def test_ci_median_order_statistics_reference():
    # n = 10 at 95%: the classic table gives the 2nd and 9th order statistics (coverage 97.85%).
    assert median_rank_bounds(10, 0.95)[:2] == (2, 9)
    assert median_rank_bounds(10, 0.95)[2] == pytest.approx(1 - 2 * 11 / 1024)
    data = list(range(10, 0, -1))
    ci = ci_median(data, 0.95)
    assert (ci.low, ci.high) == (2.0, 9.0)
    # n = 5: even [min, max] covers only 1 - 2/32 = 93.75% < 95%: undefined
    assert ci_median([1, 2, 3, 4, 5], 0.95) is None
    assert ci_median([1, 2, 3, 4, 5], 0.9) is not None
    # brute-force check of the coverage rule for many n
    for n in range(6, 60):
        j, k, cov = median_rank_bounds(n, 0.95)
        assert k == n + 1 - j and cov >= 0.95
        assert 1 - 2 * sps.binom.cdf(j, n, 0.5) < 0.95  # j + 1 would not hold the level


def test_tukey_fences():
    data = [1, 2, 3, 4, 5, 6, 7, 8, 100]
    low, high = tukey_fences(data)
    q1, q3 = np.percentile(data, [25, 75])
    assert (low, high) == (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1))
    assert tukey_fences([1, 2, 3]) is None
    assert math.isfinite(tukey_fences(data, 3.0)[1])
