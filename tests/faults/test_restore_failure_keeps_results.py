"""Issue 27 item 9: ``exec`` and ``iters`` threw away every result when a tuned file could not
be restored (no JSON, no table, only the error line). Now the results are written, the failure
is recorded in them (``context.restore_failed``) and the command ends with its error line."""

from __future__ import annotations

import json

import pytest

from fake_machine import CPU, make_machine
from steadybench.cli import main

GOVERNOR = f"{CPU}/cpu0/cpufreq/scaling_governor"


@pytest.mark.parametrize("command", ["exec", "iters"])
def test_results_survive_a_failed_restore(tmp_path, monkeypatch, capsys, command):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = make_machine(tmp_path / "m")
    preset = tmp_path / "tune.toml"
    preset.write_text('countermeasures = ["tune"]\n')
    victim = root / GOVERNOR
    out = tmp_path / "r.json"
    # the measured command deletes a tuned file: its original cannot be put back
    if command == "exec":
        args = ["exec", "--runs", "3", "--no-correction", "--", "rm", "-f", str(victim)]
    else:
        args = ["iters", "--shell", "--runs", "3", "--min-points", "3", "--",
                f"rm -f {victim}; echo BATCHTIME: 0.00{{iters}}"]
    code = main(["--root", str(root), *args[:1], "--preset", str(preset), "--json", str(out),
                 *args[1:]])
    err = capsys.readouterr().err
    assert code != 0
    assert "the results were written" in err and "Traceback" not in err
    data = json.loads(out.read_text())
    assert data["benchmarks"] and "restore_failed" in data["context"]
