"""How ``history publish`` reads a large store and spreads its work: ``every_series`` (read in
slices of records, executions parsed in one document) gives the same points as reading each
series on its own; a damaged executions text is read as none, as before; ``fork_map`` returns
every result in order."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from steadybench.history import store as store_module
from steadybench.history.publish.pool import fork_map
from steadybench.history.store import HistoryStore, _executions


def _store(path: Path, records: int, labels: int) -> None:
    HistoryStore.open(str(path)).close()
    db = sqlite3.connect(path)
    with db:
        for r in range(1, records + 1):
            db.execute("INSERT INTO records (id, created, name, command, git_commit, git_branch, "
                       "git_dirty, git_note, machine, fingerprint, preset, source, results) "
                       "VALUES (?, ?, NULL, 'b', ?, 'main', 0, NULL, ?, 'null', NULL, "
                       "'steadybench', '{}')",
                       (r, f"2026-01-01T00:00:{r:02d}", f"{r:040x}", f"m{r % 2}"))
            for b in range(labels):
                ex = [1e-3 * (b + 1) * (1 + 0.01 * ((r * 7 + i) % 5)) for i in range(3)]
                text = json.dumps(ex)
                if (r, b) == (5, 1):
                    text = '[1.0, "x"'  # damaged: read as no executions
                if (r, b) == (6, 2):
                    text = None
                value = None if (r, b) == (7, 0) else ex[1]
                db.execute("INSERT INTO measurements (record_id, label, benchmark, "
                           "implementation, params, unit, value, ci_low, ci_high, level, "
                           "n_executions, executions) VALUES (?, ?, ?, ?, '', 's', ?, ?, ?, "
                           "'executions', 3, ?)",
                           (r, f"f.py::b{b}", f"f.py::b{b}", f"f.py::b{b}", value, min(ex),
                            max(ex), text))
    db.close()


def test_every_series_equals_each_series_read_alone(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.sqlite"
    _store(path, records=23, labels=4)
    monkeypatch.setattr(store_module, "EVERY_SERIES_RECORDS", 5)  # several slices
    with HistoryStore.open(str(path)) as st:
        every = st.every_series()
        assert sorted(every) == sorted((f"f.py::b{b}", f"m{m}") for b in range(4)
                                       for m in range(2))
        for (label, machine), points in every.items():
            assert points == st.series(label, machine=machine)
        assert st.catalogue() == {f"f.py::b{b}": (f"f.py::b{b}", f"f.py::b{b}", "")
                                  for b in range(4)}
    damaged = next(p for p in every[("f.py::b1", "m1")] if p.record_id == 5)
    assert damaged.executions == (damaged.value,)
    assert all(p.record_id != 7 for p in every[("f.py::b0", "m1")])  # no value: not a point


def test_executions_in_one_document_or_one_by_one() -> None:
    assert _executions(["[1, 2]", None, " [3.5] "]) == [(1.0, 2.0), (), (3.5,)]
    assert _executions(["[1, 2]", "[1", "2]"]) == [(1.0, 2.0), (), ()]
    assert _executions(["[[1]", "[2]]", "[3]"]) == [(), (), (3.0,)]
    assert _executions(["[1]", '["x"]', "{}"]) == [(1.0,), (), ()]


def test_fork_map_returns_every_result_in_order() -> None:
    base = [os.getpid()]  # inherited by the workers, never sent to them
    got = fork_map(lambda i: (i * i, base[0], os.getpid()), 100, 2)
    assert [g[0] for g in got] == [i * i for i in range(100)]
    assert {g[1] for g in got} == {os.getpid()}
    if "fork" in __import__("multiprocessing").get_all_start_methods():
        assert os.getpid() not in {g[2] for g in got}
    assert fork_map(lambda i: i, 3, 2) == [0, 1, 2]  # few: in this process
