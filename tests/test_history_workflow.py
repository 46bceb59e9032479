"""The issue's "done when": a git project of three commits, the third 20% slower, benchmarked
with the pytest plugin at each commit; the history names the third commit, ``compare
--baseline HEAD~1`` calls it slower, and the real pytest-benchmark's JSON of the same project is
read back as a baseline.

The workload sleeps (4 ms, then 4.8 ms): a sleep's length does not depend on how busy the CPU
is, only its overshoot does (tens of microseconds on a loaded machine), so the 20% step (0.8 ms)
stands far above the noise even with other CPU-bound processes running.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import peers
from steadybench.cli import main

#: 8 processes a session: with 4, one process that woke late beside two hogs gave a session's
#: median a bootstrap standard error of 22 %, and `compare --baseline` could not see the 20 %
#: step (it said so: "runs like these find a change of 156 % or more")
MEASURE = ["--steadybench-processes", "8", "--steadybench-time", "0.06"]


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(list(args), cwd=cwd, check=True, capture_output=True, text=True,
                          timeout=300).stdout.strip()


def pytest_in(cwd: Path, *args: str, with_peers: bool = False
              ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS",
                                                            "PYTEST_XDIST_WORKER",
                                                            "STEADYBENCH_HISTORY_URL")}
    if with_peers:  # pytest-benchmark, installed apart (tests/peers.py)
        env = peers.env(env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)


def commit_with_delay(repo: Path, delay: float, message: str) -> str:
    (repo / "slow.py").write_text(f"import time\n\nDELAY = {delay}\n\n\n"
                                  "def work():\n    time.sleep(DELAY)\n")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "--allow-empty", "-m", message)
    return sh(repo, "git", "rev-parse", "HEAD")


@pytest.mark.slow
def test_three_commits_the_third_slower(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    sh(repo, "git", "init", "-q", "-b", "main")
    sh(repo, "git", "config", "user.email", "dev@example.org")
    sh(repo, "git", "config", "user.name", "dev")
    (repo / ".gitignore").write_text(".steadybench/\n*.json\n")
    (repo / "test_speed.py").write_text(
        "import slow\n\n\ndef run():\n    slow.work()\n\n\n"
        "def test_work(benchmark):\n    benchmark(run)\n")
    commits = []
    for i, delay in enumerate((0.004, 0.004, 0.0048)):
        commits.append(commit_with_delay(repo, delay, f"commit {i + 1}"))
        out = pytest_in(repo, "-p", "no:benchmark", *MEASURE, "--steadybench-autosave")
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"recorded #{i + 1}" in out.stdout and commits[-1][:10] in out.stdout
        if i == 1:  # the real pytest-benchmark, at the second commit
            if not peers.available():
                pytest.skip(peers.REASON)
            pb = pytest_in(repo, "-p", "no:steadybench", "--benchmark-json", "pb.json",
                           "--benchmark-min-rounds", "20", "--benchmark-max-time", "0.2",
                           with_peers=True)
            assert pb.returncode == 0, pb.stdout + pb.stderr
    monkeypatch.chdir(repo)
    monkeypatch.delenv("STEADYBENCH_HISTORY_URL", raising=False)

    # the history names the third commit
    assert main(["history", "regressions"]) == 1
    out = capsys.readouterr().out
    assert "SLOWER: test_speed.py::test_work" in out
    assert f"{commits[1][:10]}..{commits[2][:10]}" in out
    # a busy machine's drift between pytest sessions can exceed the noise inside one; changes
    # below 5% are not this test's subject
    assert main(["history", "regressions", "--json", "changes.json", "--fail-on", "never",
                 "--min-change", "5%"]) == 0
    changes = json.loads((repo / "changes.json").read_text())["changes"]
    assert [c["after_commit"] for c in changes] == [commits[2]]
    assert changes[0]["magnitude"] == pytest.approx(0.2, abs=0.05)
    assert changes[0]["confidence"] >= 0.95
    capsys.readouterr()

    # compare --baseline HEAD~1 (NEW: the latest record of HEAD) calls it slower
    assert main(["compare", "--baseline", "HEAD~1", "--json", "c.json", "--quiet",
                 "--fail-on", "slower"]) == 1
    row = json.loads((repo / "c.json").read_text())["benchmarks"][0]
    assert row["verdict"] == "slower"
    assert 1 / row["speedup"] == pytest.approx(1.2, abs=0.06)

    # the real pytest-benchmark JSON, read back as a baseline: one execution (rounds in one
    # process), decided with the run-to-run noise the history learned on this machine
    pb_doc = json.loads((repo / "pb.json").read_text())
    assert pb_doc["commit_info"]["id"] == commits[1]
    assert main(["compare", "--baseline", "pb.json", "--json", "pb-c.json", "--quiet"]) == 0
    doc = json.loads((repo / "pb-c.json").read_text())
    assert doc["inputs"]["base_kind"] == "pytest-benchmark"
    row = doc["benchmarks"][0]
    assert row["test"] == "t with run-to-run noise from history"
    # the verdict follows what pytest-benchmark itself measured: on a quiet machine its rounds
    # of sleep(4 ms) have a median near 4 ms and the 4.8-ms HEAD is slower; beside two CPU hogs
    # its process woke late (min 4.1 ms, mean 13.6 ms, measured), and then HEAD is not slower
    pb_median = pb_doc["benchmarks"][0]["stats"]["median"]
    if pb_median <= 0.0044:
        assert row["verdict"] == "slower", (row, pb_median)
    elif pb_median >= 0.0048 * 1.25:
        assert row["verdict"] != "slower", (row, pb_median)
    # and into the history, with the commit it names
    assert main(["history", "import", "pb.json"]) == 0
    assert main(["history", "show", "#4", "--json", "rec.json"]) == 0
    rec = json.loads((repo / "rec.json").read_text())
    assert rec["source"] == "pytest-benchmark" and rec["commit"] == commits[1]
