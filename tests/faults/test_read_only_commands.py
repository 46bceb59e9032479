"""Issue 27 item 18: commands that only read create no file, and no output makes folders.

``history list --history-url $'sqlite:///\\x01'`` created a database at ``/``; every ``history``
command that reads created ``.steadybench/history.sqlite`` when there was none; ``--json
/a/b/c.json`` created the missing folders ``/a/b``.
"""

from __future__ import annotations

import os

import pytest

from steadybench.cli import main


def _tree(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("args", [["list"], ["show", "HEAD"], ["trend", "x"],
                                  ["export", "#1"], ["regressions"], ["noise"]])
@pytest.mark.parametrize("where", ["default", "path", "control"])
def test_history_reading_creates_nothing(tmp_path, monkeypatch, capsys, args, where):
    monkeypatch.chdir(tmp_path)
    url = {"default": [], "path": ["--history-url", str(tmp_path / "h.sqlite")],
           "control": ["--history-url", f"sqlite:///{tmp_path}/\x01"]}[where]
    code = main(["history", *args, *url])
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: "), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _tree(tmp_path) == []


def test_history_import_still_creates_the_store(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "r.json"
    assert main(["exec", "-q", "--runs", "2", "--no-correction", "--json", str(results),
                 "--", "true"]) == 0
    assert main(["history", "import", str(results)]) == 0
    assert (tmp_path / ".steadybench" / "history.sqlite").is_file()
    capsys.readouterr()


@pytest.mark.parametrize("option", ["--json", "--csv", "--markdown", "--xml", "--report"])
def test_an_output_in_a_missing_folder_is_refused_before_measuring(tmp_path, capsys, option):
    target = tmp_path / "a" / "b" / "out.file"
    code = main(["exec", "-q", "--runs", "2", "--no-correction", option, str(target), "--",
                 "true"])
    err = capsys.readouterr().err
    assert code == 2 and "does not exist" in err, err
    assert not (tmp_path / "a").exists()


def test_the_library_writer_creates_no_folder(tmp_path):
    from steadybench.errors import SteadybenchError
    from steadybench.fileio import atomic_write_text

    with pytest.raises(SteadybenchError):
        atomic_write_text(tmp_path / "x" / "y.txt", "text")
    assert os.listdir(tmp_path) == []
