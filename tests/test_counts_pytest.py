"""The pytest plugin's CI gate on counts (issue 26): with ``--steadybench-measure
instructions``, saving on one commit and comparing on the next fails the gate on a 3 %
instruction regression and passes an unchanged commit. pytest runs in a subprocess on a small
git project, as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,  # every test counts under valgrind: seconds each
              pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("git") is None,
                                 reason="needs valgrind (apt-get install valgrind) and git")]

TESTS = textwrap.dedent("""\
    DATA = list(range({size}))[::-1]

    def work():
        return sorted(DATA)

    def test_sort(benchmark):
        assert benchmark(work)[0] == 0
    """)


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   cwd=project, check=True, capture_output=True)


def commit(project: Path, size: int, message: str) -> None:
    (project / "test_bench.py").write_text(TESTS.format(size=size))
    (project / "notes.txt").write_text(message)  # an unrelated change makes a new commit
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS",
                                                             "PYTEST_XDIST_WORKER")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-p", "no:benchmark",
                           "--steadybench-measure", "instructions",
                           "--steadybench-history", "history.sqlite", *args],
                          cwd=project, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.timeout(900)  # three pytest sessions, each counting under valgrind (~4 processes)
def test_gate_on_instructions_fails_a_3_percent_regression_and_passes_unchanged(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / ".gitignore").write_text("history.sqlite*\n__pycache__/\n*.json\n")
    commit(project, 1000, "first")
    saved = pytest_run(project, "--steadybench-save", "base", "--steadybench-json", "a.json")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    doc = json.loads((project / "a.json").read_text())
    (case,) = doc["benchmarks"]
    assert case["unit"] == "instructions" and case["estimate"]["unit"] == "instructions"
    assert " instructions" in saved.stdout and " µs" not in saved.stdout

    commit(project, 1000, "unchanged code")
    same = pytest_run(project, "--steadybench-compare", "base", "--steadybench-fail-on",
                      "slower")
    assert same.returncode == 0, same.stdout + same.stderr
    assert "B executes the same instructions as A" in same.stdout, same.stdout + same.stderr
    assert same.stdout.count("counts are not time") == 1, same.stdout

    # sorted() of 1,030 reversed ints: timsort reverses the one descending run, about 3 % more
    commit(project, 1030, "3 % more work")
    worse = pytest_run(project, "--steadybench-compare", "base", "--steadybench-fail-on",
                       "slower")
    assert worse.returncode != 0, worse.stdout + worse.stderr
    assert "more instructions than A (exact: +" in worse.stdout, worse.stdout + worse.stderr
