"""Thresholds kept in the project's steadybench.toml: parsing, which rule applies, and their use
by ``history regressions``."""

from __future__ import annotations

import json
import math
import random

import pytest

from steadybench.cli import main
from steadybench.errors import ConfigurationError
from steadybench.history.git import GitInfo
from steadybench.history.store import HistoryStore
from steadybench.history.thresholds import (
    COUNTS,
    DEFAULT_THRESHOLD,
    PERCENT,
    Threshold,
    load_thresholds,
    parse_threshold,
)


def test_values_are_percentages_or_counts():
    assert parse_threshold("5%", "x") == Threshold(PERCENT, 0.05, "x")
    assert parse_threshold(" 2.5 % ", "x").value == pytest.approx(0.025)
    assert parse_threshold(1000, "x") == Threshold(COUNTS, 1000.0, "x")
    assert parse_threshold("1000 counts", "x") == Threshold(COUNTS, 1000.0, "x")
    for bad in ("5", "five%", "-1%", True, [1], "inf%"):
        with pytest.raises(ConfigurationError):
            parse_threshold(bad, "x")


def test_a_threshold_passes_changes_at_least_its_size():
    five = Threshold(PERCENT, 0.05)
    assert five.passes(1.0, 1.05) and five.passes(1.0, 0.95)
    assert not five.passes(1.0, 1.049)
    counts = Threshold(COUNTS, 1000)
    assert counts.passes(10_000, 11_000) and not counts.passes(10_000, 10_999)
    assert five.text() == "5%" and counts.text() == "1000 counts"


def test_the_most_specific_rule_wins(tmp_path):
    path = tmp_path / "steadybench.toml"
    path.write_text('[thresholds]\ndefault = "5%"\n"io.py::*" = "10%"\n'
                    '"io.py::read*" = "20%"\n"io.py::read_small" = "1%"\n"insn" = 500\n')
    rules = load_thresholds(path)
    assert rules.for_label("other").value == pytest.approx(0.05)
    assert rules.for_label("io.py::write").value == pytest.approx(0.10)
    assert rules.for_label("io.py::read_big").value == pytest.approx(0.20)
    assert rules.for_label("io.py::read_small").value == pytest.approx(0.01)
    assert rules.for_label("insn") == Threshold(COUNTS, 500.0, "insn")


def test_without_a_file_the_default_is_two_percent(tmp_path):
    # the stated default: about half the band between runs of identical code (docs/comparison.md)
    assert load_thresholds(cwd=tmp_path).for_label("anything") == DEFAULT_THRESHOLD
    assert Threshold(PERCENT, 0.02, "default") == DEFAULT_THRESHOLD
    bad = tmp_path / "steadybench.toml"
    bad.write_text("[thresholds\n")
    with pytest.raises(ConfigurationError, match="TOML"):
        load_thresholds(cwd=tmp_path)


def _store_with_step(path, step: float) -> None:
    """Two benchmarks of 20 records, both slower by ``step`` from the 11th record."""
    rng = random.Random(3)
    with HistoryStore.open(str(path)) as store:
        for i in range(20):
            benches = []
            for name in ("fast_one", "io.py::read"):
                base = 1e-3 * (1 + step if i >= 10 else 1.0)
                ex = [base * math.exp(rng.gauss(0, 0.002)) for _ in range(5)]
                benches.append({"name": name, "unit": "s",
                                "estimate": {"value": sorted(ex)[2]},
                                "processes": [{"value": v} for v in ex]})
            store.add({"benchmarks": benches, "environment": {}},
                      git=GitInfo(commit=f"{i + 1:040x}", dirty=False))


def test_history_regressions_uses_the_project_thresholds(tmp_path, monkeypatch, capsys):
    _store_with_step(tmp_path / "h.sqlite", 0.06)
    monkeypatch.chdir(tmp_path)
    url = str(tmp_path / "h.sqlite")
    assert main(["history", "regressions", "--history-url", url]) == 1
    assert capsys.readouterr().out.count("SLOWER") == 2
    (tmp_path / "steadybench.toml").write_text('[thresholds]\n"io.py::*" = "10%"\n')
    out = tmp_path / "r.json"
    assert main(["history", "regressions", "--history-url", url, "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "SLOWER: fast_one" in text and "io.py::read" not in text
    doc = json.loads(out.read_text())
    assert doc["thresholds"]["rules"] == {"io.py::*": "10%"}
    # --min-change given on the command line replaces the file
    assert main(["history", "regressions", "--history-url", url, "--min-change", "7%"]) == 0
    (tmp_path / "steadybench.toml").write_text('[thresholds]\ndefault = "five"\n')
    assert main(["history", "regressions", "--history-url", url]) == 2
    assert "expected a percentage" in capsys.readouterr().err


def test_bisect_takes_the_newest_slowdown_from_the_history(tmp_path):
    from steadybench.ab.bisect_run import range_from_history

    _store_with_step(tmp_path / "h.sqlite", 0.06)
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        before, after, change = range_from_history(store, "io.py::read")
        # the change is between records 10 and 11; the search covers the records it was
        # tested on, 10 before and 10 after (its place moves by a record or two with noise)
        assert change.commit_range == f"{10:040x}"[:10] + ".." + f"{11:040x}"[:10]
        assert (change.n_before, change.n_after) == (10, 10)
        assert (before, after) == (f"{1:040x}", f"{20:040x}")
        assert change.magnitude == pytest.approx(0.06, abs=0.01)
        with pytest.raises(ConfigurationError, match="no slowdown of 'nothing'"):
            range_from_history(store, "nothing")
