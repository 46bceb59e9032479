"""``evaluate --measure instructions|cycles`` (issue 26): each launch of each preset is one
counted process of the case, the preset applied around it (the managed one tunes a fake board),
and the report shows what the presets did to the counts: nothing, measured."""

from __future__ import annotations

import json
import shutil

import pytest

from evaluate_machine import make_board
from fake_machine import snapshot
from steadybench.cli import main

BENCH = """\
import steadybench

DATA = list(range(300))[::-1]

@steadybench.benchmark
def sort_reversed():
    return lambda: sorted(DATA)
"""


@pytest.mark.slow
@pytest.mark.timeout(600)  # five Python start-ups under valgrind: 86 s on the loaded 2-core VM
@pytest.mark.skipif(shutil.which("valgrind") is None,
                    reason="valgrind is not installed (apt-get install valgrind)")
def test_counts_do_not_change_across_presets_and_the_report_says_so(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    board = make_board(tmp_path / "board")
    bench = tmp_path / "bench.py"
    bench.write_text(BENCH)
    before = snapshot(board)
    out = tmp_path / "r.json"
    code = main(["--root", str(board), "evaluate", str(bench), "--measure", "instructions",
                 "--launches", "2", "--seed", "3", "--json", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert snapshot(board) == before  # the managed preset's tuning restored after each launch
    ev = json.loads(out.read_text())["context"]["evaluate"]
    assert ev["executions"] == {"planned": 4, "done": 4}
    applied = {role: {a["name"] for a in ev["presets"][role]["applied"]}
               for role in ("baseline", "managed")}
    assert "tune" in applied["managed"] and "tune" not in applied["baseline"]  # board tuned
    (case,) = ev["cases"]
    assert case["unit"] == "instructions"
    base, managed = case["execution_medians"]["baseline"], case["execution_medians"]["managed"]
    assert len(base) == len(managed) == 2 and all(v > 1000 for v in base)
    # the finding: launch k counts the same under both presets (layout k, valgrind's CPU)
    assert base == managed
    t3 = case["table3"]
    assert t3["performance"]["absolute"] == 0 and t3["performance"]["relative"] == 0
    assert t3["baseline"]["std"] == t3["managed"]["std"]  # the layouts' spread, both alike
    assert "presets counted the same instructions in 2 of 2 launches (exactly)" in \
        case["finding"]
    text = captured.out
    assert "Counts across the presets" in text and text.count("counts are not time") == 1
    assert "2 launches × one counted process" in text
    assert " s " not in text.split("Counts across")[0].split("Table 2.")[1]  # no seconds


@pytest.mark.parametrize("args,said", [
    (["--cmd", "true"], "counts the cases of a benchmark file"),
    (["b.py", "--long", "3"], "a count has no runs to make long"),
])
def test_what_a_counted_evaluation_cannot_do_is_one_line(args, said, tmp_path, monkeypatch,
                                                         capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.py").write_text(BENCH)
    code = main(["evaluate", "--measure", "instructions", *args])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err
