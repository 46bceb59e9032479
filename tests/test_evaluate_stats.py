"""The statistics of ``evaluate`` (Rancid §VI) against independent references, and the level
detector (§VI-D) on series with known levels."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.evaluate.levels import detect_levels
from steadybench.evaluate.stats import (
    box_stats,
    error_evolution,
    evolution_points,
    improvement,
    spread,
    table2_row,
    table3_row,
)
from steadybench.evaluate.tables import table_lines

MS = 1e-3


@pytest.mark.parametrize("absolute_ms, relative, highlight", [
    # Rancid Table 3 (ms, relative to the baseline), and whether the paper highlights it
    (4.922, 0.87498, True),     # P8L C/C++ Gaussian Blur, precision
    (-0.148, -0.06290, False),  # XU3 C/C++ Gaussian Blur, precision: under 1 ms
    (9.384, 0.00487, False),    # XU3 Java Gaussian Blur, performance: under 1 %
    (0.099, 0.00021, False),    # SXZ OpenCL Gaussian Blur, performance: under both
    (-34.157, -0.00485, False),  # XU3 Java Pattern Thinning, performance: under 1 %
    (827.695, 0.17666, True),   # P8L Java Pattern Thinning, performance
])
def test_improvement_reproduces_the_papers_table3_cells(absolute_ms, relative, highlight):
    baseline = absolute_ms * MS / relative  # the baseline value the cell implies
    managed = baseline - absolute_ms * MS
    imp = improvement(baseline, managed)
    assert imp.absolute == pytest.approx(absolute_ms * MS, rel=1e-9)
    assert imp.relative == pytest.approx(relative, rel=1e-9)
    assert imp.highlight is highlight


def test_improvement_undefined_parts():
    assert improvement(None, 1.0).absolute is None
    assert improvement(0.0, 0.0).relative is None
    assert improvement(float("nan"), 1.0).highlight is False


def test_table_rows_match_numpy_and_statistics_references():
    rng = np.random.default_rng(7)
    base = rng.normal(0.050, 0.004, 400)
    managed = rng.normal(0.047, 0.001, 400)
    row = table2_row(base, managed)
    assert row.baseline.median == pytest.approx(statistics.median(base), rel=1e-12)
    assert row.baseline.std == pytest.approx(statistics.stdev(base), rel=1e-12)
    assert row.managed.std == pytest.approx(np.std(managed, ddof=1), rel=1e-12)
    perf = statistics.median(base) - statistics.median(managed)
    prec = statistics.stdev(base) - statistics.stdev(managed)
    assert row.performance.absolute == pytest.approx(perf, rel=1e-12)
    assert row.performance.relative == pytest.approx(perf / statistics.median(base), rel=1e-12)
    assert row.precision.absolute == pytest.approx(prec, rel=1e-12)
    assert row.precision.relative == pytest.approx(prec / statistics.stdev(base), rel=1e-12)
    assert row.performance.highlight and row.precision.highlight and row.highlight

    # Table 3: the spread of per-execution medians
    launches_b = [rng.normal(0.05, 0.003, 50) for _ in range(30)]
    launches_m = [rng.normal(0.05, 0.0005, 50) for _ in range(30)]
    med_b = [statistics.median(x) for x in launches_b]
    med_m = [statistics.median(x) for x in launches_m]
    row3 = table3_row(med_b, med_m)
    assert row3.baseline.n == 30
    assert row3.baseline.median == pytest.approx(statistics.median(med_b), rel=1e-12)
    assert row3.managed.std == pytest.approx(statistics.stdev(med_m), rel=1e-12)
    assert row3.precision.relative == pytest.approx(
        1 - statistics.stdev(med_m) / statistics.stdev(med_b), rel=1e-9)


def test_spread_of_one_value_has_no_std():
    assert spread([2.0]).std is None and spread([2.0]).median == 2.0
    assert spread([]).median is None


def test_box_stats_match_scipy_percentiles():
    x = np.random.default_rng(3).lognormal(0, 0.4, 997)
    box = box_stats(x)
    for name, q in (("p1", 1), ("q1", 25), ("median", 50), ("q3", 75), ("p99", 99)):
        assert getattr(box, name) == pytest.approx(sps.scoreatpercentile(x, q), rel=1e-12)
    assert (box.min, box.max, box.n) == (x.min(), x.max(), 997)
    assert box_stats([]) is None


def test_error_evolution_matches_a_direct_computation():
    x = np.random.default_rng(11).normal(1.0, 0.1, 300)
    ref = 0.98
    evo = error_evolution(x, ref)
    assert evo.n == list(range(1, 301))
    for n in (1, 2, 7, 150, 300):
        prefix = x[:n]
        med = statistics.median(prefix)
        assert evo.error[n - 1] == pytest.approx((med - ref) / ref, rel=1e-9, abs=1e-15)
        assert evo.iqr[n - 1] == pytest.approx(sps.iqr(prefix) / med, rel=1e-9, abs=1e-15)


def test_evolution_points_are_bounded_and_end_at_the_total():
    pts = evolution_points(123_456, 1000)
    assert len(pts) <= 1000 and pts[0] == 1 and pts[-1] == 123_456
    assert pts == sorted(set(pts))
    assert evolution_points(0) == []


# ------------------------------------------------------------------ levels (§VI-D)
def _noise(n: int, sd: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, sd, n)


def test_two_levels_jumping_back_and_forth():
    rng = np.random.default_rng(1)
    which = rng.random(300) < 0.4
    x = np.where(which, 0.0121, 0.0100) + _noise(300, 0.00005, 2)
    found = detect_levels(x)
    assert found.multi_level and found.kind == "jumps"
    values = [lv.value for lv in found.levels]
    assert values == pytest.approx([0.0100, 0.0121], abs=2e-5)
    assert found.levels[1].runs == int(which.sum())
    assert found.transitions == sum(1 for a, b in zip(which, which[1:]) if a != b)


def test_one_step():
    x = np.concatenate([np.full(120, 5.0), np.full(80, 5.6)]) + _noise(200, 0.02, 3)
    found = detect_levels(x)
    assert found.multi_level and found.kind == "step" and found.transitions == 1
    assert [lv.runs for lv in found.levels] == [120, 80]
    assert [lv.value for lv in found.levels] == pytest.approx([5.0, 5.6], abs=0.01)


def test_three_levels_like_frequency_steps():
    rng = np.random.default_rng(5)
    levels = np.array([1.0, 1.5, 2.2])
    x = levels[rng.integers(0, 3, 600)] + _noise(600, 0.01, 6)
    found = detect_levels(x)
    assert len(found.levels) == 3
    assert [lv.value for lv in found.levels] == pytest.approx(levels, abs=0.005)


@pytest.mark.parametrize("series", [
    "outliers", "lognormal", "normal", "constant", "short"])
def test_no_levels(series):
    rng = np.random.default_rng(9)
    if series == "outliers":  # a base level and a few slow runs (Fig. 17a's black bar)
        x = rng.normal(10.0, 0.05, 400)
        x[rng.choice(400, 12, replace=False)] += rng.uniform(1, 3, 12)
    elif series == "lognormal":
        x = rng.lognormal(0, 0.3, 400)
    elif series == "normal":
        x = rng.normal(3.0, 0.2, 400)
    elif series == "constant":
        x = np.full(100, 7.0)
    else:
        x = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0] * 3)  # 18 runs: too few to tell
    found = detect_levels(x)
    assert not found.multi_level and len(found.levels) == 1 and found.kind == "single"


def test_levels_do_not_depend_on_the_unit():
    rng = np.random.default_rng(4)
    x = np.where(rng.random(200) < 0.5, 1.0, 1.3) + _noise(200, 0.01, 8)
    a, b = detect_levels(x), detect_levels(x * 1e-6)
    assert a.kind == b.kind and a.assignment == b.assignment
    assert [lv.value * 1e-6 for lv in a.levels] == pytest.approx([lv.value for lv in b.levels])


# ------------------------------------------------------------------ the console tables
def test_table_lines_fit_80_columns_and_mark_highlights():
    row = table3_row([0.100, 0.104, 0.098], [0.090, 0.0905, 0.0901]).to_dict()
    long_label = "a_rather_long_benchmark_name[n=10000,mode=fast]"
    evaluation = {
        "options": {"baseline": "baseline", "managed": "managed", "launches": 3, "runs": 50,
                    "highlight_abs_s": 1e-3, "highlight_rel": 0.01},
        "cases": [{"label": long_label, "table2": {**row, "source": "long execution"},
                   "table3": row, "relation": "managed is 1.1× faster than baseline",
                   "levels": [{"preset": "managed", "series": "launches", "launch": 0,
                               "kind": "jumps", "transitions": 9,
                               "levels": [{"value": 0.01}, {"value": 0.012}]}]},
                  {"label": "short", "table2": None, "table3": None, "levels": []}],
    }
    lines = table_lines(evaluation)
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = "\n".join(lines)
    assert "Table 2." in text and "Table 3." in text and long_label in text
    # performance: 9.9 ms and 9.9 %, over both thresholds; precision 2.79 ms and 91 %
    assert "9.9 ms*" in text and "2.79 ms*" in text
    assert "jumps between 10 ms, 12 ms (9 changes)" in " ".join(text.split())
    assert "not measured for both presets" in text


# ------------------------------------------------------------------ the report section
def test_report_section_escapes_user_text_and_survives_missing_data():
    from steadybench.evaluate.figures import section_html

    row = table3_row([0.1, 0.2], [0.1, 0.1]).to_dict()
    evaluation = {
        "options": {"baseline": "<b>base</b>", "managed": "managed", "launches": 2, "runs": 3,
                    "long": 0, "order": "random", "seed": None, "highlight_abs_s": 1e-3,
                    "highlight_rel": 0.01},
        "presets": {}, "executions": {"planned": 4, "done": 3}, "interrupted": True,
        "cases": [
            {"label": "<script>alert(1)</script>", "table2": {**row,
                                                              "source": "pooled launches"},
             "table3": row, "fig15": {"baseline": box_stats([1.0, 2.0, 3.0]).to_dict(),
                                      "managed": None},
             "fig16": {"reference": 2.0, "baseline": error_evolution([1.0, 2.0], 2.0).to_dict(),
                       "managed": {"n": [], "error": [], "iqr": []}},
             "levels": [], "relation": None},
            {"label": "$x$ nothing", "table2": None, "table3": None, "fig15": {},
             "fig16": {}, "levels": []},
        ],
    }
    names = []

    def image(fig, name):
        fig.canvas.draw()  # the figure renders
        names.append(name)
        return {"src": "data:image/png;base64,", "name": name}

    html = section_html(evaluation, image)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&lt;b&gt;base&lt;/b&gt;" in html
    assert "interrupted" in html and "3 of 4 executions ran" in html
    assert names == ["evaluate-fig15-1", "evaluate-fig16-001", "evaluate-fig16-002"]


def test_error_evolution_of_a_long_series_at_spread_points():
    x = np.random.default_rng(12).lognormal(0, 0.5, 5000)
    evo = error_evolution(x, 1.1, points=300)
    assert len(evo.n) <= 300 and evo.n[-1] == 5000
    for i in range(0, len(evo.n), 37):
        prefix = x[:evo.n[i]]
        q1, med, q3 = np.percentile(prefix, [25, 50, 75])
        assert evo.error[i] == pytest.approx((med - 1.1) / 1.1, rel=1e-9, abs=1e-15)
        assert evo.iqr[i] == pytest.approx((q3 - q1) / med, rel=1e-9, abs=1e-15)


def test_malformed_evaluation_data_is_one_line_in_the_report():
    from steadybench.evaluate.figures import report_section

    section = report_section({"options": {}, "cases": [{"label": "x", "table2": {"no": 1}}]},
                             lambda fig, name: {"src": "", "name": name})
    assert "malformed" in str(section["html"])
