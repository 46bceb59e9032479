"""Item 13: a command that never ends cannot hang ``exec`` (or ``iters``).

Without ``--timeout``, ``exec`` waited for ever on a command that never ends, whatever
``--time-limit`` and ``--max-time`` said. Now every run gets a timeout: the rest of the hard time
limit, or the whole ``--max-time`` budget when given. The run still going then is killed with its
process group and recorded as failed; the other files are written and the exit status is 1.

The command below never ends by itself (it waits on a pipe nobody writes); what ends it is
steadybench's own timer, so no test waits on the clock.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from steadybench.cli import main
from steadybench.output.results_io import load_results

#: a command that never ends and leaves a child of its own in its process group
NEVER_ENDS = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import os; os.read(0, 1)'],\n"
    "                         stdin=subprocess.PIPE)\n"
    "open(sys.argv[1], 'w').write(str(child.pid))\n"
    "os.read(os.pipe()[0], 1)\n"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose (its parent, killed too, will not reap it)
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _run(tmp_path: Path, capsys, *options: str) -> tuple[int, str, Path]:
    script = tmp_path / "never.py"
    script.write_text(NEVER_ENDS)
    pidfile = tmp_path / "child.pid"
    out = tmp_path / "r.json"
    code = main(["exec", "-q", "--no-correction", "--json", str(out), *options, "--",
                 sys.executable, str(script), str(pidfile)])
    return code, capsys.readouterr().err, out


def test_exec_without_timeout_stops_at_the_hard_time_limit(tmp_path, capsys):
    code, err, out = _run(tmp_path, capsys, "--time-limit", "1")
    assert code == 1, err
    assert "still running at the hard time limit of 1 s (process group killed" in err
    case = load_results(out).cases[0]
    assert case.status == ["failed"] and case.errors
    assert case.metrics["wall_time_raw"][0] >= 1.0
    # the whole group went: the command's own child too
    assert not _alive(int((tmp_path / "child.pid").read_text()))


def test_exec_without_timeout_stops_at_max_time(tmp_path, capsys):
    code, err, out = _run(tmp_path, capsys, "--max-time", "0.5")
    assert code == 1, err
    assert "still running after 0.5 s, the whole --max-time budget" in err
    assert load_results(out).cases[0].status == ["failed"]
    assert not _alive(int((tmp_path / "child.pid").read_text()))


def test_exec_ignoring_failures_still_ends_and_fails(tmp_path, capsys):
    # -i: the killed run is ignored, the budget is spent, and no run ever succeeded
    code, err, out = _run(tmp_path, capsys, "-i", "--max-time", "0.3", "--time-limit", "2")
    assert code == 1, err
    assert "no run succeeded" in err
    case = load_results(out).cases[0]
    assert case.n == 0 and "failed" in case.status


def test_a_run_shorter_than_the_budget_is_not_cut(tmp_path, capsys):
    # --max-time is a budget checked between runs: runs that fit are never killed
    code = main(["exec", "-q", "--no-correction", "--max-time", "0.3", "--", "true"])
    assert code == 0, capsys.readouterr().err


def test_iters_run_stops_at_the_hard_time_limit_before_its_timeout(tmp_path, capsys):
    script = tmp_path / "never.py"
    script.write_text(NEVER_ENDS)
    code = main(["iters", "-q", "--time-limit", "1", "--timeout", "60", "--",
                 sys.executable, str(script), str(tmp_path / "child.pid"), "{iters}"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "still running at the hard time limit of 1 s" in err
