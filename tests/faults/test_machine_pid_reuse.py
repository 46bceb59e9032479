"""Issue 12, item 5: a journal whose PID now belongs to an unrelated live process was skipped.

A journal now records the start time of its process (field 22 of ``/proc/PID/stat``, read
through the root: the fake tree here) with the PID; a journal whose PID is alive with another
start time is an orphan: restored, and said so.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from machine_faults import machine, read_json, state

from fake_machine import put, snapshot
from steadybench.cli import main
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.runner.runner import Runner, Stage
from steadybench.runner.stop import build_stop_condition
from steadybench.system.actions import TuneAction
from steadybench.system.journal import Journal
from steadybench.system.process import start_time
from steadybench.system.sysfs import SysRoot
from steadybench.system.tuning import tune


def fake_stat(root, pid: int, started: int, name: str = "python3") -> None:
    """``/proc/PID/stat`` in the fake tree with ``starttime`` (field 22) = ``started``."""
    after_name = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", "5", "3", "0", "0",
                  "20", "0", "1", "0", str(started), "1000", "100"]
    put(root, f"proc/{pid}/stat", f"{pid} ({name}) {' '.join(after_name)}\n")


@pytest.fixture
def live_pid():
    """The PID of a live, unrelated process (it waits on its stdin)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    yield proc.pid
    proc.stdin.close()
    proc.wait()


def test_start_time_is_field_22_even_with_odd_names(tmp_path):
    root = machine(tmp_path)
    fake_stat(root, 77, 123456, name="we ird) (name")
    assert start_time(SysRoot(root), 77) == 123456
    assert start_time(SysRoot(root), 78) is None


def test_a_tuned_run_records_its_start_time(tmp_path, monkeypatch):
    root = machine(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fake_stat(root, os.getpid(), 4242)
    seen = []
    runner = Runner(build_stop_condition(runs=2))
    runner.add_action(Stage.BEFORE_BENCHMARK, TuneAction(SysRoot(root)))

    def work() -> None:
        if not seen:
            seen.append(read_json(state(tmp_path) / f"run-{os.getpid()}.json"))

    runner.execute(CallableImplementation(work, "w"), Parameters())
    assert seen[0]["pid"] == os.getpid() and seen[0]["start_time"] == 4242


@pytest.mark.parametrize("recorded,now,restored", [(111, 777, True), (777, 777, False)],
                         ids=["pid-reused", "still-running"])
def test_reused_pid_journal_is_restored(tmp_path, monkeypatch, capsys, live_pid, recorded, now,
                                        restored):
    root = machine(tmp_path)
    fake_stat(root, live_pid, now)  # the PID is alive; it started at `now`
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = state(tmp_path) / f"run-{live_pid}.json"
    tune(SysRoot(root), path)  # a run that died with the machine tuned
    journal = Journal.load(path)
    journal.pid, journal.start_time = live_pid, recorded
    journal.save()
    tuned = snapshot(root)
    assert main(["--root", str(root), "system", "reset"]) == 0
    out = capsys.readouterr().out
    if restored:
        assert snapshot(root) == before and not path.exists()
        assert f"orphaned: {path}: pid {live_pid} now belongs to another process" in out
    else:
        assert snapshot(root) == tuned and path.exists()
        assert f"skipped: {path}: run {live_pid} is still running" in out
