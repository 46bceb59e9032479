"""``steadybench blocks`` on small CSV files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from steadybench.cli import main


def _write(tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["# a comment", "entry,loop,then,exit,total"]
    for _ in range(30):
        loop, then = int(rng.integers(0, 20)), int(rng.integers(0, 5))
        total = 100 + 25 * loop + 300 * then + 40 + rng.normal(0, 1)
        rows.append(f"1,{loop},{then},1,{total:.3f}")
    path = tmp_path / "counts.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_blocks_command_solves_and_writes_json(tmp_path, capsys):
    path = _write(tmp_path)
    out = tmp_path / "sol.json"
    code = main(["blocks", str(path), "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "entry+exit" in text and "always together" in text
    data = json.loads(out.read_text())
    groups = {"+".join(g["blocks"]): g for g in data["groups"]}
    assert abs(groups["loop"]["value"] - 25) < 0.5
    assert groups["then"]["ci_low"] <= 300 <= groups["then"]["ci_high"]
    assert abs(groups["entry+exit"]["value"] - 140) < 3
    assert data["unit"] == "ns"


def _fails(capsys, args, expected):
    code = main(args)
    err = capsys.readouterr().err
    assert code != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], err


@pytest.mark.parametrize("name,content,expected", [
    ("bad.csv", "a,b,total\n1,x,3\n", "bad.csv:2"),
    ("nototal.csv", "a,b\n1,2\n", "--total-column"),
    ("short.csv", "a,b,total\n1,2\n", "2 fields"),
    ("neg.csv", "a,b,total\n1,-2,3\n2,1,3\n3,3,3\n", "negative"),
    ("singular.csv", "a,b,c,total\n" + "\n".join(
        f"{i},{j},{i + j},{3 * i + 5 * j}" for i, j in [(1, 2), (2, 1), (3, 3), (1, 4), (2, 2)]),
     "cannot be separated"),
    ("header.csv", "a,b,total\n", "header.csv: no rounds (only the header)"),
    ("nan.csv", "a,b,total\n1,2,3\n1,nan,3\n", "nan.csv:3: every field must be a finite"),
    ("twice.csv", "a,a,total\n1,0,3\n0,1,4\n1,1,7\n", "'a' appear more than once"),
])
def test_blocks_command_errors_are_one_line(tmp_path, capsys, name, content, expected):
    path = tmp_path / name
    path.write_text(content)
    _fails(capsys, ["blocks", str(path)], expected)


def test_blocks_command_missing_file(tmp_path, capsys):
    _fails(capsys, ["blocks", str(tmp_path / "none.csv")], "no such file")


def test_blocks_command_prints_markup_in_names_literally(tmp_path, capsys):
    path = tmp_path / "markup.csv"
    path.write_text("[red]x[/red],<b>,total\n1,0,10\n0,1,20\n1,1,30\n2,1,41\n")
    assert main(["blocks", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[red]x[/red]" in out and "<b>" in out
