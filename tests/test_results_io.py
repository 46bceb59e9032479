"""Results files: lossless JSON round trip, XML, CSV, Markdown, schema checks."""

import csv
import json
import xml.etree.ElementTree as ET

import pytest

from steadybench.errors import ResultsFormatError
from steadybench.model import Parameters, Results
from steadybench.model.implementation import CallableImplementation
from steadybench.output.files import results_to_markdown
from steadybench.output.results_io import load_results, results_to_json, write_results
from steadybench.output.writers import WRITERS
from steadybench.processors import TukeyOutlierFilter, finalize_case
from steadybench.runner import Runner, Runs
from steadybench.testing import SimulatedClock


def sample_results(name='sort <b>"x"</b> | y'):
    clock = SimulatedClock(read_cost_ns=50, jitter_ns=20, spike_prob=0.1, spike_ns=5000, seed=4)
    runner = Runner(Runs(30), warmup=2, clock=clock)
    case = runner.execute(
        CallableImplementation(clock.workload(1000), "impl"), Parameters(n=10), benchmark=name
    )
    finalize_case(case, [TukeyOutlierFilter()], runner.method)
    case.extra["note"] = {"nested": [1, 2.5, None]}
    return Results(
        suite="suite",
        cases=[case],
        environment={"cpu_model": "test"},
        context={"preset": "baseline"},
    )


def test_json_round_trip_is_lossless(tmp_path):
    results = sample_results()
    path = write_results(results, tmp_path / "r.json")
    again = load_results(path)
    assert again.to_dict() == results.to_dict()
    data = json.loads(path.read_text())
    entry = data["benchmarks"][0]
    for key in (
        "name",
        "implementation",
        "params",
        "unit",
        "n",
        "samples",
        "stats",
        "ci",
        "stop_reason",
        "warnings",
    ):
        assert key in entry
    assert entry["unit"] == "s" and entry["n"] == 30 and len(entry["samples"]) == 30
    assert set(entry["stats"]) >= {"mean", "median", "stdev", "min", "max", "q1", "q3", "cov"}
    assert set(entry["ci"]) >= {"low", "high", "confidence"}
    assert data["schema_version"] == 1 and "cpu_model" in data["environment"]


def test_nan_and_infinity_become_null():
    results = sample_results()
    results.cases[0].extra["bad"] = [float("nan"), float("inf")]
    assert json.loads(results_to_json(results))["benchmarks"][0]["extra"]["bad"] == [None, None]


def test_other_formats_hold_the_numbers(tmp_path):
    results = sample_results()
    for fmt, writer in WRITERS.items():
        writer(results, tmp_path / f"r.{fmt}")
    root = ET.parse(tmp_path / "r.xml").getroot()
    bench = root.find("benchmark")
    assert bench.get("name") == 'sort <b>"x"</b> | y' and bench.get("n") == "30"
    est = results.cases[0].estimate
    assert float(bench.find("stats").get("mean")) == results.cases[0].stats["mean"]
    assert float(bench.find("estimate").get("value")) == est.value
    assert bench.find("estimate").get("unit") == "s" and bench.find("ci").get("of") == "mean"
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert float(rows[0]["estimate"]) == est.value and rows[0]["params"] == "n=10"
    assert float(rows[0]["ci_low"]) == est.ci_low and float(rows[0]["ci_high"]) == est.ci_high
    assert float(rows[0]["confidence"]) == est.confidence and rows[0]["unit"] == "s"
    assert float(rows[0]["sample_mean"]) == results.cases[0].stats["mean"]
    md = results_to_markdown(results)
    assert 'sort &lt;b&gt;"x"&lt;/b&gt; \\| y' in md  # HTML shown, not rendered; pipe escaped


@pytest.mark.slow
def test_a_case_without_estimate_renders_everywhere(tmp_path):
    """No estimate, or a failed one: every format shows the dash or an empty cell."""
    from steadybench.model.estimate import Estimate
    from steadybench.output.report import write_report

    results = sample_results()
    bare = results.cases[0]
    bare.estimate = None
    failed = sample_results("failed").cases[0]
    failed.estimate = Estimate.failed("no fit", method="linefit")
    results.cases.append(failed)
    for fmt, writer in WRITERS.items():
        writer(results, tmp_path / f"r.{fmt}")
    write_report([results], tmp_path / "r.html")
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert [r["estimate"] for r in rows] == ["", ""] and rows[0]["ci_low"] == ""
    for element in ET.parse(tmp_path / "r.xml").getroot().iter("estimate"):
        assert element.get("undefined") == "true" and element.get("value") is None
    md_rows = [line for line in results_to_markdown(results).splitlines() if "| impl |" in line]
    assert len(md_rows) == 2 and all("| — | — | — |" in line for line in md_rows)
    back = load_results(tmp_path / "r.json")
    assert back.cases[0].estimate is None and back.cases[1].estimate.error == "no fit"
    assert "no fit" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_bad_files_give_one_clear_error(tmp_path):
    with pytest.raises(ResultsFormatError, match="no such file"):
        load_results(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ResultsFormatError, match="not valid JSON"):
        load_results(bad)
    bad.write_text('{"results": []}')
    with pytest.raises(ResultsFormatError, match="not a steadybench results file"):
        load_results(bad)
    bad.write_text('{"schema_version": 99, "benchmarks": []}')
    with pytest.raises(ResultsFormatError, match="schema version 99"):
        load_results(bad)
    bad.write_text('{"schema_version": 1, "benchmarks": [{"no_name": 1}]}')
    with pytest.raises(ResultsFormatError, match="malformed"):
        load_results(bad)


def test_hand_made_file_with_samples_only(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(
        json.dumps({"schema_version": 1, "benchmarks": [{"name": "x", "samples": [1.0, 2.0, 3.0]}]})
    )
    case = load_results(path).cases[0]
    assert case.samples == [1.0, 2.0, 3.0] and case.n == 3


def test_tree_and_find():
    results = sample_results("b")
    tree = results.tree()
    assert tree["b"]["impl"]["n=10"] is results.cases[0]
    assert results.find("b", n=10) is results.cases[0] and results.find("b", n=11) is None


def test_atomic_write_gives_the_usual_file_mode(tmp_path):
    import os

    from steadybench.fileio import atomic_write_text

    (tmp_path / "sub").mkdir()  # an output's folder must exist (issue 27 item 18)
    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "sub" / "f.txt", "x")
    finally:
        os.umask(old)
    assert path.read_text() == "x" and (path.stat().st_mode & 0o777) == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]  # no temporary file left
