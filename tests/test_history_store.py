"""The history store: records, references, schema versions and migrations, and its faults
(locked, corrupt, newer, concurrent writers, outside git)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from steadybench.history.backends import HistoryError, open_backend
from steadybench.history.git import GitInfo, git_info
from steadybench.history.record import machine_id, measurements_of
from steadybench.history.schema import MIGRATIONS, SCHEMA_VERSION, current_version
from steadybench.history.store import HistoryStore


def results_doc(values: dict[str, list[float]], host: str = "box") -> dict:
    """A steadybench results document with per-execution values for each benchmark."""
    benchmarks = []
    for name, execs in values.items():
        mean = sum(execs) / len(execs)
        benchmarks.append({"name": name, "implementation": name, "params": {}, "unit": "s",
                           "estimate": {"value": mean, "ci_low": min(execs),
                                        "ci_high": max(execs), "level": "executions",
                                        "n_executions": len(execs)},
                           "processes": [{"value": v} for v in execs]})
    return {"schema_version": 1, "benchmarks": benchmarks,
            "environment": {"hostname": host, "cpu_model": "cpu", "cpu_count": 2}}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "t")
    (path / "a.txt").write_text("1\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "one")
    return path


def test_records_are_found_by_id_name_and_git_reference(repo: Path) -> None:
    db = repo / "h.sqlite"
    with HistoryStore.open(str(db)) as store:
        first = store.add(results_doc({"a": [1.0, 1.1]}), name="main", cwd=repo)
        (repo / "a.txt").write_text("2\n")
        git(repo, "commit", "-qam", "two")
        second = store.add(results_doc({"a": [2.0, 2.1]}), cwd=repo)
        assert first.git.commit != second.git.commit
        assert first.git.branch == "main" and first.git.dirty is False
        assert store.resolve(f"#{first.id}").id == first.id
        assert store.resolve("main").id == first.id  # a saved name wins over the branch
        assert store.resolve("HEAD", cwd=repo).id == second.id
        assert store.resolve("HEAD~1", cwd=repo).id == first.id
        assert store.resolve(second.git.commit[:8], cwd=repo).id == second.id
        whole = store.get(second.id)
        assert whole.results["benchmarks"][0]["processes"][0]["value"] == 2.0
        assert [p.value for p in store.series("a")] == pytest.approx([1.05, 2.05])
        assert store.series("a")[1].executions == (2.0, 2.1)
        with pytest.raises(HistoryError, match="no record for HEAD~5|neither"):
            store.resolve("HEAD~5", cwd=repo)


def test_a_dirty_tree_is_flagged(repo: Path) -> None:
    (repo / "a.txt").write_text("changed\n")
    assert git_info(repo).dirty is True


def test_outside_git_the_record_has_no_commit_and_says_so(tmp_path: Path) -> None:
    info = git_info(tmp_path)
    assert info.commit is None and "not in a git repository" in (info.note or "")
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        rec = store.add(results_doc({"a": [1.0, 1.2]}), cwd=tmp_path)
        assert rec.git.commit is None
        assert "recorded without commit data" in store.get(rec.id).git.note


def test_machine_identity_follows_host_and_cpu() -> None:
    a = machine_id({"hostname": "x", "cpu_model": "A", "cpu_count": 2})
    assert a == machine_id({"hostname": "x", "cpu_model": "A", "cpu_count": 2})
    assert a != machine_id({"hostname": "x", "cpu_model": "B", "cpu_count": 2})
    assert a.startswith("x-")


def test_an_older_schema_is_migrated_with_its_data(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript(";\n".join(s.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL",
                                           json="TEXT") for s in MIGRATIONS[1]))
    conn.execute("INSERT INTO steadybench_meta VALUES ('schema_version', '1')")
    doc = results_doc({"old": [3.0, 3.3]})
    conn.execute("INSERT INTO records (created, machine, source, results) VALUES (?, ?, ?, ?)",
                 ("2024-01-01T00:00:00+00:00", "m", "steadybench", json.dumps(doc)))
    conn.commit()
    conn.close()
    with HistoryStore.open(str(db)) as store:
        assert current_version(store.db) == SCHEMA_VERSION == 4
        points = store.series("old")
        assert [p.executions for p in points] == [(3.0, 3.3)]


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    with HistoryStore.open(str(db)):
        pass
    conn = sqlite3.connect(db)
    conn.execute("UPDATE steadybench_meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(HistoryError, match="schema version 99.*newer steadybench"):
        HistoryStore.open(str(db))
    assert sqlite3.connect(db).execute("SELECT value FROM steadybench_meta").fetchone()[0] == "99"


def test_a_corrupt_file_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "corrupt.sqlite"
    db.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(HistoryError, match="not a SQLite database or is corrupt"):
        HistoryStore.open(str(db))


def test_a_locked_store_is_one_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "locked.sqlite"
    with HistoryStore.open(str(db)):
        pass
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(HistoryError, match=r"locked by another process \(waited 0.05 s"), \
                HistoryStore.open(str(db), timeout=0.05) as store:
            store.add(results_doc({"a": [1.0, 1.1]}))
    finally:
        holder.execute("ROLLBACK")
    holder.execute("BEGIN IMMEDIATE")  # another writer: reading works, writing waits, then fails
    try:
        with HistoryStore.open(str(db), timeout=0.05) as store:
            assert store.records() == []
            with pytest.raises(HistoryError, match="locked by another process"):
                store.add(results_doc({"a": [1.0, 1.1]}))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with HistoryStore.open(str(db)) as store:  # nothing half-written
        assert store.records() == [] and store.labels() == []


def test_unknown_url_schemes_are_refused() -> None:
    with pytest.raises(HistoryError, match="unknown scheme 'mysql'"):
        open_backend("mysql://user:secret@host/db")


WRITER = textwrap.dedent("""
    import sys
    from steadybench.history.git import GitInfo
    from steadybench.history.store import HistoryStore
    db, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    with HistoryStore.open(db, timeout=60) as store:
        for i in range(count):
            value = float(i + 1)
            doc = {"schema_version": 1, "environment": {"hostname": tag},
                   "benchmarks": [{"name": f"{tag}-{j}", "implementation": f"{tag}-{j}",
                                   "estimate": {"value": value}, "processes":
                                   [{"value": value}, {"value": value}]} for j in range(3)]}
            store.add(doc, name=f"{tag}-{i}", git=GitInfo(note="test"))
""")


def test_concurrent_writers_lose_and_mix_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.sqlite")
    with HistoryStore.open(db):
        pass
    count = 25
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, db, tag, str(count)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for tag in ("left", "right")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.wait(timeout=120) == 0
    with HistoryStore.open(db) as store:
        records = store.records()
        assert len(records) == 2 * count
        for rec in records:
            whole = store.get(rec.id)
            tag, i = rec.name.rsplit("-", 1)
            labels = {row.label for row in measurements_of(whole.results)}
            assert labels == {f"{tag}-{j}" for j in range(3)}
            assert rec.count == 3
            assert {row.value for row in measurements_of(whole.results)} == {int(i) + 1.0}
        for tag in ("left", "right"):
            assert len(store.series(f"{tag}-0")) == count


def test_the_default_store_is_at_the_top_of_the_repository(repo: Path) -> None:
    sub = repo / "deep" / "er"
    sub.mkdir(parents=True)
    with HistoryStore.open(None, cwd=sub) as store:
        assert Path(store.where) == repo / ".steadybench" / "history.sqlite"
        rec = store.add(results_doc({"a": [1.0, 1.1]}), git=GitInfo(note="x"))
        assert rec.id == 1


def test_a_named_machine_class_replaces_the_host(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STEADYBENCH_MACHINE", "ci-runner")
    with HistoryStore.open(str(tmp_path / "h.sqlite")) as store:
        rec = store.add(results_doc({"a": [1.0, 1.1]}, host="random-host-123"),
                        git=GitInfo(note="x"))
        assert rec.machine == "ci-runner"
        assert store.machines() == ["ci-runner"]


def test_machine_identity_of_an_environment_of_another_shape() -> None:
    # a results file's environment is the file's word: "python" as a string (a hand-written or
    # foreign file) made history import end in an internal AttributeError
    assert machine_id({"hostname": "x", "python": "3.12"}).startswith("x-")
    assert machine_id({"hostname": "x", "python": "3.12"}) != machine_id({"hostname": "x"})
    assert machine_id({"hostname": "x", "fingerprint": "?", "python": 3}).startswith("x-")
    assert machine_id(["not", "a", "mapping"]).startswith("unknown-host-")  # type: ignore[arg-type]


def test_the_schema_is_read_right_when_another_writer_creates_it_between_two_reads() -> None:
    # two writers creating a new PostgreSQL history: this one missed 'steadybench_meta', then
    # saw 'records', which the other had committed with it in between (each read outside a
    # transaction sees its own moment); it said "not a steadybench history"
    from steadybench.history.schema import SCHEMA_VERSION, current_version

    class Racing:
        where = "postgresql://racing"

        def __init__(self) -> None:
            self.committed = False

        def table_exists(self, name: str) -> bool:
            seen = self.committed
            self.committed = True  # the other writer commits just after the first read
            return seen

        def execute(self, sql: str, params: tuple = ()) -> list[tuple[str]]:
            return [(str(SCHEMA_VERSION),)]

    assert current_version(Racing()) == SCHEMA_VERSION  # type: ignore[arg-type]
