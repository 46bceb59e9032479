"""Issue 27 item 13, second round: what reading and recording a file of very many benchmarks
does per benchmark.

``history import`` of 10^6 benchmarks ran one INSERT statement per benchmark and read the
measurement rows of the document twice; every ``Estimate`` read looked up its dataclass fields
again. These tests pin that the work per benchmark is gone: the measurement rows go in by one
``executemany``, the rows are read once, and the field names are looked up once per class.
The times and peaks are printed by ``benchmarks/memory_large_inputs.py``.
"""

from __future__ import annotations

from pathlib import Path

from steadybench.history import record as record_module
from steadybench.history.backends import SQLiteBackend
from steadybench.history.git import GitInfo
from steadybench.history.record import measurements_of
from steadybench.history.store import HistoryStore

CASES = 300


def document(cases: int) -> dict:
    """A results document of ``cases`` benchmarks with samples and no estimate."""
    return {"schema_version": 1, "suite": "large",
            "benchmarks": [{"name": f"bench{i:04d}", "implementation": "x",
                            "samples": [1e-3 + 1e-6 * (i % 5), 1.1e-3, 0.9e-3]}
                           for i in range(cases)]}


def test_history_add_inserts_the_measurements_in_one_statement_not_one_per_benchmark(
        tmp_path: Path, monkeypatch):
    statements: list[str] = []
    batches: list[int] = []
    execute, executemany = SQLiteBackend.execute, SQLiteBackend.executemany

    def counted(self, sql, params=()):
        statements.append(sql)
        return execute(self, sql, params)

    def counted_many(self, sql, rows):
        rows = list(rows)
        batches.append(len(rows))
        return executemany(self, sql, rows)

    reads = []
    real_measurements_of = record_module.measurements_of

    def counted_reads(data):
        reads.append(1)
        return real_measurements_of(data)

    url = f"sqlite:///{tmp_path}/h.sqlite"
    with HistoryStore.open(url, create=True) as store:
        monkeypatch.setattr(SQLiteBackend, "execute", counted)
        monkeypatch.setattr(SQLiteBackend, "executemany", counted_many)
        monkeypatch.setattr("steadybench.history.store.measurements_of", counted_reads)
        rec = store.add(document(CASES), git=GitInfo(commit="abc", branch="main"))
        monkeypatch.undo()
        assert rec.id is not None
        stored = {r.label: r for r in measurements_of(store.get(rec.id).results)}
        assert store.records()[0].count == CASES
    inserts = [s for s in statements if "INTO measurements" in s]
    assert inserts == [], "one INSERT per benchmark"
    assert batches == [CASES]
    assert len(statements) < 10, statements  # the record's own statements, not per benchmark
    assert len(reads) == 1, "the measurement rows were read more than once"
    assert abs(stored["bench0003 x"].value - (1.003e-3 + 1.1e-3 + 0.9e-3) / 3) < 1e-15


def test_history_add_with_nothing_to_record_writes_nothing(tmp_path: Path):
    import pytest

    from steadybench.history.backends import HistoryError

    url = f"sqlite:///{tmp_path}/h.sqlite"
    with HistoryStore.open(url, create=True) as store:
        with pytest.raises(HistoryError, match="nothing to record"):
            store.add({"schema_version": 1, "benchmarks": [{"name": "a"}]},
                      git=GitInfo(commit="abc"))
        assert store.records() == []


def test_estimates_look_up_their_fields_once_not_per_benchmark(monkeypatch):
    from steadybench.model import estimate

    monkeypatch.setattr(estimate, "_FIELD_NAMES", {})
    calls = []
    real = estimate.fields

    def counted(cls):
        calls.append(cls)
        return real(cls)

    monkeypatch.setattr(estimate, "fields", counted)
    read = [estimate.Estimate.from_dict({"value": 1.0 + i, "method": "median", "unit": "s",
                                         "p": 0.5}) for i in range(CASES)]
    assert [e.to_dict()["value"] for e in read[:2]] == [1.0, 2.0]
    assert read[0].figure("p") == 0.5
    assert len(calls) == 1, len(calls)


def test_the_small_median_is_numpys_median_exactly():
    import math

    import numpy as np

    from steadybench.compare.median import SMALL, median

    rng = np.random.default_rng(7)
    for n in range(1, SMALL + 4):
        for _ in range(200):
            x = rng.random(n) * 10.0 ** rng.integers(-9, 3)
            if rng.random() < 0.3:
                x = np.round(x, 4)  # ties
            assert median(x) == float(np.median(x))
            assert median(list(x)) == float(np.median(x))
    assert math.isnan(median(np.array([1.0, math.nan, 2.0])))
    assert median(np.array([1, 2])) == 1.5


def test_comparing_many_small_benchmarks_does_not_call_numpy_median_per_benchmark(
        tmp_path: Path, monkeypatch):
    import json

    import numpy as np

    from steadybench.compare.core import compare_files
    from steadybench.compare.protocol import CompareOptions

    path = tmp_path / "r.json"
    path.write_text(json.dumps(document(CASES)))
    calls = []
    real = np.median

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(np, "median", counted)
    comparison, _, _ = compare_files(str(path), str(path), CompareOptions())
    doc = comparison.to_dict()
    assert len(doc["benchmarks"]) == CASES
    first = doc["benchmarks"][0]
    assert first["base"]["median"] == 1.0e-3
    assert first["speedup"] == 1.0
    assert len(calls) < CASES, len(calls)


def test_finite_in_place_gives_what_finite_gives_without_a_second_copy():
    import math

    import numpy as np

    from steadybench.output.results_io import _finite, finite_in_place

    def make():
        return {"a": [1.0, math.nan, {"b": math.inf, 3: (1.5, -math.inf)}], "c": "x",
                "d": None, "e": True, "f": np.float64(2.5), "g": [np.int64(4), [math.nan]],
                "h": {"i": -0.0, "j": [[], {}]},
                # keys of other kinds, floats at the limits, a float subclass
                "k": {True: 1.0, None: math.inf, 2.5: [1e308, -1e308, 5e-324, np.float64("nan")]},
                "m": [math.inf, np.float32(1.5), type("F", (float,), {})(math.nan)]}

    doc = make()
    inner = doc["a"]
    out = finite_in_place(doc)
    assert out == _finite(make())
    assert json_text(out) == json_text(_finite(make()))
    assert out is doc and out["a"] is inner  # changed where it is, not copied


def json_text(doc) -> str:
    import json

    return json.dumps(doc, allow_nan=False, sort_keys=True)


def test_history_import_stores_the_same_document_as_before(tmp_path: Path):
    import json

    from click.testing import CliRunner

    from steadybench.cli import cli
    from steadybench.model.results import Results
    from steadybench.output.results_io import _finite, results_from_data

    data = document(50)
    data["benchmarks"][3]["samples"] = [1e-3, 2e-3]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    url = f"sqlite:///{tmp_path}/h.sqlite"
    done = CliRunner().invoke(cli, ["history", "import", str(path), "--history-url", url])
    assert done.exit_code == 0, done.output
    with HistoryStore.open(url) as store:
        stored = store.get(store.records()[0].id).results
    expected: Results = results_from_data(json.loads(path.read_text()), str(path))
    assert stored == json.loads(json.dumps(_finite(expected.to_dict())))


def test_a_comparison_does_not_keep_its_documents_rows_beside_its_own(tmp_path: Path):
    import gc
    import json

    from steadybench.compare.core import compare_files
    from steadybench.compare.protocol import CompareOptions
    from steadybench.compare.result import Comparison

    path = tmp_path / "r.json"
    path.write_text(json.dumps(document(20)))
    comparison, _, _ = compare_files(str(path), str(path), CompareOptions())
    doc = comparison.to_dict()
    rows = doc["benchmarks"]
    again = Comparison.from_dict(doc)
    del doc
    gc.collect()
    holders = [r for r in gc.get_referrers(rows) if isinstance(r, dict)]
    assert holders == [], "the comparison keeps the document's rows"
    assert again.to_dict() == comparison.to_dict()
    assert list(again.to_dict()) == list(comparison.to_dict())  # keys in their order
    assert len(again.benchmarks) == 20
