"""Issue 27 item 7: a database password is never stored nor shown.

``exec``, ``evaluate``, ``iters`` and ``sweep`` kept the raw command line (with ``--history-url
postgresql://u:PASSWORD@…``) in the results JSON, the HTML report and the history database;
``history show``/``export`` printed it; a ``?password=`` parameter was not masked in messages;
a libpq keyword string was taken as a SQLite path and made a file named after it, password
included. One function, :func:`steadybench.redact.redact`, now masks credentials everywhere.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
import sys

import pytest

from steadybench.cli import main
from steadybench.history.backends import HistoryError, PostgresBackend, open_backend
from steadybench.history.store import HistoryStore
from steadybench.redact import command_line, redact, redact_argv

SECRET = "Sup3rS3cret"


@pytest.mark.parametrize("text, expected", [
    (f"postgresql://u:{SECRET}@db:5432/bench", "postgresql://u:***@db:5432/bench"),
    (f"postgres://u:p@{SECRET}@db/bench", "postgres://u:***@db/bench"),  # an @ in it
    (f"postgresql://u@db/b?sslmode=require&password={SECRET}",
     "postgresql://u@db/b?sslmode=require&password=***"),
    (f"postgresql://db/b?PassWord={SECRET}#x", "postgresql://db/b?PassWord=***#x"),
    (f"host=db dbname=b password={SECRET} sslmode=require",
     "host=db dbname=b password=*** sslmode=require"),
    (f"host=db password = '{SECRET} with \\' quote' port=5",
     "host=db password = *** port=5"),
    (f"--password={SECRET}", "--password=***"),
    (f"PGPASSWORD={SECRET} psql", "PGPASSWORD=*** psql"),
    (f"https://user:{SECRET}@example.com/x", "https://user:***@example.com/x"),
    # nothing to mask: unchanged
    ("sqlite:///tmp/h.sqlite", "sqlite:///tmp/h.sqlite"),
    ("postgresql://u@db/b?sslmode=require", "postgresql://u@db/b?sslmode=require"),
    ("echo password", "echo password"),
    ("a=b c=d", "a=b c=d"),
])
def test_redact(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # masking twice changes nothing


def test_a_redacted_command_line_survives_a_second_redaction(monkeypatch):
    words = ["exec", "--history-url", f"postgresql://u:{SECRET}@h/d?password={SECRET}",
             "--history-url", f"host=h password='{SECRET} x'", "--", "true"]
    monkeypatch.setattr(sys, "argv", ["steadybench", *words])
    line = command_line()
    assert SECRET not in line
    assert redact(line) == line  # the results' second pass does not eat a closing quote
    assert shlex.split(line)[1:] == redact_argv(words)


def _steadybench(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(cwd / "state")}
    return subprocess.run([sys.executable, "-m", "steadybench", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_results_report_and_messages_hold_no_password(tmp_path):
    url = f"postgresql://bench:{SECRET}@127.0.0.1:1/db?password={SECRET}&connect_timeout=2"
    done = _steadybench("exec", "--runs", "2", "--no-correction", "--json", "r.json",
                        "--history-url", url, "--", "echo", f"postgresql://u:{SECRET}@h/db",
                        cwd=tmp_path)
    assert done.returncode != 0  # nothing listens on port 1: the history cannot be reached
    assert "cannot be reached" in done.stderr or "psycopg" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    text = (tmp_path / "r.json").read_text()
    assert SECRET not in text
    doc = json.loads(text)
    assert "postgresql://bench:***@127.0.0.1:1/db" in doc["context"]["command_line"]
    report = _steadybench("report", "r.json", "-o", "r.html", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert SECRET not in (tmp_path / "r.html").read_text()


def test_a_libpq_keyword_string_is_postgresql_not_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    dsn = f"host=127.0.0.1 port=1 dbname=x password={SECRET} connect_timeout=2"
    code = main(["history", "list", "--history-url", dsn])
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert SECRET not in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []  # no SQLite file named after the string
    with pytest.raises(HistoryError) as caught:
        open_backend(dsn, timeout=2)
    assert SECRET not in str(caught.value)


def test_the_keyword_form_selects_postgresql(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    chosen = []
    monkeypatch.setattr(PostgresBackend, "__init__",
                        lambda self, url, timeout: chosen.append(url))
    open_backend("  dbname=bench user=ci", timeout=1)
    open_backend("host=/run/postgresql dbname=bench", timeout=1)
    assert chosen == ["  dbname=bench user=ci", "host=/run/postgresql dbname=bench"]


@pytest.mark.parametrize("url", [f"sqlite:///{{tmp}}/h.sqlite?password={SECRET}",
                                 f"{{tmp}}/h.sqlite password={SECRET}",
                                 f"mysql://u:{SECRET}@h/db"])
def test_a_password_elsewhere_is_refused_and_masked(tmp_path, url, capsys):
    code = main(["history", "list", "--history-url", url.format(tmp=tmp_path)])
    err = capsys.readouterr().err
    assert code != 0 and SECRET not in err and "***" in err, err
    assert os.listdir(tmp_path) == []


def test_error_messages_mask_passwords(tmp_path, capsys):
    code = main(["exec", "--runs", "1", "--", f"/nonexistent/postgresql://u:{SECRET}@h/x?"
                 f"password={SECRET}"])
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: "), err
    assert SECRET not in err


def _old_record(path) -> None:
    """A history written before redaction: the password in clear in the command column and in
    the results' context."""
    with HistoryStore.open(str(path)) as store:
        results = {"schema_version": 1, "benchmarks": [
            {"name": "b", "implementation": "b", "params": {}, "unit": "s",
             "estimate": {"value": 1.0, "unit": "s"}}],
            "context": {"command_line": "x"}}
        rec = store.add(results, command="x")
    conn = sqlite3.connect(path)
    clear = f"steadybench exec --history-url postgresql://u:{SECRET}@h/d -- true"
    results["context"]["command_line"] = clear
    conn.execute("UPDATE records SET command = ?, results = ? WHERE id = ?",
                 (clear, json.dumps(results), rec.id))
    conn.commit()
    conn.close()


def test_history_store_keeps_no_password(tmp_path):
    path = tmp_path / "h.sqlite"
    with HistoryStore.open(str(path)) as store:
        results = {"schema_version": 1, "benchmarks": [
            {"name": "b", "implementation": "b", "params": {}, "unit": "s",
             "estimate": {"value": 1.0, "unit": "s"}}],
            "context": {"command_line": f"x --history-url 'host=h password={SECRET}'"}}
        store.add(results, command=f"x --history-url postgresql://u:{SECRET}@h/d")
    assert SECRET.encode() not in path.read_bytes()


@pytest.mark.parametrize("args", [["show", "#1"], ["export", "#1"], ["list", "--json", "-"]])
def test_history_show_and_export_mask_old_records(tmp_path, args, capsys):
    path = tmp_path / "h.sqlite"
    _old_record(path)
    assert SECRET.encode() in path.read_bytes()
    code = main(["history", *args, "--history-url", str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert SECRET not in out + err and "u:***@h" in out


def test_a_driver_message_quoting_a_piece_of_the_password_is_masked(capsys):
    """Found by the fault matrix: libpq split ``ci:p@SECRET@host`` at the first ``@`` and
    named ``SECRET@host`` as the host it could not resolve."""
    code = main(["history", "list", "--history-url",
                 f"postgres://ci:p@{SECRET}@127.0.0.1:1/d"])
    err = capsys.readouterr().err
    assert code != 0 and SECRET not in err, err
