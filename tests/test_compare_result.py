"""The typed comparison (steadybench.compare.result): what compare, history compare and the
pytest plugin read, and its round trip to the unchanged ``compare --json`` document."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.compare import CompareOptions, compare_files
from steadybench.compare.output import speedup_text, to_csv, to_json, to_markdown
from steadybench.compare.result import BenchmarkComparison, Comparison, RatioInterval
from steadybench.output.results_io import _finite


def _files(tmp_path, shift=1.3, n=30, seed=4):
    rng = np.random.default_rng(seed)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(f"{v:.6f}" for v in 1.0 + rng.exponential(0.01, n)) + "\n")
    b.write_text("\n".join(f"{v:.6f}" for v in shift + rng.exponential(0.01, n)) + "\n")
    return str(a), str(b)


@pytest.mark.parametrize("opts", [CompareOptions(), CompareOptions(confidence=None),
                                  CompareOptions(threshold=0.5, equivalence=True,
                                                 show_min=True)])
def test_round_trip_keeps_the_document_key_for_key(tmp_path, opts):
    made, _, _ = compare_files(*_files(tmp_path), opts)
    assert isinstance(made, Comparison)  # compare returns the typed result
    doc = made.to_dict()
    comparison = Comparison.from_dict(doc)
    assert comparison.to_dict() == doc
    assert list(comparison.to_dict()) == list(doc)  # the same order too
    assert [list(b.to_dict()) for b in comparison.benchmarks] == [list(r) for r in
                                                                  doc["benchmarks"]]
    # byte for byte what compare --json wrote from the document before the typed result
    assert to_json(comparison) == json.dumps(_finite(doc), indent=1, allow_nan=False,
                                             ensure_ascii=False) + "\n"


def test_attributes_are_the_documents_values(tmp_path):
    doc = compare_files(*_files(tmp_path, shift=1.3), CompareOptions())[0].to_dict()
    row = Comparison.from_dict(doc).benchmarks[0]
    raw = doc["benchmarks"][0]
    assert isinstance(row, BenchmarkComparison)
    assert row.verdict == raw["verdict"] == "slower"
    assert row.ratio == raw["speedup"] and row.ratio < 1  # BASE/NEW: NEW is slower
    assert row.confidence == 0.95 and row.confidence_mode == "fixed"
    assert isinstance(row.interval, RatioInterval)
    assert (row.interval.low, row.interval.high) == (raw["speedup_ci"]["low"],
                                                     raw["speedup_ci"]["high"])
    assert row.interval.high < 1 and not row.interval.holds_one()
    assert row.estimate == raw["speedup_ci"]["estimate"]  # the interval's own ratio
    assert (row.base.n, row.new.n) == (30, 30)
    assert row.base.median == raw["base"]["median"]
    assert row.moved and row.test == raw["test"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.verdict = "faster"  # type: ignore[misc]
    assert speedup_text(row).endswith("slower" + speedup_text(row).split("slower", 1)[1])


def test_auto_confidence_and_older_documents_read():
    # a document with only the keys older versions wrote: nothing is invented on the way out
    old = {"kind": "steadybench-comparison", "options": {"confidence": "auto",
                                                         "correction": "none"},
           "benchmarks": [{"name": "f", "speedup": 1.2, "verdict": "faster",
                           "speedup_ci": {"low": 1.1, "high": 1.3, "confidence": 0.9,
                                          "method": "x"}}],
           "warnings": []}
    comparison = Comparison.from_dict(old)
    assert comparison.settings.confidence is None
    assert comparison.benchmarks[0].interval.estimate is None
    assert comparison.benchmarks[0].estimate == 1.2  # no estimate of its own: the ratio
    back = comparison.to_dict()
    assert back["options"] == old["options"]
    assert back["benchmarks"][0]["speedup_ci"] == old["benchmarks"][0]["speedup_ci"]
    assert comparison.verdicts == ["faster"]


def test_writers_read_the_typed_result(tmp_path):
    comparison, _, _ = compare_files(*_files(tmp_path, shift=1.3), CompareOptions())
    doc = comparison.to_dict()
    md = to_markdown(comparison)
    assert md.startswith("| Benchmark | NEW vs BASE [CI] | Verdict | Test | p (holm) | "
                         "Confidence | Notes |\n|---|---|---|---|---|---|---|\n")
    assert "**slower**" in md
    rows = to_csv(comparison).splitlines()
    assert rows[0].startswith("Name,SpeedupMin,SpeedupMean")
    cells = rows[1].split(",")
    assert cells[8] == "slower" and float(cells[5]) == pytest.approx(doc["benchmarks"][0]
                                                                     ["speedup"])


def test_compare_json_is_the_document(tmp_path, capsys):
    a, b = _files(tmp_path, shift=1.3)
    out = tmp_path / "c.json"
    assert main(["compare", a, b, "--json", str(out), "-q", "--fail-on", "slower"]) == 1
    written = json.loads(out.read_text())
    doc = compare_files(a, b, CompareOptions())[0].to_dict()
    assert written["benchmarks"][0]["speedup_ci"] == json.loads(json.dumps(
        doc["benchmarks"][0]["speedup_ci"]))
    assert list(written) == list(doc)


def test_notes_and_profiles_are_added_to_the_typed_result(tmp_path):
    """cli compare adds the history's note and the profiles' differences to the Comparison
    itself (no edits of a dict): they are written last, as the document had them."""
    comparison, _, _ = compare_files(*_files(tmp_path), CompareOptions())
    assert comparison.profiles is None and "profiles" not in comparison.to_dict()
    moved = {"f": {"moved": [{"frame": "g", "share": 0.5}]}}
    more = comparison.with_warning("a note").with_profiles(moved)
    assert "a note" not in comparison.warnings  # frozen: the original is unchanged
    assert more.warnings[-1] == "a note" and dict(more.profiles) == moved
    doc = more.to_dict()
    assert list(doc)[-1] == "profiles" and doc["profiles"] == moved
    assert doc["warnings"][-1] == "a note"
    again = Comparison.from_dict(json.loads(to_json(more)))  # read back: the same file
    assert dict(again.profiles) == moved and to_json(again) == to_json(more)
    with pytest.raises(dataclasses.FrozenInstanceError):
        more.profiles = None  # type: ignore[misc]
