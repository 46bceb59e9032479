"""Issue 27 item 14: a state directory made immutable in the middle of a tuned run.

The journal could not be removed after the restore: ``PermissionError`` ("error: Operation not
permitted: …run-N.json"), no results file, the journal left behind. Now the results are written
and one line says the machine was restored but its journal could not be removed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fake_machine import make_machine, snapshot

BENCH = """\
import os, subprocess
import steadybench as sb
n = {"c": 0}

def work():
    n["c"] += 1
    if n["c"] == 20:
        for folder, _, _ in os.walk(os.environ["XDG_STATE_HOME"]):
            subprocess.run(["chattr", "+i", folder], check=True)

@sb.benchmark
def b():
    return work
"""


def _chattr_works(folder: Path) -> bool:
    probe = folder / "probe"
    probe.mkdir()
    if shutil.which("chattr") is None or os.geteuid() != 0:
        return False
    ok = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
    return ok


def test_state_directory_made_immutable_mid_run_keeps_the_results(tmp_path):
    if not _chattr_works(tmp_path):
        pytest.skip("chattr +i needs root and a file system that supports it")
    root = make_machine(tmp_path / "root", cpus=2, governor="powersave")
    before = snapshot(root)
    (tmp_path / "bench.py").write_text(BENCH)
    state = tmp_path / "state"
    state.mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    try:
        done = subprocess.run([sys.executable, "-m", "steadybench", "--root", str(root), "run",
                               "bench.py", "--preset", "managed", "--in-process", "--runs",
                               "200", "-q", "--json", "r.json"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        subprocess.run(["chattr", "-R", "-i", str(state)], capture_output=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "the machine was restored, but its journal" in lines[0], \
        done.stderr
    # the line is true from its first words: the settings were restored, the journal stayed
    assert lines[0].startswith("error: machine settings restored, but a restore journal was "
                               "left behind"), lines[0]
    assert "not restored" not in lines[0]
    assert json.loads((tmp_path / "r.json").read_text())["benchmarks"][0]["n"] > 0
    assert snapshot(root) == before  # every setting put back


def test_the_heading_says_not_restored_when_any_setting_was_not():
    from steadybench.system.journal import RESTORED_BUT, restore_heading

    journal_only = f"b: {RESTORED_BUT} /s/run-1.json could not be removed (EPERM)"
    assert restore_heading([journal_only]) == \
        "machine settings restored, but a restore journal was left behind"
    assert restore_heading([journal_only, "b2: cpu0 governor: Read-only file system"]) == \
        "machine settings not restored"
    assert restore_heading([]) == "machine settings not restored"
