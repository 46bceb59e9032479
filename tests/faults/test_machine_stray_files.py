"""Issue 12, item 4: a stray file in the state folder stopped ``system reset``.

A dangling ``run-*.json`` symlink gave an internal error and nothing was restored; a FIFO with
that name blocked reset forever. Now such files are seen with ``lstat`` only, skipped with a
line, and every real journal is restored. The resets run in a child so that a regression (a
blocking FIFO) fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess

from machine_faults import DEADLINE_S, STEADYBENCH, child_env, machine, state

from fake_machine import snapshot
from steadybench.cli import main


def _reset(tmp_path, root, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([STEADYBENCH, "--root", str(root), "system", "reset", *args],
                          capture_output=True, text=True, env=child_env(tmp_path),
                          timeout=DEADLINE_S, stdin=subprocess.DEVNULL)


def test_stray_files_are_skipped_and_the_rest_restored(tmp_path, monkeypatch):
    root = machine(tmp_path)
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert main(["--root", str(root), "system", "tune"]) == 0
    folder = state(tmp_path)
    (folder / "run-101.json").symlink_to(tmp_path / "nowhere.json")  # dangling
    os.mkfifo(folder / "run-102.json")
    (folder / "run-103.json").mkdir()
    (folder / "run-104.json").symlink_to(folder / "tune.json")  # to a real journal: not followed
    done = _reset(tmp_path, root)
    assert done.returncode == 0, done.stderr
    assert snapshot(root) == before
    skipped = [line for line in done.stdout.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 4, done.stdout
    assert any("run-101.json: a symbolic link" in s for s in skipped)
    assert any("run-102.json: a FIFO" in s for s in skipped)
    assert any("run-103.json: a directory" in s for s in skipped)
    assert "restored:" in done.stdout and done.stderr == ""
    assert not (folder / "tune.json").exists()


def test_explicit_stray_journal_is_refused_without_blocking(tmp_path):
    root = machine(tmp_path)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere.json")
    for path, why in ((fifo, "a FIFO, not a regular file"), (link, "a symbolic link"),
                      (tmp_path, "a directory, not a regular file")):
        done = _reset(tmp_path, root, "--journal", str(path))
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert why in done.stderr or "is a directory" in done.stderr, done.stderr
        assert "internal error" not in done.stderr
