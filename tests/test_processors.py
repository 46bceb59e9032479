"""Filters and analyzers over Results."""

from array import array

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.model import CaseResult
from steadybench.processors import (
    CiMeanAnalyzer,
    CiMedianAnalyzer,
    CovAnalyzer,
    HistogramAnalyzer,
    InvalidRunsRemover,
    MaxAnalyzer,
    MeanAnalyzer,
    MedianAnalyzer,
    MinAnalyzer,
    PercentilesAnalyzer,
    QuartilesAnalyzer,
    ResultsRemover,
    StdevAnalyzer,
    SumAnalyzer,
    SummaryAnalyzer,
    TukeyOutlierFilter,
    WarmupFilter,
    WindowFilter,
    finalize_case,
)

VALUES = [5.0, 3.0, 4.0, 4.5, 3.5, 4.2, 3.8, 20.0, 4.1, 3.9]


def make_case(values=VALUES, statuses=None):
    case = CaseResult("b", "i")
    for v, s in zip(values, statuses or ["ok"] * len(values)):
        case.add_run(s, {"wall_time": v, "success": 0.0 if s == "failed" else 1.0})
        if s == "ok":
            case.accumulate({"wall_time": v})
    return case


def test_analyzers_match_numpy():
    case = make_case()
    analyzers = [
        MeanAnalyzer(),
        MedianAnalyzer(),
        MinAnalyzer(),
        MaxAnalyzer(),
        SumAnalyzer(),
        StdevAnalyzer(),
        CovAnalyzer(),
        QuartilesAnalyzer(),
        PercentilesAnalyzer((10, 90)),
        HistogramAnalyzer(bins=4),
        CiMeanAnalyzer(0.9),
        CiMedianAnalyzer(0.95),
    ]
    for a in analyzers:
        a.process([case])
    a = case.analyses
    arr = np.array(VALUES)
    assert a["mean"] == pytest.approx(arr.mean()) and a["median"] == pytest.approx(np.median(arr))
    assert (a["min"], a["max"], a["sum"]) == (3.0, 20.0, pytest.approx(arr.sum()))
    assert a["stdev"] == pytest.approx(arr.std(ddof=1))
    assert a["cov"] == pytest.approx(arr.std(ddof=1) / arr.mean())
    assert a["quartiles"]["q3"] == pytest.approx(np.percentile(arr, 75))
    assert a["percentiles"]["p90"] == pytest.approx(np.percentile(arr, 90))
    assert sum(a["histogram"]["counts"]) == 10 and len(a["histogram"]["edges"]) == 5
    low, high = sps.t.interval(0.9, 9, loc=arr.mean(), scale=sps.sem(arr))
    assert a["ci_mean"]["low"] == pytest.approx(low) and a["ci_mean"]["high"] == pytest.approx(high)
    srt = np.sort(arr)
    assert (a["ci_median"]["low"], a["ci_median"]["high"]) == (srt[1], srt[8])


def test_tukey_marks_by_default_and_removes_when_asked():
    marked = make_case()
    finalize_case(marked, [TukeyOutlierFilter()])
    assert marked.n == 10 and marked.outlier[7] and sum(marked.outlier) == 1
    assert marked.analyses["outliers"]["count"] == 1
    removed = make_case()
    finalize_case(removed, [TukeyOutlierFilter(action="remove")])
    assert removed.n == 9 and removed.status[7] == "removed"
    assert removed.stats["max"] == 5.0
    assert removed.values("wall_time", status=None)[7] == 20.0  # kept, only marked removed


def test_warmup_and_window_filters():
    case = make_case()
    WarmupFilter(2).process([case])
    assert case.status[:3] == ["warmup", "warmup", "ok"] and case.n == 8
    WindowFilter(3).process([case])
    assert case.n == 3 and case.values() == [20.0, 4.1, 3.9]
    assert case.stream["wall_time"].n == 3


def test_invalid_runs_and_results_remover():
    case = make_case(VALUES[:4], ["ok", "failed", "ok", "ok"])
    InvalidRunsRemover().process([case])
    assert case.status == ["ok"] * 3 and list(case.metrics["wall_time"]) == [5.0, 4.0, 4.5]
    ResultsRemover("success").process([case])
    assert "success" not in case.metrics


def test_summary_in_streaming_mode_and_undefined_cases():
    case = CaseResult("b", "i", keep_samples=False)
    for v in VALUES:
        case.accumulate({"wall_time": v})
    SummaryAnalyzer().process_case(case)
    assert case.stats["mean"] == pytest.approx(np.mean(VALUES)) and case.stats["median"] is None
    assert case.ci is not None
    TukeyOutlierFilter().process([case])
    assert any("streaming" in w for w in case.warnings)
    MedianAnalyzer().process([case])
    assert case.analyses["median"] is None
    MeanAnalyzer().process([case])
    assert case.analyses["mean"] == pytest.approx(np.mean(VALUES))

    empty = finalize_case(CaseResult("b", "i"))
    assert empty.stats["mean"] is None and empty.ci is None
    assert "no successful runs" in empty.warnings[0]
    one = finalize_case(make_case([1.0]))
    assert one.stats["stdev"] is None and one.ci is None and "one run only" in one.warnings[0]
    flat = finalize_case(make_case([2.0] * 5))
    assert flat.stats["stdev"] == 0.0 and flat.ci["low"] == flat.ci["high"] == 2.0


def test_nan_columns_when_a_metric_appears_late():
    case = CaseResult("b", "i")
    case.add_run("ok", {"wall_time": 1.0})
    case.add_run("ok", {"wall_time": 2.0, "temperature": 50.0})
    assert isinstance(case.metrics["temperature"], array)
    assert case.values("temperature") == [50.0]
