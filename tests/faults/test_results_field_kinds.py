"""A results file with one field of the wrong kind (an object where text is read, a list where a
number is): one clear line naming the field and exit 2, never an internal error (the full
fault matrix's mutated results found `report` ending in ``TypeError: unhashable type: 'dict'``;
trying every field, 11 combinations did, on 46e1861 and on f5c56e8 alike)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from steadybench.cli import main

CASES = [
    ("top", "suite", {"a": "b"}),
    ("benchmark", "method", ["x"]),
    ("benchmark", "analyses", ["x"]),
    ("estimate", "confidence", {"a": "b"}),
    ("estimate", "n_executions", ["x"]),
    ("estimate", "unit", {"a": "b"}),
    ("runs", "status", {"a": "b"}),
    ("top", "suite", None),
    ("benchmark", "method", None),
    ("estimate", "n_executions", None),
    ("runs", "metrics", ["x"]),
    ("benchmark", "extra", ["x"]),
    ("benchmark", "ci", "x"),
    ("ci", "low", {"a": "b"}),
    ("ci", "high", "zz"),
    ("stats", "mean", ["x"]),
]


def results_doc() -> dict:
    """A results document as steadybench writes it: one case of six runs and its estimate."""
    from steadybench.methods.base import build_estimate  # noqa: F401 - the estimate's maker
    from steadybench.model.results import CaseResult, Results

    case = CaseResult("b", "b")
    for i in range(6):
        case.add_run("ok", {"wall_time": 0.001 + i * 1e-6})
    doc = Results(suite="s", cases=[case]).to_dict()
    entry = doc["benchmarks"][0]
    entry.setdefault("method", "direct")
    entry.setdefault("analyses", {})
    entry["ci"] = {"low": 0.00099, "high": 0.00101, "confidence": 0.95, "method": "t"}
    entry["stats"] = {"mean": 0.001, "median": 0.001}
    entry["estimate"] = {"value": 0.001, "ci_low": 0.00099, "ci_high": 0.00101, "unit": "s",
                         "confidence": 0.95, "n_executions": 1, "method": "direct"}
    return doc


@pytest.mark.parametrize(("where", "key", "value"), CASES)
def test_a_field_of_the_wrong_kind_is_one_clear_line(tmp_path: Path, capsys, where, key, value):
    doc = results_doc()
    entry = doc["benchmarks"][0]
    holder = {"top": doc, "benchmark": entry, "estimate": entry["estimate"],
              "runs": entry["runs"], "ci": entry["ci"], "stats": entry["stats"]}[where]
    assert isinstance(holder, dict)
    holder[key] = value
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code = main(["report", str(path), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert f"{key} is {'null' if value is None else type(value).__name__}" in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_run_status_that_is_not_text_is_one_clear_line(tmp_path: Path, capsys):
    doc = results_doc()
    doc["benchmarks"][0]["runs"]["status"][0] = [[[[[]]]]]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "runs.status holds something other than text" in err and "internal" not in err


def test_the_well_formed_file_still_makes_a_report(tmp_path: Path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results_doc()))
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert (tmp_path / "r.html").exists()


@pytest.mark.parametrize("estimate", [{"a": {"b": 1}}, {"value": 0.001, "confidence": None}])
def test_show_of_an_estimate_without_a_confidence_is_no_internal_error(tmp_path: Path, capsys,
                                                                        estimate):
    doc = results_doc()
    doc["benchmarks"][0]["estimate"] = estimate
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    code = main(["show", str(path), "--all"])
    out, err = capsys.readouterr()
    assert code in (0, 2) and "internal error" not in err and "Traceback" not in err + out
