"""Plots: every figure renders as PNG and SVG from Results built here; the numbers behind the
figures (box statistics, moving average, running quantiles, fit band) are checked against
worked examples and scipy."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.errors import ConfigurationError
from steadybench.model.results import CaseResult, Results
from steadybench.output import plots as pl
from steadybench.output.results_io import results_to_json
from test_plots_support import (
    HOSTILE,
    PNG_MAGIC,
    fit_extra,
    make_case,
    make_results,
    png_size,
    sweep_extra,
    with_executions,
)


def _svg_text(path: Path) -> str:
    """All text of an SVG file (checks that it is well-formed XML)."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return " ".join(t for t in root.itertext())


def _check(path: Path, fmt: str) -> str:
    data = path.read_bytes()
    if fmt == "png":
        width, height = png_size(data)
        assert width >= 300 and height >= 150
        assert len(data) > 5_000  # not an empty canvas
        return ""
    assert data.lstrip().startswith(b"<?xml") or b"<svg" in data[:500]
    return _svg_text(path)


@pytest.fixture(scope="module")
def case() -> CaseResult:
    c = make_case("bench", n=150)
    c.extra["fit"] = fit_extra()
    c.extra["sweep"] = sweep_extra()
    return c


@pytest.mark.parametrize("fmt", ["png", "svg"])
@pytest.mark.slow
def test_every_plot_renders(tmp_path: Path, case: CaseResult, fmt: str) -> None:
    other = make_case("other", seed=3, mean=1.2e-3)
    results = Results(cases=[case, other])
    comparison = {"benchmarks": [{"name": "bench", "speedup": 1.2,
                                  "speedup_ci": {"low": 1.1, "high": 1.3}, "verdict": "faster",
                                  "p_value": 0.001}],
                  "suite": {"gain": {"median": {"all": {"gain": 0.1, "speedup": 1 / 0.9}}}}}
    outputs = {
        "histogram": pl.plot_histogram(case, tmp_path / f"h.{fmt}"),
        "boxplot": pl.plot_boxplot(results, tmp_path / f"b.{fmt}"),
        "timeseries": pl.plot_timeseries(case, tmp_path / f"t.{fmt}", window=5),
        "fit": pl.plot_fit(case, tmp_path / f"f.{fmt}"),
        "evolution": pl.plot_error_evolution([other, case], tmp_path / f"e.{fmt}",
                                             labels=["baseline", "managed"]),
        "sweep": pl.plot_sweep(case, tmp_path / f"s.{fmt}"),
        "comparison": pl.plot_comparison(case, other, tmp_path / f"c.{fmt}",
                                         comparison["benchmarks"][0]),
        "suite": pl.plot_suite(comparison, tmp_path / f"u.{fmt}"),
    }
    texts = {k: _check(p, fmt) for k, p in outputs.items()}
    for path in outputs.values():
        assert path.suffix == f".{fmt}" and path.exists()
    if fmt == "svg":  # content: the labels the figure promises
        assert "median" in texts["histogram"] and "kernel density" in texts["histogram"]
        assert "warm-up (5)" in texts["timeseries"] and "removed (1)" in texts["timeseries"]
        assert "CPU frequency (MHz)" in texts["timeseries"]
        assert "temperature (°C)" in texts["timeseries"]
        assert "moving median (5 runs)" in texts["timeseries"]
        assert "dropped (1)" in texts["fit"] and "intercept 18 ns" in texts["fit"]
        assert "fit through all points" in texts["fit"]
        assert "baseline" in texts["evolution"] and "managed" in texts["evolution"]
        assert "O(n log n)" in texts["sweep"]
        assert "faster" in texts["comparison"] and "1.20×" in texts["comparison"]
        assert "overall speedup 1.111× (gain 10.00 %)" in texts["suite"]
        assert "p1–p99" in texts["boxplot"]


def test_too_few_samples_say_so(tmp_path: Path) -> None:
    one = CaseResult("one", "one")
    one.add_run("ok", {"wall_time": 1e-3})
    empty = CaseResult("empty", "empty")
    streaming = CaseResult("stream", "stream", keep_samples=False)
    streaming.accumulate({"wall_time": 1.0})
    text = _svg_text(pl.plot_histogram(one, tmp_path / "h1.svg"))
    assert "too few samples for a histogram (n = 1)" in text
    assert "raw samples were not kept" in _svg_text(pl.plot_histogram(streaming,
                                                                      tmp_path / "h2.svg"))
    assert "raw samples were not kept" in _svg_text(pl.plot_timeseries(streaming,
                                                                       tmp_path / "t.svg"))
    assert "too few ok runs for a moving median" in _svg_text(
        pl.plot_timeseries(one, tmp_path / "t1.svg"))
    assert "no samples to draw a box plot" in _svg_text(pl.plot_boxplot([empty, streaming],
                                                                        tmp_path / "b.svg"))
    assert "no samples" in _svg_text(pl.plot_error_evolution(empty, tmp_path / "e.svg"))
    assert "no fit data" in _svg_text(pl.plot_fit({}, tmp_path / "f.svg"))
    few = fit_extra(n=1, outlier=None)
    assert "too few points for a line fit" in _svg_text(pl.plot_fit(few, tmp_path / "f1.svg"))
    assert "no sweep data" in _svg_text(pl.plot_sweep({}, tmp_path / "s.svg"))
    assert "no speedups" in _svg_text(pl.plot_suite({"benchmarks": []}, tmp_path / "u.svg"))
    # all-equal samples: no kernel density possible, the histogram still renders
    same = CaseResult("same", "same")
    for _ in range(5):
        same.add_run("ok", {"wall_time": 2e-3})
    assert "5 runs" in _svg_text(pl.plot_histogram(same, tmp_path / "h3.svg"))


def test_hostile_names_render_literally(tmp_path: Path) -> None:
    case = make_case(HOSTILE, params={"p": "$x$"})
    png = pl.plot_histogram(case, tmp_path / "h.png").read_bytes()
    assert png[:8] == PNG_MAGIC
    svg_path = pl.plot_boxplot([case], tmp_path / "b.svg")
    raw = svg_path.read_text(encoding="utf-8")
    assert "<script>" not in raw  # escaped as XML text
    text = _svg_text(svg_path)
    assert "<script>alert" in text  # ... and shown literally, '$' not read as TeX
    assert "$\\frac{a$" in text


def test_bad_suffix_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="png or .svg"):
        pl.plot_histogram(make_case(), tmp_path / "h.jpg")


def test_huge_series_is_summarised(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    case = CaseResult("huge", "huge")
    values = 1e-6 * (1 + 0.02 * rng.standard_normal(100_000))
    from array import array

    case.status = ["ok"] * values.size
    case.status[:50] = ["warmup"] * 50
    case.outlier = [False] * values.size
    case.metrics = {"wall_time": array("d", values)}
    svg = pl.plot_timeseries(case, tmp_path / "t.svg")
    text = _svg_text(svg)
    assert "per bin" in text  # the binned envelope, not 100,000 markers
    assert svg.stat().st_size < 1_500_000
    box = pl.plot_boxplot([case], tmp_path / "b.svg")
    assert box.stat().st_size < 1_500_000
    assert pl.plot_error_evolution(case, tmp_path / "e.png").stat().st_size < 300_000


# ---------------------------------------------------------------- the numbers behind figures
def test_box_stats_worked_example() -> None:
    values = np.arange(1.0, 102.0)  # 1..101: linear-interpolation percentiles are exact
    b = pl.box_stats(values, "x")
    assert (b["whislo"], b["q1"], b["med"], b["q3"], b["whishi"]) == (2.0, 26.0, 51.0, 76.0,
                                                                       100.0)
    assert list(b["fliers"]) == [1.0, 101.0]
    assert b["mean"] == 51.0


def test_moving_average_worked_example() -> None:
    assert list(pl.moving_average(np.array([1.0, 2, 3, 4, 5]), 2)) == [1, 1.5, 2.5, 3.5, 4.5]
    assert list(pl.moving_average(np.array([3.0, 1]), 10)) == [3, 2]


def test_running_quantiles_and_error_evolution() -> None:
    rng = np.random.default_rng(2)
    values = rng.lognormal(size=500)
    ns = np.array([1, 2, 7, 100, 500])
    got = pl.running_quantiles(values, ns)
    for row, n in zip(got, ns):
        ref = sps.mstats.mquantiles(values[:n], prob=[0.25, 0.5, 0.75], alphap=1, betap=1)
        np.testing.assert_allclose(row, ref)  # type 7 = (alphap, betap) = (1, 1)
    evo = pl.error_evolution(np.array([2.0, 4.0, 6.0]), reference=4.0)
    assert list(evo["n"]) == [1, 2, 3]
    np.testing.assert_allclose(evo["error"], [-50.0, -25.0, 0.0])
    np.testing.assert_allclose(evo["iqr"], [0.0, 1.0 / 3 * 100, 50.0])
    grid = pl.evolution_grid(100_000)
    assert grid[0] == 1 and grid[-1] == 100_000 and grid.size <= pl.MAX_EVOLUTION_POINTS


def test_fit_band_matches_scipy() -> None:
    rng = np.random.default_rng(3)
    x = np.arange(1.0, 21.0)
    y = 40 * x + 18 + rng.normal(0, 3, x.size)
    grid = np.array([0.0, x.mean(), 20.0])
    line, low, high = pl.fit_band(x, y, grid, 0.95)
    reg = sps.linregress(x, y)
    np.testing.assert_allclose(line, reg.intercept + reg.slope * grid)
    s = np.sqrt(np.sum((y - reg.intercept - reg.slope * x) ** 2) / (x.size - 2))
    half_at_mean = sps.t.ppf(0.975, x.size - 2) * s / np.sqrt(x.size)
    np.testing.assert_allclose(high[1] - line[1], half_at_mean)
    # at x = 0 the band half-width is the standard error of the intercept times t
    np.testing.assert_allclose(high[0] - line[0], sps.t.ppf(0.975, 18) * reg.intercept_stderr)
    assert pl.fit_band(x[:2], y[:2], grid, 0.95) is None


@pytest.mark.parametrize(("name", "n", "expected"), [
    # logarithms in base 2, as the complexity fit (programs/sweep.py) uses them
    ("O(1)", 8.0, 1.0), ("O(log n)", 8.0, 3.0), ("O(n)", 8.0, 8.0),
    ("O(n log n)", 8.0, 24.0), ("O(n²)", 3.0, 9.0), ("n^3", 2.0, 8.0), ("O(n**2)", 3.0, 9.0),
])
def test_complexity_names(name: str, n: float, expected: float) -> None:
    fn = pl.complexity_function(name)
    assert fn is not None
    assert float(fn(np.array([n]))[0]) == pytest.approx(expected)
    assert pl.complexity_function("O(banana)") is None


def test_time_scale() -> None:
    assert pl.time_scale([2e-9]) == (1e9, "ns")
    assert pl.time_scale([5e-5]) == (1e6, "µs")
    assert pl.time_scale([0.2]) == (1e3, "ms")
    assert pl.time_scale([3.0]) == (1.0, "s")
    assert pl.format_value(1.5e-3) == "1.5 ms"
    assert pl.format_value(None) == "–"
    assert pl.time_scale([5.0], "MHz") == (1.0, "MHz")


def test_reads_the_compare_json(tmp_path: Path) -> None:
    """pair_summary/overall_gain on a real document of steadybench compare."""
    from steadybench.compare import CompareOptions, compare_files

    base = with_executions(make_results(("a", "b"), seed=0))
    new = with_executions(make_results(("a", "b"), seed=10, scale=0.8))
    (tmp_path / "base.json").write_text(results_to_json(base))
    (tmp_path / "new.json").write_text(results_to_json(new))
    doc = compare_files(str(tmp_path / "base.json"), str(tmp_path / "new.json"),
                        CompareOptions(resamples=200))[0].to_dict()
    doc = json.loads(json.dumps(doc, default=float))
    pairs = pl.comparison_pairs(doc)
    assert [p["name"] for p in pairs] == [r["name"] for r in doc["benchmarks"]]
    for p, row in zip(pairs, doc["benchmarks"]):
        assert p["speedup"] == pytest.approx(row["speedup"])
        assert p["verdict"] == row["verdict"] == "faster"
        assert p["ci"] == (row["speedup_ci"]["low"], row["speedup_ci"]["high"])
    gain = pl.overall_gain(doc)
    g = doc["suite"]["gain"]["median"]["all"]["gain"]
    assert gain.gain == pytest.approx(g) and gain.speedup == pytest.approx(1 / (1 - g))
    assert pl.plot_suite(doc, tmp_path / "suite.png").exists()
    # missing keys: what is there is shown, nothing raises
    assert pl.pair_summary({})["speedup"] is None
    assert pl.overall_gain({"benchmarks": []}) is None


@pytest.mark.slow
def test_plot_all_writes_every_figure(tmp_path: Path, case: CaseResult) -> None:
    results = make_results(("a",), monitors=False)
    results.cases.append(case)
    results.context["sweep"] = sweep_extra()
    written = pl.plot_all(results, tmp_path / "plots", fmt="svg")
    names = {p.name for p in written}
    assert "boxplot.svg" in names and "sweep.svg" in names
    assert any(n.endswith("-fit.svg") for n in names)
    assert sum(n.endswith("-timeseries.svg") for n in names) == 2
    assert all(p.exists() for p in written)


# ---------------------------------------------------------------- robust axes in the figures
def _with_slow_runs(name: str = "slow", mean: float = 1e-3, slow: int = 5,
                    seed: int = 0) -> CaseResult:
    """200 runs around ``mean`` and ``slow`` runs 100× slower."""
    rng = np.random.default_rng(seed)
    case = CaseResult(name, name)
    for v in mean * (1 + 0.02 * rng.standard_normal(200)):
        case.add_run("ok", {"wall_time": float(v)})
    for _ in range(slow):
        case.add_run("ok", {"wall_time": mean * 100})
    return case


def test_histogram_axis_is_the_bulk_with_outliers_counted(tmp_path: Path) -> None:
    case = _with_slow_runs()
    fig = pl.histogram_figure(case)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    assert hi < 1.2 and lo > 0.8  # ms: the 100 ms runs do not squash the bulk into one bar
    text = _svg_text(pl.save_figure(fig, tmp_path / "h.svg"))
    assert "5 above (max 100 ms)" in text
    # the density is drawn inside the data's range: no negative times
    kde = [line for line in ax.get_lines() if line.get_label() == "kernel density"][0]
    assert min(kde.get_xdata()) >= min(pl_samples(case)) * 1e3 - 1e-12


def pl_samples(case: CaseResult) -> np.ndarray:
    from steadybench.output.figures.common import samples

    return samples(case)


def test_timeseries_axis_is_the_bulk(tmp_path: Path) -> None:
    fig = pl.timeseries_figure(_with_slow_runs())
    lo, hi = fig.axes[0].get_ylim()
    assert hi < 1.2 and lo > 0.8
    assert "5 above" in _svg_text(pl.save_figure(fig, tmp_path / "t.svg"))


def test_boxes_are_boxes(tmp_path: Path) -> None:
    cases = [_with_slow_runs("a"), _with_slow_runs("b", mean=1.3e-3, seed=1)]
    fig = pl.boxplot_figure(cases)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    for case in cases:
        q1, q3 = np.percentile(pl_samples(case) * 1e3, [25, 75])
        assert (q3 - q1) / (hi - lo) > 0.03  # a visible box, not a line
    assert "10 above" in _svg_text(pl.save_figure(fig, tmp_path / "b.svg"))


def test_comparison_shows_a_60_percent_difference(tmp_path: Path) -> None:
    base = _with_slow_runs("x", mean=1.6e-3)
    new = _with_slow_runs("x", mean=1.0e-3, seed=1)
    entry = {"name": "x", "speedup": 1.6, "speedup_ci": {"low": 1.55, "high": 1.65},
             "verdict": "faster", "p_value": 0.0}
    fig = pl.comparison_figure(base, new, entry)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    gap = (np.median(pl_samples(base)) - np.median(pl_samples(new))) * 1e3
    assert gap / (hi - lo) > 0.4  # the two medians far apart on the axis
    text = _svg_text(pl.save_figure(fig, tmp_path / "c.svg"))
    assert "p = < 1e-16" in text and "p = 0" not in text
    assert "1.600× faster" in text


def test_sweep_figure_from_a_real_sweep_table(tmp_path: Path) -> None:
    """The crash of sweep --report: R² is a list per size in the table sweep writes."""
    from steadybench.programs.sweep import sweep_table

    cases = []
    for size in (8, 16, 32, 64, 128):
        c = CaseResult("prog", "prog", {"size": size}, method="iters")
        c.extra["fit"] = {"slope": 5e-9 * size * np.log2(size), "stddev": None, "r2": 0.99,
                          "loglog": None}
        cases.append(c)
    results = Results(cases=cases, context={"sweep": sweep_table(cases)})
    fig = pl.sweep_figure(results)
    ax = fig.axes[0]
    fitted = [ln for ln in ax.get_lines() if str(ln.get_label()).startswith("fit O(n log n)")]
    assert fitted, [ln.get_label() for ln in ax.get_lines()]
    x, y = fitted[0].get_xdata(), fitted[0].get_ydata()
    # the curve passes through the points (ns): 5·n·log2(n)
    np.testing.assert_allclose(np.interp(64.0, x, y), 5 * 64 * 6, rtol=0.01)
    assert "R² ≥ 0.9900" in _svg_text(pl.save_figure(fig, tmp_path / "s.svg"))
