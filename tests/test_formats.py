"""The formats CI dashboards read: BMF and github-action-benchmark validated against their
published schemas; pytest-benchmark JSON written and read back; asv result files read; all of
them read by ``compare``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from steadybench.cli import main
from steadybench.compare.readers import SampleFormatError, read_samples
from steadybench.formats import render
from steadybench.formats.asv import read_asv
from steadybench.formats.bmf import to_bmf
from steadybench.formats.gab import to_gab
from steadybench.formats.pytest_benchmark import (
    read_pytest_benchmark,
    stats_of,
    to_pytest_benchmark,
)
from steadybench.model.results import Results
from steadybench.output.results_io import results_from_data

DATA = Path(__file__).parent / "data"

#: github-action-benchmark's input, written from its parser (src/extract.ts, the zod object
#: ``BenchmarkResult``: name, value, unit required; range, extra optional strings). The action
#: coerces, so this schema is stricter than the action: exact types, no other keys.
GAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "value": {"type": "number"},
                       "unit": {"type": "string"}, "range": {"type": "string"},
                       "extra": {"type": "string"}},
        "required": ["name", "value", "unit"],
        "additionalProperties": False,
    },
}


def results() -> Results:
    doc = {"schema_version": 1, "created": "2024-05-01T10:00:00+00:00",
           "environment": {"hostname": "box", "cpu_model": "cpu", "cpu_count": 2,
                           "python": {"implementation": "CPython", "version": "3.11.9"}},
           "benchmarks": [
               {"name": "parse", "implementation": "parse", "params": {"n": 10}, "unit": "s",
                "method": "auto", "samples": [2.0e-6, 2.1e-6, 1.9e-6, 2.2e-6, 2.0e-6],
                "estimate": {"value": 2.0e-6, "ci_low": 1.9e-6, "ci_high": 2.1e-6,
                             "confidence": 0.95, "unit": "s", "level": "executions",
                             "n_executions": 3, "statistic": "median"},
                "processes": [{"value": 1.95e-6}, {"value": 2.0e-6}, {"value": 2.05e-6}]},
               {"name": "size", "implementation": "size", "unit": "B",
                "estimate": {"value": 4096.0, "unit": "B"}},
               {"name": "broken", "implementation": "broken", "unit": "s",
                "estimate": {"value": None, "error": "failed"}},
           ]}
    return results_from_data(doc)


def test_bmf_follows_bencher_schema_with_the_interval() -> None:
    schema = json.loads((DATA / "bencher-bmf.schema.json").read_text())
    out = json.loads(render("bmf", results()))
    jsonschema.validate(out, schema)
    latency = out["parse [n=10]"]["latency"]
    assert latency == pytest.approx({"value": 2000.0, "lower_value": 1900.0,
                                     "upper_value": 2100.0})
    assert out["size"] == {"b": {"value": 4096.0}}  # no interval: only the value
    assert "broken" not in out
    bad = {"x": {"latency": {"lower_value": 1.0}}}  # the schema is really checked
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert to_bmf(Results()) == {}


def test_github_action_benchmark_entries_follow_its_parser() -> None:
    out = json.loads(render("github-action-benchmark", results()))
    jsonschema.validate(out, GAB_SCHEMA)
    entry = out[0]
    assert entry["name"] == "parse [n=10]" and entry["unit"] == "ns"
    assert entry["value"] == pytest.approx(2000.0)
    assert entry["range"] == "± 100"
    assert "95% CI [1900, 2100] ns, across 3 executions" in entry["extra"]
    assert {e["name"] for e in to_gab(results())} == {"parse [n=10]", "size"}


def test_pytest_benchmark_json_is_written_and_read_back(tmp_path: Path) -> None:
    doc = to_pytest_benchmark(results())
    assert set(doc) == {"machine_info", "commit_info", "benchmarks", "datetime", "version"}
    bench = doc["benchmarks"][0]
    assert set(bench) == {"group", "name", "fullname", "params", "param", "extra_info",
                          "options", "stats"}
    assert set(bench["stats"]) == {"min", "max", "mean", "stddev", "rounds", "median", "iqr",
                                   "q1", "q3", "iqr_outliers", "stddev_outliers", "outliers",
                                   "ld15iqr", "hd15iqr", "ops", "total", "data", "iterations"}
    assert bench["stats"]["data"] == [2.0e-6, 2.1e-6, 1.9e-6, 2.2e-6, 2.0e-6]
    path = tmp_path / "pb.json"
    path.write_text(json.dumps(doc))
    back = read_pytest_benchmark(path, json.loads(path.read_text()))
    assert back.cases[0].values() == bench["stats"]["data"]
    assert back.cases[0].estimate.value == pytest.approx(2.0e-6)
    sset = read_samples(path)
    assert sset.kind == "pytest-benchmark"
    assert sset.samples[0].executions.tolist() == pytest.approx([2.0e-6])


def test_pytest_benchmark_stats_match_statistics_module() -> None:
    import statistics

    data = [5.0, 1.0, 3.0, 2.0, 4.0, 100.0, 2.5]
    s = stats_of(data, 1)
    assert s["mean"] == pytest.approx(statistics.fmean(data))
    assert s["stddev"] == pytest.approx(statistics.stdev(data))
    assert s["median"] == statistics.median(data)
    # 7 values, method 3 of Wikipedia's "Quartile": n = 1, remainder 3
    d = sorted(data)
    assert s["q1"] == pytest.approx(0.75 * d[1] + 0.25 * d[2])
    assert s["q3"] == pytest.approx(0.25 * d[4] + 0.75 * d[5])
    assert s["iqr_outliers"] == 1 and s["hd15iqr"] == 5.0


def asv_file(tmp_path: Path) -> Path:
    """A result file laid out as asv's Results.save writes it (API version 2)."""
    data = {
        "commit_hash": "0123456789abcdef0123456789abcdef01234567", "env_name": "virtualenv-py3.11",
        "date": 1714557600000, "params": {"machine": "box", "arch": "x86_64", "cpu": "cpu",
                                          "num_cpu": "2", "os": "Linux", "python": "3.11"},
        "python": "3.11", "requirements": {}, "env_vars": {},
        "result_columns": ["result", "params", "version", "started_at", "duration",
                           "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75",
                           "stats_number", "stats_repeat", "samples", "profile"],
        "results": {
            "bench.time_sort": [[1.5e-3], [], "abc", 1714557600000, 1.2, [1.4e-3], [1.6e-3],
                                [1.45e-3], [1.55e-3], [10], [5],
                                [[1.5e-3, 1.45e-3, 1.55e-3, 1.5e-3, 1.52e-3]]],
            "bench.time_param": [[1e-3, None, 3e-3], [["1", "2", "3"]], "def", 1714557600000,
                                 2.0],
        },
        "durations": {}, "version": 2}
    path = tmp_path / "0123abcd-virtualenv-py3.11.json"
    path.write_text(json.dumps(data))
    return path


def test_asv_result_files_are_read(tmp_path: Path) -> None:
    path = asv_file(tmp_path)
    res = read_asv(path, json.loads(path.read_text()))
    names = [c.benchmark for c in res.cases]
    assert names == ["bench.time_sort", "bench.time_param(1)", "bench.time_param(3)"]
    sort = res.cases[0]
    assert sort.values() == [1.5e-3, 1.45e-3, 1.55e-3, 1.5e-3, 1.52e-3]
    assert (sort.estimate.value, sort.estimate.ci_low, sort.estimate.ci_high) == \
        (1.5e-3, 1.4e-3, 1.6e-3)
    assert sort.estimate.confidence == 0.99 and sort.estimate.level == "runs"
    assert res.context["git"]["commit"].startswith("0123456789")
    assert any("time_param(2): no result" in s for s in res.context["skipped"])
    assert res.created.startswith("2024-05-01")
    sset = read_samples(path)
    assert sset.kind == "asv" and len(sset.samples) == 3


def test_compare_reads_the_imported_formats(tmp_path: Path) -> None:
    pb = tmp_path / "pb.json"
    pb.write_text(json.dumps(to_pytest_benchmark(results())))
    out = tmp_path / "c.json"
    assert main(["compare", str(pb), str(pb), "--json", str(out), "--quiet"]) == 0
    row = json.loads(out.read_text())["benchmarks"][0]
    assert row["verdict"] == "inconclusive: one execution"


def test_malformed_inputs_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"machine_info": {}, "benchmarks": [{"name": "x",
                                                                   "stats": {"data": ["a"]}}]}))
    with pytest.raises(SampleFormatError, match=r"stats.data\[0\]: not a valid time"):
        read_samples(bad)
    assert main(["compare", str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ")
    asv_bad = tmp_path / "asv.json"
    asv_bad.write_text(json.dumps({"result_columns": ["result"], "results": {"x": "oops"}}))
    with pytest.raises(SampleFormatError, match="is not a list"):
        read_samples(asv_bad)
