"""Item 12 (files): a malformed or special file is one line ``error: ...``, never an internal
error or an endless read.

``exec --file /dev/zero`` read for ever and a FIFO waited for a writer; a deeply nested TOML
file ended in a ``RecursionError``; ``--preset ''`` silently meant "no preset"; a counts CSV with
a huge field ended in ``csv.Error``. ``compare`` and ``report`` ended in ``RecursionError`` on a
deeply nested JSON and in ``AttributeError``/``TypeError`` on a results file whose entries have
the wrong kind (``compare/readers.py``, ``fileio.read_user_json``,
``output/results_io.results_from_data``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from steadybench.cli import main


def one_error(args: list[str], capsys, status: int = 2) -> str:
    code = main(args)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert code == status, err
    assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_commands_file_that_is_not_a_regular_file(tmp_path, capsys, special):
    path = special
    if special == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    assert "not a regular file" in one_error(["exec", "--file", path], capsys)


def test_commands_file_nested_too_deeply(tmp_path, capsys):
    path = tmp_path / "deep.toml"
    path.write_text('[[command]]\nrun = "true"\n' + "a = " + "[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in one_error(["exec", "--file", str(path)], capsys)


def test_counts_csv_with_a_huge_field(tmp_path, capsys):
    path = tmp_path / "counts.csv"
    path.write_text("a,total\n" + "9" * 200_000 + ",1\n")
    assert "not a counts CSV" in one_error(["blocks", str(path)], capsys)


@pytest.mark.parametrize("command", [["exec", "--preset", "", "--", "true"],
                                     ["run", "bench.py", "--preset", " "]])
def test_empty_preset_is_refused(capsys, command):
    assert "'--preset': must not be empty" in one_error(command, capsys)


# ---------------------------------------------------------------------------- results files
def _results(tmp_path: Path, capsys) -> dict:
    out = tmp_path / "r.json"
    assert main(["exec", "-q", "--runs", "2", "--no-correction", "--json", str(out), "--",
                 "true"]) == 0, capsys.readouterr().err
    return json.loads(out.read_text())


def test_compare_deeply_nested_json(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    one_error(["compare", str(path), str(path)], capsys)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "9" * 10_000])
def test_report_on_json_it_cannot_parse(tmp_path, capsys, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    one_error(["report", str(path), "-o", str(tmp_path / "r.html")], capsys)


@pytest.mark.parametrize("where", ["context", "environment", "name"])
def test_results_file_whose_entry_is_a_string(tmp_path, capsys, where):
    data = _results(tmp_path, capsys)
    if where == "name":
        data["benchmarks"][0]["name"] = 3
    else:
        data[where] = "x"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    one_error(["report", str(path), "-o", str(tmp_path / "r.html")], capsys)
    one_error(["compare", str(path), str(path)], capsys)


def test_a_fifo_given_to_report_is_refused_not_waited_on(tmp_path, capsys):
    """Found by benchmarks/fault_matrix.py: ``report FIFO`` waited for a writer for ever."""
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    assert "is a FIFO, not a regular file" in one_error(
        ["report", str(fifo), "-o", str(tmp_path / "r.html")], capsys)


def test_an_output_name_too_long_is_one_line(tmp_path, capsys):
    """Found by benchmarks/fault_matrix.py: ENAMETOOLONG was an internal error."""
    long = tmp_path / ("x" * 300)
    assert "File name too long" in one_error(
        ["exec", "--runs", "1", "--markdown", str(long), "--", "true"], capsys)


def test_a_preset_nested_too_deeply_is_one_line(tmp_path, capsys):
    """Found by benchmarks/fault_matrix.py: a deeply nested TOML preset ended in RecursionError."""
    preset = tmp_path / "deep.toml"
    preset.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "is not valid TOML" in one_error(["system", "check", "--interval", "0", "--preset",
                                             str(preset)], capsys)
