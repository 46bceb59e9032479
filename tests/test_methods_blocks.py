"""Block-time solver (Moreno & Fischmeister §5.1)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from steadybench.errors import ConfigurationError, MeasurementError
from steadybench.methods import solve_blocks


def _rounds(seed=0, rounds=40):
    rng = np.random.default_rng(seed)
    loop = rng.integers(0, 50, rounds)
    then = rng.integers(0, 10, rounds)
    other = rng.integers(0, 10, rounds)
    entry = np.ones(rounds, dtype=int)
    exit_ = np.ones(rounds, dtype=int)
    counts = np.column_stack([entry, loop, then, other, exit_])
    times = np.array([120.0, 35.0, 210.0, 80.0, 40.0])
    totals = counts @ times + rng.normal(0, 2.0, rounds)
    return counts, totals, times


def test_recovers_known_block_times_and_merges_entry_exit():
    counts, totals, times = _rounds()
    sol = solve_blocks(counts, totals, names=["entry", "loop", "then", "else", "exit"])
    assert [g.blocks for g in sol.groups] == [("entry", "exit"), ("loop",), ("then",), ("else",)]
    assert sol["entry"].value == pytest.approx(160.0, abs=5)
    assert sol["entry+exit"] is sol["exit"]
    for name, truth in (("loop", 35.0), ("then", 210.0), ("else", 80.0)):
        g = sol[name]
        assert g.ci_low <= truth <= g.ci_high
        assert g.value == pytest.approx(truth, rel=0.02)
    assert sol.dof == 40 - 4 and sol.confidence == 0.95
    d = sol.to_dict()
    assert json.loads(json.dumps(d)) == d


def test_ci_matches_explicit_formula():
    counts, totals, _ = _rounds(seed=3)
    a = counts[:, :4].astype(float)  # entry/exit merged: keep one of them
    sol = solve_blocks(counts, totals)
    coef, *_ = np.linalg.lstsq(a, totals, rcond=None)
    resid = totals - a @ coef
    cov = resid @ resid / (len(totals) - 4) * np.linalg.inv(a.T @ a)
    assert np.allclose([g.value for g in sol.groups], coef)
    assert np.allclose([g.se for g in sol.groups], np.sqrt(np.diag(cov)))


def test_never_executed_block_reported():
    counts, totals, _ = _rounds()
    counts = np.column_stack([counts, np.zeros(len(totals), dtype=int)])
    sol = solve_blocks(counts, totals, names=["a", "b", "c", "d", "e", "dead"])
    assert sol.never_ran == ("dead",)


def test_singular_system_names_blocks():
    rng = np.random.default_rng(1)
    x = rng.integers(1, 9, 30)
    y = rng.integers(1, 9, 30)
    counts = np.column_stack([x, y, x + y, np.ones(30)])  # c = a + b: never separable
    with pytest.raises(MeasurementError, match=r"cannot be separated.*\{a, b, c\}"):
        solve_blocks(counts, counts @ [1, 2, 3, 4], names=["a", "b", "c", "d"])


def test_bad_input():
    with pytest.raises(ConfigurationError, match="negative"):
        solve_blocks([[1, -1], [2, 1], [1, 1]], [1, 2, 3], names=["p", "q"])
    with pytest.raises(ConfigurationError, match="totals"):
        solve_blocks([[1, 2], [2, 1], [1, 1]], [1, 2])
    with pytest.raises(MeasurementError, match="more rounds"):
        solve_blocks([[1, 2], [2, 1]], [1, 2])
