"""A history of counts knows what produced each count (issue 26, item 3): the identity is
stored with each measurement (schema 3, migrated from older stores), carried in each Point, and
``history regressions`` never reports a change across a change of valgrind, interpreter or
method: it splits the series there and says so in one line."""

from __future__ import annotations

import json
import sqlite3

import pytest

from steadybench.cli import main
from steadybench.history.finders import analyse_series, finder_for, stretches
from steadybench.history.git import GitInfo
from steadybench.history.schema import MIGRATIONS, SCHEMA_VERSION, current_version
from steadybench.history.store import HistoryStore, Point

IDENTITY = {"measure": "instructions", "valgrind": "valgrind-3.19.0",
            "program": "/usr/bin/python3 (Python 3.11.2)", "cache_sim": False,
            "cache_geometry": None, "layout": "design seeds; callgrind segments"}


def _doc(value: float, **identity: object) -> dict[str, object]:
    """A results document of one counted case, ``identity`` overriding fields of IDENTITY."""
    return {"suite": "s", "benchmarks": [{
        "name": "work", "implementation": "work", "params": {}, "unit": "instructions",
        "estimate": {"value": value, "ci_low": value, "ci_high": value,
                     "unit": "instructions"},
        "extra": {"counts": {"identity": {**IDENTITY, **identity}}}}]}


def _record(store: HistoryStore, values: list[float], **identity: object) -> None:
    for value in values:
        store.add(_doc(value, **identity), git=GitInfo())  # records named #ID


@pytest.mark.parametrize("field,new", [("valgrind", "valgrind-3.22.0"),
                                       ("program", "/usr/bin/python3 (Python 3.12.1)"),
                                       ("layout", "design seeds; one process per call count")])
def test_no_change_is_reported_across_an_identity_change(tmp_path, capsys, field, new):
    db = str(tmp_path / "h.sqlite")
    with HistoryStore.open(db) as store:
        _record(store, [16_500.0] * 4)
        _record(store, [17_012.0] * 4, **{field: new})  # +3.1 %: the tool's, not the code's
        points = store.series("work")
        assert json.loads(points[0].identity)[field] == IDENTITY[field]
        assert json.loads(points[-1].identity)[field] == new
    capsys.readouterr()
    code = main(["history", "regressions", "--history-url", db, "--fail-on", "slower"])
    out = capsys.readouterr().out
    assert code == 0 and "MORE INSTRUCTIONS" not in out
    (line,) = [x for x in out.splitlines() if "different conditions" in x]
    assert "from record #5 on (after #4:" in line and f"{field} " in line and new in line
    assert "no change is reported across it" in line


def test_an_unchanged_identity_behaves_as_before(tmp_path, capsys):
    db = str(tmp_path / "h.sqlite")
    with HistoryStore.open(db) as store:
        _record(store, [16_500.0] * 4 + [17_012.0] * 4)
    capsys.readouterr()
    code = main(["history", "regressions", "--history-url", db, "--fail-on", "slower"])
    out = capsys.readouterr().out
    assert code == 1 and "different conditions" not in out
    assert out.count("MORE INSTRUCTIONS: work") == 1 and "#4..#5" in out


def test_changes_inside_each_stretch_are_still_found_at_their_place(tmp_path):
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        _record(store, [100.0, 100.0, 103.0])  # a change inside the first stretch
        _record(store, [110.0, 110.0, 99.0], valgrind="valgrind-3.22.0")  # and in the second
        points = store.series("work")
    whole = analyse_series(points, "work", "m")
    assert [(c.index, c.before_record, c.after_record) for c in whole.changes] == \
        [(2, 2, 3), (5, 5, 6)]
    assert whole.points == 6 and "valgrind 'valgrind-3.19.0' vs 'valgrind-3.22.0'" in whole.note
    parts, cuts = stretches(points)
    assert [start for start, _ in parts] == [0, 3] and [c.index for c in cuts] == [3]


def test_time_series_have_no_identity_and_are_read_whole():
    points = [Point(i, "", None, None, None, None, "m", "b", "s", 1.0, None, None, None,
                    (1.0, 1.01, 0.99)) for i in range(1, 6)]
    parts, cuts = stretches(points)
    assert cuts == [] and len(parts) == 1 and points[0].identity is None
    assert finder_for("s").__name__ == "find_time_changes"
    assert finder_for("instructions").__name__ == "find_exact_changes"
    assert finder_for("cycles").__name__ == "find_exact_changes"


def test_a_version_2_store_is_migrated_and_its_counts_get_their_identity(tmp_path):
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db)
    words = {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL", "json": "TEXT"}
    for version in (1, 2):
        for step in MIGRATIONS[version]:
            if isinstance(step, str):
                conn.execute(step.format(**words))
    conn.execute("INSERT INTO steadybench_meta VALUES ('schema_version', '2')")
    for i, value in enumerate([100.0, 104.0]):
        conn.execute("INSERT INTO records (created, machine, source, results) VALUES "
                     "(?, 'm', 'steadybench', ?)", (f"2024-01-0{i + 1}", json.dumps(
                         _doc(value, valgrind=f"valgrind-3.{19 + i}.0"))))
        conn.execute("INSERT INTO measurements (record_id, label, benchmark, implementation, "
                     "params, unit, value, n_executions, executions) VALUES "
                     "(?, 'work', 'work', 'work', '', 'instructions', ?, 1, ?)",
                     (i + 1, value, json.dumps([value])))
    conn.commit()
    conn.close()
    with HistoryStore.open(str(db)) as store:
        assert current_version(store.db) == SCHEMA_VERSION == 4
        points = store.series("work")
        assert [json.loads(p.identity)["valgrind"] for p in points] == \
            ["valgrind-3.19.0", "valgrind-3.20.0"]
        assert points == store.every_series()[("work", "m")]
        # the two records' counts differ by 4 %, under two valgrinds: no change between them
        assert analyse_series(points, "work", "m").changes == []
