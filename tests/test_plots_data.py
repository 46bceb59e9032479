"""The numbers behind the figures (output/plotdata.py, pure numpy), checked against worked
examples and independent references (scipy, direct loops), and the two bugs of the old plots:
complexity curves drawn with ln where the fit used log2, and sweep tables whose R² is a list."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy import stats as sps

from steadybench.model.results import CaseResult
from steadybench.output import plotdata as pd
from steadybench.programs.sweep import COMPLEXITY_CLASSES, fit_complexity, sweep_table


# ---------------------------------------------------------------- robust axes
def test_bulk_fills_the_axis_and_outliers_are_counted() -> None:
    rng = np.random.default_rng(0)
    bulk = 1e-3 * (1 + 0.02 * rng.standard_normal(1000))
    values = np.concatenate([bulk, [0.1] * 5])  # five runs 100× slower
    lim = pd.robust_limits(values)
    assert lim.above == 5 and lim.below == 0 and lim.outside == 5
    assert lim.high < 1.2e-3  # the axis is the bulk's, not 0.1
    assert lim.low > 0.8e-3 and lim.low < bulk.min()
    # the far fences: Q1 − 3·IQR, Q3 + 3·IQR, clipped to the data, padded 4 %
    q1, q3 = np.percentile(values, [25, 75])
    hi = min(values.max(), q3 + 3 * (q3 - q1))
    lo = max(values.min(), q1 - 3 * (q3 - q1))
    assert lim.high == pytest.approx(hi + 0.04 * (hi - lo))
    inside, below, above = pd.split_outside(values, lim)
    assert inside.sum() == 1000 and above.sum() == 5 and not below.any()


def test_robust_limits_without_spread() -> None:
    same = np.full(50, 2.0)
    lim = pd.robust_limits(same)
    assert lim.low < 2.0 < lim.high and lim.outside == 0
    mostly = np.concatenate([np.full(98, 1.0), [5.0, 9.0]])  # IQR 0: 1st–99th percentile
    lim = pd.robust_limits(mostly)
    assert lim.low < 1.0 < lim.high and lim.above >= 1
    assert pd.robust_limits(np.array([])) == pd.Limits(0.0, 1.0)
    assert pd.robust_limits(np.array([1e-9, 2e-9, 3e-9, 1.0]), positive=True).low > 0


# ---------------------------------------------------------------- density
def test_density_stays_in_the_support_and_integrates_to_one() -> None:
    rng = np.random.default_rng(1)
    values = rng.exponential(1e-3, 5000)  # a density with its mode at the boundary 0
    kde = pd.density(values)
    assert kde is not None
    assert kde.grid.min() >= values.min() and kde.grid.max() <= values.max()
    assert integrate.trapezoid(kde.values, kde.grid) == pytest.approx(1.0, abs=0.01)
    assert np.all(kde.values >= 0)


def test_density_agrees_with_scipy_away_from_the_ends() -> None:
    rng = np.random.default_rng(2)
    values = rng.normal(10.0, 1.0, 20_000)
    kde = pd.density(values)
    assert kde is not None
    q1, q3 = np.percentile(values, [25, 75])
    expected_bw = 0.9 * min(values.std(ddof=1), (q3 - q1) / 1.34) * values.size ** -0.2
    assert kde.bandwidth == pytest.approx(expected_bw)
    ref = sps.gaussian_kde(values, bw_method=kde.bandwidth / values.std(ddof=1))
    middle = (kde.grid > 8) & (kde.grid < 12)
    np.testing.assert_allclose(kde.values[middle], ref(kde.grid[middle]), rtol=0.01)


def test_density_of_degenerate_samples() -> None:
    assert pd.density(np.array([1.0])) is None
    assert pd.density(np.full(10, 3.0)) is None


def test_histogram_is_normalised_over_all_values() -> None:
    values = np.concatenate([np.linspace(1.0, 2.0, 99), [50.0]])
    lim = pd.robust_limits(values)
    dens, edges = pd.histogram(values, lim, bins=10)
    assert edges[0] == pytest.approx(lim.low) and edges[-1] == pytest.approx(lim.high)
    # the bars hold the 99 values inside: 99 % of the mass
    assert float(np.sum(dens * np.diff(edges))) == pytest.approx(0.99)


# ---------------------------------------------------------------- series
def test_binned_matches_a_loop_over_bins() -> None:
    rng = np.random.default_rng(3)
    x = np.arange(1.0, 1004.0)
    y = rng.lognormal(size=x.size)
    cx, lo, med, hi = pd.binned(x, y, 10)
    size = x.size // 10
    for i in range(10):
        seg = y[i * size:(i + 1) * size]
        assert med[i] == pytest.approx(np.median(seg))
        assert lo[i] == pytest.approx(np.percentile(seg, 1))
        assert hi[i] == pytest.approx(np.percentile(seg, 99))
    assert cx.size == 11 and med[-1] == pytest.approx(np.median(y[10 * size:]))


def test_clip_box_keeps_the_box() -> None:
    values = np.concatenate([np.linspace(1.0, 2.0, 200), [100.0, 200.0]])
    lim = pd.robust_limits(values)
    box = pd.clip_box(pd.box_stats(values, "x"), lim)
    assert box["whishi"] <= lim.high and box["q1"] < box["med"] < box["q3"] <= lim.high
    assert all(lim.low <= f <= lim.high for f in box["fliers"])


# ---------------------------------------------------------------- text
@pytest.mark.parametrize(("p", "text"), [(0.0, "< 1e-16"), (1e-300, "< 1e-16"),
                                         (3e-17, "< 1e-16"), (1e-16, "1e-16"),
                                         (0.01234, "0.0123"), (1.0, "1"), (None, "–"),
                                         (float("nan"), "–")])
def test_p_values_are_never_zero(p, text) -> None:
    assert pd.p_value_text(p) == text


# ---------------------------------------------------------------- growth (the two bugs)
@pytest.mark.parametrize("name", list(COMPLEXITY_CLASSES))
def test_drawn_class_is_the_fitted_function(name: str) -> None:
    """The old plots drew log n and n log n with ln while the fit used log2: every curve was
    0.693× the fitted one. The drawn f is now the fit's own f."""
    n = np.array([2.0, 8.0, 1024.0])
    np.testing.assert_allclose(pd.complexity_function(name)(n), COMPLEXITY_CLASSES[name](n))


def test_log_classes_are_base_two() -> None:
    assert float(pd.complexity_function("O(log n)")(np.array([8.0]))[0]) == pytest.approx(3.0)
    assert float(pd.complexity_function("n log n")(np.array([8.0]))[0]) == pytest.approx(24.0)
    assert pd.complexity_function("O(n²)")(np.array([3.0]))[0] == pytest.approx(9.0)
    assert pd.complexity_function("O(banana)") is None


@pytest.mark.parametrize("name", ["O(log n)", "O(n log n)", "O(n)", "O(n^2)"])
def test_fitted_curve_passes_through_exact_data(name: str) -> None:
    sizes = np.array([16.0, 64, 256, 1024, 4096])
    times = 3e-9 * COMPLEXITY_CLASSES[name](sizes)
    series = pd.GrowthSeries("x", sizes, times, complexity=fit_complexity(sizes, times))
    assert series.complexity["best"] == name
    curve = series.curve(points=400)
    assert curve is not None
    at_sizes = np.interp(np.log(sizes), np.log(curve[0]), np.log(curve[1]))
    np.testing.assert_allclose(np.exp(at_sizes), times, rtol=1e-3)


def _iters_case(size: int, slope: float) -> CaseResult:
    case = CaseResult("prog {size}", "prog {size}", {"size": size}, method="iters")
    case.extra["fit"] = {"kind": "iters", "slope": slope, "stddev": slope * 0.01, "r2": 0.999,
                         "loglog": {"factor": slope * 0.99, "geo_stdev": 1.01}}
    return case


def test_sweep_series_reads_the_real_sweep_table() -> None:
    """sweep_table writes R² per size (a list): the old plot called float() on it and
    crashed, so sweep --report and report on any sweep result failed."""
    table = sweep_table([_iters_case(s, 2e-9 * s) for s in (8, 16, 32, 64)])
    assert isinstance(table["r2"], list)
    series = pd.sweep_series(table)
    assert series is not None
    np.testing.assert_allclose(series.x, [8, 16, 32, 64])
    np.testing.assert_allclose(series.r2, [0.999] * 4)
    np.testing.assert_allclose(series.high - series.y, [2e-9 * s * 0.01 for s in (8, 16, 32,
                                                                                   64)])
    assert series.complexity["best"] == "O(n)"
    # an older file with one R² for the whole sweep still reads
    old = dict(table, r2=0.99)
    assert pd.sweep_series(old).r2.tolist() == [0.99] * 4
    assert pd.sweep_series({"sizes": [1, 2], "mean": [1.0]}) is None
    assert pd.sweep_series(None) is None


def test_growth_groups_from_points() -> None:
    pts = [pd.GrowthPoint("a", "n", float(n), 1e-9 * n * math.log2(n), None, None)
           for n in (16, 64, 256, 1024)]
    pts += [pd.GrowthPoint("b", "n", 10.0, 1.0, None, None)]  # one value: no series
    groups = pd.growth_groups(pts)
    assert [(p, s.label) for p, s in groups] == [("n", "a")]
    assert groups[0][1].complexity["best"] == "O(n log n)"
    assert pd.numeric_parameter({"n": 10, "mode": "fast", "flag": True, "s": "2.5"}) == [
        ("n", 10.0), ("s", 2.5)]
