"""docs/tutorial.md runs as written: every ``sh`` block's commands, in order, in one empty
directory, after writing each ``python`` block to the file its first line names. A command
marked ``# fails`` must fail with status 1, and the error it prints must be the one the
tutorial quotes."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from steadybench.cli import main

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", TUTORIAL.read_text(), flags=re.S)


@pytest.mark.slow
def test_every_tutorial_command_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    quoted_errors = [text.strip() for kind, text in blocks()
                     if kind == "text" and text.startswith("error:")]
    outputs: list[tuple[str, str, str]] = []
    ran = 0
    for kind, text in blocks():
        if kind == "python":
            name = text.splitlines()[0].lstrip("# ").strip()
            assert name.endswith(".py"), name
            (tmp_path / name).write_text(text)
        elif kind == "sh":
            for line in text.strip().splitlines():
                argv = shlex.split(line, comments=True)
                assert argv[0] == "steadybench", line
                code = main(argv[1:])
                out, err = capsys.readouterr()
                ran += 1
                if "# fails" in line:
                    assert code == 1, (line, err)
                    assert err.strip().splitlines()[-1] in quoted_errors, err
                else:
                    assert code == 0, (line, err)
                outputs.append((line, out, err))
    assert ran >= 8
    by_command = {line.split()[1] + " " + line.split()[2]: (out, err)
                  for line, out, err in outputs}
    # what the prose promises
    two = next(out for line, out, _ in outputs if "functools.reduce" in line)
    # a winner is named only with an interval, and only join can be it; on a loaded machine the
    # budget may end first (6 rounds in 3 s, one disturbed: "no difference", which is honest)
    assert re.search(r'"".join\(parts\) is [\d.]+× faster than\s+functools|too few rounds|'
                     r'no difference \(\d+ rounds, time budget of 3 s spent\)', two), two
    assert not re.search(r'"".join\(parts\) is [\d.]+× slower', two), two
    first_run = next(out for line, out, _ in outputs if line.endswith("--json results.json"))
    assert "build a string [n=10000]:" in first_run and "join is " in first_run
    plain = next(out for line, out, _ in outputs if "--style plain" in line)
    assert plain.splitlines()[0].split()[:2] == ["benchmark", "runs"]
    dashed = next(out for line, out, _ in outputs if "--json -" in line)
    assert {c["implementation"] for c in json.loads(dashed)["benchmarks"]} == {"join"}
    assert "NEW against BASE on 4 benchmark(s)" in by_command["compare results.json"][0]
    gzip = json.loads((tmp_path / "gzip.json").read_text())
    assert [r["command"] for r in gzip["results"]] == ["fast", "small"]
    assert all(len(r["times"]) >= 10 for r in gzip["results"])
