"""``steadybench history`` and ``--history`` on the commands, through the CLI."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import textwrap
from pathlib import Path

import pytest

from steadybench.cli import main
from steadybench.history.schema import SCHEMA_VERSION
from steadybench.history.store import HistoryStore

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark
    def tiny():
        data = list(range(50))
        return lambda: sorted(data)
""")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STEADYBENCH_HISTORY_URL", raising=False)
    (tmp_path / "bench.py").write_text(BENCH)
    return tmp_path


def test_run_records_and_history_lists_shows_exports(project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "bench.py", "--runs", "5", "-q", "--json", "r.json",
                 "--history-name", "first"]) == 0
    err = capsys.readouterr().err
    # outside git: recorded, and it says so
    assert "not in a git repository: recorded without commit data" in err
    assert main(["run", "bench.py", "--runs", "5", "-q", "--history"]) == 0
    capsys.readouterr()
    db = project / ".steadybench" / "history.sqlite"
    assert db.is_file()
    assert main(["history", "list"]) == 0
    out = capsys.readouterr().out
    assert "first" in out and out.count("\n") == 3
    assert main(["history", "show", "first"]) == 0
    out = capsys.readouterr().out
    assert "record #1 'first'" in out and "tiny:" in out and "(2 executions)" in out
    assert main(["history", "export", "first", "--format", "bmf", "-o", "bmf.json"]) == 0
    assert "latency" in json.loads((project / "bmf.json").read_text())["tiny"]
    assert main(["history", "compare", "#1", "#2", "--json", "c.json"]) == 0
    assert json.loads((project / "c.json").read_text())["benchmarks"][0]["name"] == "tiny"
    assert main(["history", "trend", "tiny", "--plot", "t.png", "--report", "t.html"]) == 0
    out = capsys.readouterr().out
    assert "tiny  " in out and "2 records" in out
    assert (project / "t.png").read_bytes().startswith(b"\x89PNG")
    page = (project / "t.html").read_text()
    assert "<svg" in page and "<h1>tiny</h1>" in page


def test_a_broken_history_still_writes_the_results(project: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = project / "bad.sqlite"
    bad.write_bytes(b"\x00garbage" * 300)
    code = main(["run", "bench.py", "--runs", "5", "-q", "--json", "r.json",
                 "--history-url", str(bad)])
    assert code == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "not a SQLite database or is corrupt" in err
    assert json.loads((project / "r.json").read_text())["benchmarks"][0]["name"] == "tiny"


def test_a_newer_history_is_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = project / "h.sqlite"
    with HistoryStore.open(str(db)):
        pass
    conn = sqlite3.connect(db)
    conn.execute("UPDATE steadybench_meta SET value = ? WHERE key = 'schema_version'",
                 (str(SCHEMA_VERSION + 1),))
    conn.commit()
    conn.close()
    assert main(["history", "list", "--history-url", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: history") and "newer steadybench" in err


def test_exec_and_ab_record_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exec", "--runs", "3", "-q", "--history", "--", "true"]) == 0
    a = project / "a.py"
    a.write_text("import steadybench\n\n\n@steadybench.benchmark\ndef work():\n"
                 "    return lambda: None\n")
    assert main(["ab", str(a), str(a), "--max-rounds", "6", "--min-rounds", "6", "--max-time",
                 "0", "--execution-time", "0.01", "-q", "--history"]) in (0, 1)
    capsys.readouterr()
    with HistoryStore.open(None) as store:
        records = store.records()
        assert len(records) == 2
        ab = store.get(records[0].id)
        assert ab.results["context"]["ab_verdict"]
        labels = [c["name"] for c in ab.results["benchmarks"]]
        assert len(labels) == 2 and labels[0].endswith("(A)") and labels[1].endswith("(B)")
        assert all(len(c["processes"]) >= 3 for c in ab.results["benchmarks"])


def test_one_execution_results_use_the_recorded_noise(project: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    env = {"hostname": "box", "cpu_model": "c", "cpu_count": 2}

    def doc(name: str, execs: list[float]) -> dict:
        return {"schema_version": 1, "environment": env, "benchmarks": [
            {"name": name, "implementation": name, "unit": "s",
             "estimate": {"value": sum(execs) / len(execs)},
             "processes": [{"value": v} for v in execs] if len(execs) > 1 else []}]}

    with HistoryStore.open(None) as store:  # noise: 1% between executions
        for _ in range(3):
            store.add(doc("job", [1.0, 1.01, 0.99, 1.0, 1.005]))
    (project / "a.json").write_text(json.dumps(doc("job", [1.0])))
    (project / "b.json").write_text(json.dumps(doc("job", [1.3])))
    assert main(["compare", "a.json", "b.json", "--json", "c.json", "--quiet"]) == 0
    row = json.loads((project / "c.json").read_text())["benchmarks"][0]
    assert row["verdict"] == "slower"
    assert row["test"] == "t with run-to-run noise from history"
    (project / "b.json").write_text(json.dumps(doc("job", [1.001])))
    assert main(["compare", "a.json", "b.json", "--json", "c.json", "--quiet"]) == 0
    row = json.loads((project / "c.json").read_text())["benchmarks"][0]
    assert row["verdict"] == "no significant difference"
    # another machine's noise is not used
    other = {**doc("job", [1.3]), "environment": {"hostname": "elsewhere"}}
    (project / "b.json").write_text(json.dumps(other))
    (project / "a.json").write_text(json.dumps({**doc("job", [1.0]), "environment":
                                                {"hostname": "elsewhere"}}))
    assert main(["compare", "a.json", "b.json", "--json", "c.json", "--quiet"]) == 0
    row = json.loads((project / "c.json").read_text())["benchmarks"][0]
    assert row["verdict"] == "inconclusive: one execution"


def test_bad_references_and_options_are_one_line(project: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "show", "nothing-like-this"]) == 2
    assert main(["history", "trend", "nope"]) == 2
    assert main(["compare", "--baseline", "HEAD~3"]) == 2
    assert main(["history", "list", "--history-url", "ftp://x/y"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith("error: ") for line in lines)
    assert "Traceback" not in err


def test_asv_results_are_imported_with_their_commit(project: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from test_formats import asv_file

    path = asv_file(project)
    assert main(["history", "import", str(path), "--name", "asv-base"]) == 0
    assert main(["history", "show", "asv-base", "--json", "rec.json"]) == 0
    rec = json.loads((project / "rec.json").read_text())
    assert rec["source"] == "asv" and rec["commit"].startswith("0123456789abcdef")
    assert rec["created"].startswith("2024-05-01") and rec["benchmarks"] == 3
    assert main(["history", "export", "asv-base", "--format", "github-action-benchmark",
                 "-o", "gab.json"]) == 0
    names = [e["name"] for e in json.loads((project / "gab.json").read_text())]
    assert names == ["bench.time_sort", "bench.time_param(1)", "bench.time_param(3)"]
