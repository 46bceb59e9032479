"""Records measured on a busy machine (steadybench.cpu_pressure) in the history: stored with
their pressure (schema 4), left out of the noise between records and of the change finder."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from steadybench import cpu_pressure
from steadybench.history.finders import regressions
from steadybench.history.noise import noise_from_points
from steadybench.history.schema import MIGRATIONS, SCHEMA_VERSION, current_version
from steadybench.history.store import HistoryStore


@pytest.fixture(autouse=True)
def _busy_from_the_default_share(monkeypatch):
    """The suite turns the busy rule off (tests/conftest.py); these tests need its default."""
    monkeypatch.delenv(cpu_pressure.BUSY_VARIABLE, raising=False)


def doc(level: float, pressure: float | None, seed: int) -> dict:
    execs = np.exp(np.random.default_rng(seed).normal(math.log(level), 0.004, 5)).tolist()
    entry = {"name": "loop", "implementation": "loop", "params": {}, "unit": "s",
             "estimate": {"value": float(np.median(execs)), "ci_low": min(execs),
                          "ci_high": max(execs), "level": "executions", "n_executions": 5},
             "processes": [{"value": v} for v in execs]}
    if pressure is not None:
        entry["cpu_pressure"] = pressure
    return {"schema_version": 1, "benchmarks": [entry],
            "environment": {"hostname": "box", "cpu_model": "cpu", "cpu_count": 2}}


def test_busy_records_are_left_out_of_the_change_finder(tmp_path: Path) -> None:
    # 30 steady records; the last 6 were taken on a busy machine and ran 25 % slower
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        for i in range(30):
            busy = i >= 24
            store.add(doc(1.25e-3 if busy else 1e-3, 0.6 if busy else 0.02, i))
        points = store.series("loop")
        assert [p.busy for p in points] == [False] * 24 + [True] * 6
        assert points[-1].cpu_pressure == 0.6
        (analysis,) = regressions(store)
    assert analysis.changes == []
    assert "6 of 30 records left out: measured on a busy machine" in (analysis.note or "")


def test_the_same_slowdown_measured_quietly_is_a_change(tmp_path: Path) -> None:
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        for i in range(30):
            store.add(doc(1.25e-3 if i >= 24 else 1e-3, 0.02, i))
        (analysis,) = regressions(store)
    assert [c.index for c in analysis.changes] == [24]


def test_a_busy_record_teaches_no_noise(tmp_path: Path) -> None:
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        store.add(doc(1e-3, None, 1))
        store.add(doc(1e-3, 0.9, 2))
        points = store.series("loop")
    quiet, both = noise_from_points(points[:1]), noise_from_points(points)
    assert quiet is not None and both is not None
    assert (both.records, both.df, both.sigma) == (quiet.records, quiet.df, quiet.sigma)
    assert noise_from_points(points[1:]) is None  # the busy record's executions are not pooled


def test_a_version_3_store_gets_the_pressure_of_its_records(tmp_path: Path) -> None:
    db = tmp_path / "v3.sqlite"
    conn = sqlite3.connect(db)
    for version in (1, 2, 3):
        for step in MIGRATIONS[version]:
            if isinstance(step, str):
                conn.execute(step.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL",
                                         json="TEXT"))
    conn.execute("INSERT INTO steadybench_meta VALUES ('schema_version', '3')")
    cur = conn.execute("INSERT INTO records (created, machine, source, results) VALUES "
                       "(?, ?, ?, ?)", ("2026-01-01T00:00:00+00:00", "box", "steadybench",
                                        json.dumps(doc(1e-3, 0.45, 3))))
    conn.execute("INSERT INTO measurements (record_id, label, benchmark, implementation, "
                 "params, unit, value, n_executions, executions) VALUES "
                 "(?, 'loop', 'loop', 'loop', '', 's', 0.001, 1, '[0.001]')", (cur.lastrowid,))
    conn.commit()
    conn.close()
    with HistoryStore.open(str(db)) as store:
        assert current_version(store.db) == SCHEMA_VERSION == 4
        (point,) = store.series("loop")
    assert point.cpu_pressure == 0.45 and point.busy
