"""The history in PostgreSQL, for real: a throw-away cluster (``initdb`` + ``pg_ctl``) on a free
local port in a temporary directory. ``.ci/run`` installs PostgreSQL from Debian; where its
programs are missing, or the tests run as root without ``runuser`` (PostgreSQL refuses to run as
root), the tests are skipped with the reason."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from steadybench.cli import main
from steadybench.history.backends import HistoryError
from steadybench.history.store import HistoryStore

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (the test extra)")


def find_program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = find_program("initdb"), find_program("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (initdb/pg_ctl not found; .ci/run installs "
                    "the Debian package postgresql)")
    prefix: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="steadybench-pg-"))
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if not runuser:
            shutil.rmtree(base)
            pytest.skip("running as root and runuser is missing: PostgreSQL refuses to run "
                        "as root")
        prefix = [runuser, "-u", "nobody", "--"]
        os.chown(base, 65534, 65534)
    base.chmod(0o700)
    data, port = base / "data", free_port()
    try:
        subprocess.run([*prefix, initdb, "-D", str(data), "-U", "postgres", "--auth=trust",
                        "-E", "UTF8", "--no-instructions"], check=True, capture_output=True,
                       timeout=120, cwd=base)
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-w", "-t", "60", "-l",
                        str(base / "log"), "-o", f"-p {port} -k {base} -h 127.0.0.1", "start"],
                       check=True, capture_output=True, timeout=120, cwd=base)
    except subprocess.CalledProcessError as exc:
        log = (base / "log").read_text(errors="replace") if (base / "log").exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"the throw-away PostgreSQL cluster did not start: {exc.stderr!r} {log}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=120, cwd=base)
        shutil.rmtree(base, ignore_errors=True)


def doc(name: str, values: list[float]) -> dict:
    return {"schema_version": 1, "environment": {"hostname": "pg-test"},
            "benchmarks": [{"name": name, "implementation": name, "unit": "s",
                            "estimate": {"value": sum(values) / len(values)},
                            "processes": [{"value": v} for v in values]}]}


def test_records_series_and_regressions_in_postgresql(postgres_url: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from steadybench.history.git import GitInfo

    with HistoryStore.open(postgres_url) as store:
        for i, level in enumerate((1.0, 1.0, 1.0, 1.2, 1.2)):
            values = [level * (1 + 0.002 * k) for k in range(4)]
            store.add(doc("pg-bench", values), name=f"r{i}",
                      git=GitInfo(commit=f"{i:040x}", branch="main", dirty=False))
        assert store.resolve("r3").git.commit == f"{3:040x}"
        assert len(store.series("pg-bench")) == 5
    monkeypatch.chdir(tmp_path)
    assert main(["history", "regressions", "--history-url", postgres_url]) == 1
    out = capsys.readouterr().out
    assert "SLOWER: pg-bench on " in out and f"{2:040x}"[:10] + ".." + f"{3:040x}"[:10] in out
    assert main(["history", "list", "--history-url", postgres_url]) == 0
    assert "r4" in capsys.readouterr().out


def test_a_newer_postgresql_schema_is_refused(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS future")
    url = postgres_url + "?options=-csearch_path%3Dfuture"
    with HistoryStore.open(url):
        pass
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE steadybench_meta SET value = '7' WHERE key = 'schema_version'")
    with pytest.raises(HistoryError, match="schema version 7.*newer"):
        HistoryStore.open(url)


WRITER = textwrap.dedent("""
    import sys
    from steadybench.history.git import GitInfo
    from steadybench.history.store import HistoryStore
    url, tag = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    sys.stdin.readline()
    with HistoryStore.open(url) as store:
        for i in range(15):
            store.add({"schema_version": 1, "environment": {"hostname": tag},
                       "benchmarks": [{"name": f"{tag}-{j}", "implementation": f"{tag}-{j}",
                                       "estimate": {"value": i + 1.0}} for j in range(3)]},
                      name=f"{tag}-{i}", git=GitInfo(note="test"))
""")


def test_concurrent_writers_in_postgresql(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS race")
    url = postgres_url + "?options=-csearch_path%3Drace"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, tag], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:  # both open the empty schema at once: one creates it, the other waits
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        assert p.wait(timeout=120) == 0
    with HistoryStore.open(url) as store:
        records = store.records()
        assert len(records) == 30
        for rec in records:
            tag, i = rec.name.split("-")
            assert rec.count == 3
            assert [p.value for p in store.series(f"{tag}-0") if p.record_id == rec.id] == \
                [int(i) + 1.0]


def test_an_unreachable_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/none"
    with pytest.raises(HistoryError, match="cannot be reached") as info:
        HistoryStore.open(url, timeout=2)
    assert "secret" not in str(info.value) and "***" in str(info.value)


def test_publish_reads_a_postgresql_store(postgres_url: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``history publish`` from PostgreSQL: the same site as from SQLite."""
    import json

    from steadybench.history.git import GitInfo

    url = postgres_url + "?options=-csearch_path%3Dpublish"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS publish")
    with HistoryStore.open(url) as store:
        for i, level in enumerate((1.0, 1.0, 1.0, 1.0, 1.3, 1.3, 1.3)):
            values = [level * (1 + 0.002 * k) for k in range(4)]
            store.add(doc("pg-publish <b>", values),
                      git=GitInfo(commit=f"{i + 100:040x}", branch="main", dirty=False))
    site = tmp_path / "site"
    assert main(["history", "publish", str(site), "--history-url", url]) == 0
    assert "1 benchmarks, 1 series, 7 commits, 1 open regression(s)" in capsys.readouterr().out
    text = (site / "data" / "b0001.js").read_text()
    data = json.loads(text[text.index("=") + 1:].rstrip().rstrip(";"))
    assert data["name"] == "pg-publish <b>" and data["changes"][0]["at"] == 4
    assert "pg-publish &lt;b&gt;" in (site / "index.html").read_text()
