"""Issue 12, item 2: overlapping tuned runs restored out of order.

A ``managed`` run overlapped by one whose preset sets ``governor=schedutil`` ended with the
originally ``powersave`` governors at ``performance``. Now a tuned run holds the machine's
tuning lock from before it tunes until after its last restore; a second tuned run refuses with a
line naming the holder, or waits with ``--wait-lock``; untuned runs are not blocked, and
``system tune`` and ``system reset`` respect the lock too.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from machine_faults import (
    bench,
    child_env,
    governors,
    machine,
    preset,
    run_journals,
    sampling_bench,
    start,
    state,
    wait_for,
    wait_or_kill,
)

from fake_machine import snapshot
from steadybench.cli import main
from steadybench.system.lock import LockBusy, TuningLock, lock_path
from steadybench.system.sysfs import SysRoot

QUICK = """
    import steadybench as sb

    @sb.benchmark
    def quick():
        return lambda: None
"""


def _holder(tmp_path: Path, root: Path, release: Path | None = None):
    """A tuned run (governor performance) measuring until it is signalled or ``release``
    exists; returns once it is measuring (tuned, lock held)."""
    script, marker = sampling_bench(tmp_path, "holder.py", release)
    stderr = tmp_path / "holder.err"
    proc = start(["--root", str(root), "run", str(script), "--preset",
                  str(preset(tmp_path, name="managed-like")), "--in-process", "--runs",
                  "100000" if release is None else "3", "--time-limit", "3600"],
                 child_env(tmp_path), stderr)
    wait_for(marker.exists, proc, "the holder measuring", stderr)
    return proc, stderr


def test_second_tuned_run_refuses_naming_the_holder(tmp_path, monkeypatch, capsys):
    root = machine(tmp_path, governors="performance schedutil powersave")
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    holder, holder_err = _holder(tmp_path, root)
    try:
        assert governors(root) == ["performance"] * 4
        quick = bench(tmp_path, QUICK, "quick.py")
        code = main(["--root", str(root), "run", str(quick), "--preset",
                     str(preset(tmp_path, "schedutil", "schedutil")), "--runs", "3", "-q"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, err
        assert "another tuned run holds the tuning lock" in err[0]
        assert f"pid {holder.pid} (steadybench " in err[0] and " run " in err[0]
        assert "since " in err[0] and "--wait-lock" in err[0]
        assert governors(root) == ["performance"] * 4  # the second run changed nothing
        # an untuned run is not blocked
        assert main(["--root", str(root), "run", str(quick), "--runs", "3", "-q"]) == 0
        # neither system tune nor system reset touch the machine under the holder
        for command in (["system", "tune", "--governor", "schedutil"], ["system", "reset"]):
            assert main(["--root", str(root), *command]) == 2
            assert "another tuned run holds the tuning lock" in capsys.readouterr().err
        assert governors(root) == ["performance"] * 4
    finally:
        holder.send_signal(signal.SIGINT)
        wait_or_kill(holder, holder_err)
    assert snapshot(root) == before  # powersave again
    assert run_journals(tmp_path) == [] and not lock_path(SysRoot(root)).exists()


def test_wait_lock_waits_then_tunes_and_restores_in_order(tmp_path):
    """The issue's scenario: the schedutil run waits for the performance run, then tunes from
    the original state, so the machine ends as it began."""
    root = machine(tmp_path, governors="performance schedutil powersave")
    before = snapshot(root)
    release = tmp_path / "release"
    holder, holder_err = _holder(tmp_path, root, release)
    quick = bench(tmp_path, QUICK, "quick.py")
    waiter_err = tmp_path / "waiter.err"
    waiter = start(["--root", str(root), "run", str(quick), "--preset",
                    str(preset(tmp_path, "schedutil", "schedutil")), "--in-process", "--runs",
                    "3", "--wait-lock", "--json", str(tmp_path / "w.json")],
                   child_env(tmp_path), waiter_err)
    wait_for(lambda: "waiting: another tuned run holds the tuning lock" in waiter_err.read_text(),
             waiter, "the waiting line", waiter_err)
    assert f"pid {holder.pid}" in waiter_err.read_text()
    assert governors(root) == ["performance"] * 4
    release.touch()  # the holder finishes its 3 runs and restores
    assert wait_or_kill(holder, holder_err) == 0, holder_err.read_text()
    assert wait_or_kill(waiter, waiter_err) == 0, waiter_err.read_text()
    data = (tmp_path / "w.json").read_text()
    assert "scaling_governor: powersave -> schedutil" in data  # tuned from the original state
    assert snapshot(root) == before
    assert run_journals(tmp_path) == []


def test_lock_is_reentrant_released_by_death_and_per_root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    one, other = SysRoot(machine(tmp_path, "a")), SysRoot(machine(tmp_path, "b"))
    lock = TuningLock(one)
    with lock.held(), TuningLock(one).held(), TuningLock(other).held():
        assert lock_path(one) != lock_path(other)
        assert oct(os.stat(lock_path(one)).st_mode & 0o777) == "0o600"
    assert not lock_path(one).exists() and not lock.is_held
    # a holder killed with SIGKILL holds nothing: the kernel drops an flock with its owner
    stderr = tmp_path / "k.err"
    proc = start(["--root", str(one.root), "run", str(sampling_bench(tmp_path)[0]),
                  "--preset", str(preset(tmp_path)), "--in-process", "--runs", "100000"],
                 child_env(tmp_path), stderr)
    wait_for(sampling_bench(tmp_path)[1].exists, proc, "sampling", stderr)
    try:
        TuningLock(one).acquire()
        raise AssertionError("the lock of a live tuned run was taken")
    except LockBusy as busy:
        assert f"pid {proc.pid}" in str(busy)
    proc.kill()
    proc.wait()
    with TuningLock(one).held():
        pass
    assert state(tmp_path).stat().st_mode & 0o777 == 0o700


def test_concurrent_tuning_tells_the_truth(tmp_path, monkeypatch, capsys):
    """Issue 27 item 11: ``system tune`` during a tuned run read the machine the run had tuned,
    said there was nothing to change and exited 0 (the run's restore then undid it); ``exec
    --preset`` took no lock, measured on after the other run restored and recorded its tuning
    as its own. Both now refuse naming the holder; a dry run says whose settings it reads."""
    root = machine(tmp_path, governors="performance schedutil powersave")
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    holder, holder_err = _holder(tmp_path, root)
    try:
        assert governors(root) == ["performance"] * 4
        assert main(["--root", str(root), "system", "tune"]) == 2
        err = capsys.readouterr().err
        assert "another tuned run holds the tuning lock" in err and f"pid {holder.pid}" in err
        assert main(["--root", str(root), "system", "tune", "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert f"note: another tuned run holds the tuning lock (pid {holder.pid}" in out
        code = main(["--root", str(root), "exec", "-q", "--runs", "2", "--no-correction",
                     "--preset", str(preset(tmp_path)), "--", "true"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1, err
        assert f"pid {holder.pid}" in err[0] and "--wait-lock" in err[0]
        assert governors(root) == ["performance"] * 4
    finally:
        holder.send_signal(signal.SIGINT)
        wait_or_kill(holder, holder_err)
    assert snapshot(root) == before


def test_system_tune_wait_lock_tunes_the_restored_machine(tmp_path, monkeypatch):
    root = machine(tmp_path, governors="performance schedutil powersave")
    before = snapshot(root)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    release = tmp_path / "release"
    holder, holder_err = _holder(tmp_path, root, release)
    tuner_err = tmp_path / "tuner.err"
    tuner = start(["--root", str(root), "system", "tune", "--wait-lock"], child_env(tmp_path),
                  tuner_err)
    wait_for(lambda: "waiting: another tuned run holds the tuning lock" in tuner_err.read_text(),
             tuner, "the waiting line", tuner_err)
    release.touch()
    assert wait_or_kill(holder, holder_err) == 0, holder_err.read_text()
    assert wait_or_kill(tuner, tuner_err) == 0, tuner_err.read_text()
    assert governors(root) == ["performance"] * 4  # tuned after the holder restored
    assert main(["--root", str(root), "system", "reset"]) == 0  # its journal saved powersave
    assert snapshot(root) == before
