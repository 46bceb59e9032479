"""The lean reading of large results files (issue 27 item 13): ``compare`` builds its samples
straight from the JSON (steadybench.compare.lean) and ``history import`` encodes a file one
benchmark at a time (steadybench.history.importing); both must give exactly what the full
:class:`Results` path gives, on every kind of case, and hold far less memory."""

import json
import math

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.compare.core import compare_sets
from steadybench.compare.protocol import CompareOptions
from steadybench.compare.readers import _from_results, read_samples
from steadybench.errors import ResultsFormatError
from steadybench.history.importing import encode_results
from steadybench.history.record import measurements_of
from steadybench.output.results_io import finite_in_place, results_from_data
from steadybench.redact import redact_tree
from traced_memory import peak_traced


def _runs(values, status=None):
    status = status or ["ok"] * len(values)
    return {"status": status, "outlier": [0], "metrics": {"wall_time": values,
                                                          "cpu_time": values}}


def _document():
    """One entry of every kind the readers accept."""
    est = {"value": 0.002, "ci_low": 0.0019, "ci_high": 0.0021, "confidence": 0.95,
           "method": "median", "unit": "s"}
    return {
        "schema_version": 1, "suite": "kinds", "created": "2026-01-02T03:04:05+00:00",
        "environment": {"fingerprint": {"cpu": "x"},
                        "python": {"implementation": "CPython", "version": "3.11"}},
        "context": {"machine": {"preset": "quiet", "fingerprint": {"cpu": "x"}},
                    "token": "secret", "git": {"commit": "abc"}},
        "benchmarks": [
            # a hand-made entry: samples only
            {"name": "hand", "samples": [0.001, 0.0012, 0.0011]},
            # a run table with a failed run, a null and a NaN time, and an estimate
            {"name": "runs", "implementation": "impl", "params": {"n": 10, "kind": "a"},
             "method": "median", "runs": _runs([0.002, None, 0.0021, None, 0.0019],
                                              ["ok", "ok", "failed", "ok", "ok"]),
             "estimate": est, "stats": {"mean": 0.002, "skew": float("nan")}, "stream": {}},
            # several processes: one without a value, one not an object
            {"name": "procs", "runs": _runs([0.003, 0.0031, 0.0029, 0.003]),
             "processes": [{"value": 0.003, "n": 2}, {"value": None, "error": "killed"},
                           "junk", {"value": 0.0031, "n": 2}], "estimate": est},
            # an estimate that is not ok (no value): the samples' median is the execution
            {"name": "noest", "runs": _runs([0.004, 0.0041, 0.0042]),
             "estimate": {"value": None, "method": "median"}},
            # exec: one process per run
            {"name": "exec", "method": "exec", "runs": _runs([0.01, 0.011, 0.012])},
            # exec with several processes: executions as usual
            {"name": "exec2", "method": "exec", "runs": _runs([0.01, 0.011]),
             "processes": [{"value": 0.01}, {"value": 0.011}]},
            # only an estimate, no samples kept
            {"name": "estonly", "estimate": est},
            # nothing: skipped, samples not kept
            {"name": "empty"},
            # every run failed: skipped, no successful runs
            {"name": "allfailed", "runs": _runs([0.1, 0.2], ["failed", "failed"])},
            # a count
            {"name": "count", "unit": "instructions", "runs": _runs([1000.0, 1000.0]),
             "estimate": {"value": 1000.0, "method": "counts", "unit": "instructions"},
             "extra": {"counts": {"identity": {"backend": "valgrind"}}}},
        ],
    }


def _write(tmp_path, doc, name="r.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _full(path):
    """The samples as the full path reads them: Results, then readers._from_results."""
    return _from_results(path, results_from_data(json.loads(path.read_text()), str(path)))


def _same_sample(a, b):
    for field in ("name", "implementation", "params", "unit", "source", "estimate",
                  "unit_name", "one_invocation"):
        assert getattr(a, field) == getattr(b, field), field
    np.testing.assert_array_equal(a.values, b.values)
    if a.per_execution is None:
        assert b.per_execution is None
    else:
        np.testing.assert_array_equal(a.per_execution, b.per_execution)


def test_lean_samples_equal_the_full_path_on_every_kind_of_case(tmp_path):
    path = _write(tmp_path, _document())
    lean, full = read_samples(path), _full(path)
    assert lean.results is None and lean.document_text is not None  # read lean
    assert [s.label for s in lean.samples] == [s.label for s in full.samples]
    assert len(lean.samples) == 8
    for a, b in zip(lean.samples, full.samples, strict=True):
        _same_sample(a, b)
    assert lean.skipped == full.skipped and len(lean.skipped) == 2
    assert lean.environment == full.environment
    assert lean.context == full.results.context
    procs = next(s for s in lean.samples if s.name == "procs")
    assert procs.per_execution.tolist() == [0.003, 0.0031]
    runs = next(s for s in lean.samples if s.name == "runs")
    assert runs.values.tolist() == [0.002, 0.0019]  # failed and null runs left out


def test_full_results_are_built_on_demand_and_equal_the_old_ones(tmp_path):
    path = _write(tmp_path, _document())
    lean = read_samples(path)
    built = lean.full_results()
    assert lean.document_text is None and lean.full_results() is built  # built once
    assert built.to_dict() == results_from_data(json.loads(path.read_text())).to_dict()


def test_the_comparison_is_the_same_as_from_the_full_results(tmp_path):
    doc = _document()
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"] != "count"]
    base = _write(tmp_path, doc, "base.json")
    for entry in doc["benchmarks"]:
        if entry.get("runs"):
            metrics = entry["runs"]["metrics"]
            metrics["wall_time"] = [None if v is None else v * 1.3
                                    for v in metrics["wall_time"]]
    new = _write(tmp_path, doc, "new.json")
    lean = compare_sets(read_samples(base), read_samples(new), CompareOptions())
    full = compare_sets(_full(base), _full(new), CompareOptions())
    assert json.dumps(lean.to_dict(), default=str) == json.dumps(full.to_dict(), default=str)
    assert len(lean.to_dict()["benchmarks"]) == 7


def test_compare_cli_with_report_and_counts_reads_the_full_results(tmp_path, capsys):
    doc = _document()
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"] == "count"]
    path = _write(tmp_path, doc)
    assert main(["compare", str(path), str(path), "--json", str(tmp_path / "c.json"),
                 "-q"]) == 0
    counted = json.loads((tmp_path / "c.json").read_text())
    assert counted["kind"] == "counts" and counted["benchmarks"][0]["name"] == "count"
    doc = _document()
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"] in ("hand", "runs")]
    path = _write(tmp_path, doc, "t.json")
    report = tmp_path / "r.html"
    assert main(["compare", str(path), str(path), "--report", str(report), "-q"]) == 0
    assert "runs impl" in report.read_text()


@pytest.mark.parametrize("entry, word", [
    ({"name": "a", "samples": [1.0], "estimate": [1]}, "estimate is list, not an object"),
    ({"name": "a", "runs": {"metrics": {}}}, "KeyError"),
])
def test_a_malformed_entry_is_one_clear_error_on_both_paths(tmp_path, entry, word):
    path = _write(tmp_path, {"schema_version": 1, "benchmarks": [entry]})
    with pytest.raises(ResultsFormatError) as lean:
        read_samples(path)
    with pytest.raises(ResultsFormatError) as full:
        results_from_data(json.loads(path.read_text()), str(path))
    assert str(lean.value) == str(full.value) and word in str(lean.value)
    data = json.loads(path.read_text())
    with pytest.raises(ResultsFormatError) as encoded:
        encode_results(data, str(path))
    assert str(encoded.value) == str(full.value)


def test_import_encoding_is_the_text_and_rows_of_the_full_path(tmp_path):
    doc = _document()  # a NaN among the statistics of "runs": made null
    text = json.dumps(doc)
    assert "NaN" in text
    old = finite_in_place(results_from_data(json.loads(text)).to_dict())
    old["context"] = redact_tree(old["context"])
    encoded = encode_results(json.loads(text), "r.json")
    assert encoded.text == json.dumps(old, allow_nan=False)
    assert encoded.measurements == measurements_of(old)
    assert encoded.created == "2026-01-02T03:04:05+00:00"
    assert "benchmarks" not in encoded.top and encoded.top["suite"] == "kinds"
    assert not math.isnan(sum(m.value for m in encoded.measurements))
    assert "NaN" not in encoded.text and len(encoded.measurements) == 8


def test_history_import_records_what_it_recorded_before(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = _write(tmp_path, _document())
    url = f"sqlite:///{tmp_path}/h.sqlite"
    assert main(["history", "import", str(path), "--history-url", url]) == 0
    from steadybench.history.store import HistoryStore

    store = HistoryStore.open(url)
    try:
        stored = store.resolve("#1").results
    finally:
        store.close()
    old = finite_in_place(results_from_data(json.loads(path.read_text())).to_dict())
    old["context"] = redact_tree(old["context"])
    assert stored == json.loads(json.dumps(old))


def _many(n):
    return {"schema_version": 1, "suite": "large", "benchmarks": [
        {"name": f"bench{i:07d}", "implementation": "x",
         "samples": [0.001 + i * 1e-9, 0.0011, 0.0012]} for i in range(n)]}


def test_thousands_of_benchmarks_are_read_and_encoded_in_bounded_memory(tmp_path):
    """Peak traced memory in multiples of the file's size: the lean paths hold about half what
    the full Results path held (the bounds are between the two, so the old path fails them;
    most of what is left is the parsed JSON itself). 2,500 benchmarks: the multiples are
    those of 10,000 within 1 (measured: lean 11.8 at 10,000 and 12.6 at 2,500, the full path
    19.3 and 19.4; the encoding 14.0 and 14.6, the old import 37.9 and 41.9), at a quarter
    of the processor time (tracemalloc traces every allocation)."""
    n = 2_500
    path = _write(tmp_path, _many(n))
    size = path.stat().st_size  # ~95 bytes per benchmark
    lean = peak_traced(lambda: read_samples(path))
    full = peak_traced(lambda: _full(path))
    assert lean < 15 * size < full, (lean, full, size)  # measured: 12.6 and 19.4 times
    text = path.read_text()
    encoded = peak_traced(lambda: encode_results(json.loads(text), "x"))

    def old_import():
        doc = finite_in_place(results_from_data(json.loads(text)).to_dict())
        return json.dumps(doc), measurements_of(doc)

    before = peak_traced(old_import)
    assert encoded < 27 * size < before, (encoded, before, size)  # measured: 14.6 and 41.9
