"""Issue 12, items 1 and 7: signals during a tuned run and during its restore.

Item 1: signals were masked only in the thread restoring; one delivered to another thread made
the main thread raise part-way through the restore, leaving files tuned and the journal behind.
Item 7: SIGTERM during a tuned run exited 130 "interrupted" instead of 143 "terminated".

The in-process tests send the signal from a helper thread with ``signal.raise_signal`` (the C
handler runs in that thread before the call returns; Python then runs the handler in the main
thread) at an exact point of the restore: the writer does it before file k. The command-line
tests pause the child's restore before file k with ``STEADYBENCH_TEST_RESTORE_GATE``: it creates
a marker, the test sends the signals, and the child goes on once they have all arrived.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path

import pytest
from machine_faults import (
    child_env,
    machine,
    preset,
    read_json,
    run_journals,
    sampling_bench,
    start,
    wait_for,
    wait_or_kill,
)

from fake_machine import snapshot
from steadybench.arrivals import arrivals
from steadybench.model.implementation import CallableImplementation
from steadybench.model.parameters import Parameters
from steadybench.model.results import CaseResult
from steadybench.runner.actions import RunContext
from steadybench.runner.stop import RunState
from steadybench.system import signals
from steadybench.system.actions import TuneAction
from steadybench.system.signals import Terminated
from steadybench.system.sysfs import SysRoot
from steadybench.system.testhooks import ENV as GATE_ENV
from steadybench.system.writer import write_file
from steadybench.testing import SimulatedClock


def _ctx() -> RunContext:
    clock = SimulatedClock()
    return RunContext(CallableImplementation(lambda: None, "w"), Parameters(),
                      CaseResult("b", "w"), RunState(), clock, clock.sleep)


def _signal_from_another_thread(signum: int) -> None:
    """Deliver ``signum`` to a thread that is not the one restoring (it blocks nothing)."""
    thread = threading.Thread(target=signal.raise_signal, args=(signum,))
    thread.start()
    thread.join()


def _signalling_writer(at: int, signums: list[int]):
    """A writer that, before its ``at``-th write, has ``signums`` delivered."""
    calls = {"n": 0}

    def write(path: Path, data: bytes) -> None:
        if calls["n"] == at:
            for signum in signums:
                _signal_from_another_thread(signum)
        calls["n"] += 1
        write_file(path, data)

    return write


@pytest.fixture
def handlers():
    """The handlers of a process in the foreground (SIGINT raising KeyboardInterrupt, SIGTERM
    and SIGHUP at their defaults) whatever the suite inherited — a suite started as a script's
    background job or under nohup inherits SIGINT/SIGHUP ignored; checked to be back after the
    test, and the inherited ones put back whatever happened."""
    inherited = {s: signal.getsignal(s) for s in signals.GUARDED_SIGNALS}
    foreground = {s: (signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
                  for s in signals.GUARDED_SIGNALS}
    for sig, handler in foreground.items():
        signal.signal(sig, handler)
    yield foreground
    after = {s: signal.getsignal(s) for s in signals.GUARDED_SIGNALS}
    while signals._STATE.owners:
        with contextlib.suppress(KeyboardInterrupt):
            signals.uninstall()
    for sig, handler in inherited.items():
        signal.signal(sig, handler)
    assert after == foreground


def _must_not_raise(what: str, fn, *args) -> None:
    """Run ``fn``; a KeyboardInterrupt is this test failing (not pytest being interrupted)."""
    try:
        fn(*args)
    except KeyboardInterrupt as exc:
        pytest.fail(f"{what} raised {exc!r}")


def _tuned(tmp_path: Path) -> tuple[Path, dict, TuneAction, RunContext]:
    root = machine(tmp_path)
    before = snapshot(root)
    action = TuneAction(SysRoot(root), journal=tmp_path / "state" / "run.json")
    ctx = _ctx()
    action(ctx)
    assert snapshot(root) != before and len(ctx.case.extra["machine"]["tuned"]) == 5
    return root, before, action, ctx


@pytest.mark.parametrize("signums", [[signal.SIGTERM], [signal.SIGINT, signal.SIGTERM],
                                     [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]],
                         ids=["TERM", "INT+TERM", "INT+TERM+HUP"])
def test_signals_in_another_thread_during_the_restore_wait_for_its_end(tmp_path, handlers,
                                                                      signums):
    root, before, action, ctx = _tuned(tmp_path)
    action.write = _signalling_writer(2, signums)
    with pytest.raises(KeyboardInterrupt) as caught:
        action.close(ctx)
    assert snapshot(root) == before  # all 5 files back, although signals came after 2
    assert not (tmp_path / "state" / "run.json").exists()
    assert isinstance(caught.value, Terminated)  # SIGTERM is honoured after the restore


def test_signals_while_unwinding_do_not_skip_the_restore(tmp_path, handlers):
    """SIGINT during the benchmark, then SIGTERM and SIGINT while the KeyboardInterrupt unwinds
    towards the restore: the later ones must not raise on the way (they did, so the restore in
    the runner's ``finally`` was skipped)."""
    root, before, action, ctx = _tuned(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        _signal_from_another_thread(signal.SIGINT)
        for _ in range(1000):  # the handler runs at the next bytecode, in this thread
            pass
    # unwinding: recorded, not raised
    _must_not_raise("SIGTERM while unwinding", _signal_from_another_thread, signal.SIGTERM)
    _must_not_raise("SIGINT while unwinding", _signal_from_another_thread, signal.SIGINT)
    action.write = _signalling_writer(1, [signal.SIGTERM])
    # an exception is already on its way: nothing more is raised
    _must_not_raise("the restore", action.close, ctx)
    assert snapshot(root) == before
    assert signals.pending() == []


class _Finalized:
    """An object whose weakref callback is where the signal's handler runs."""


def test_a_signal_whose_exception_python_swallowed_is_delivered_again(handlers):
    """A Python signal handler runs at the main thread's next bytecode, which may be inside a
    weakref callback, where an exception is only printed ("Exception ignored in ...": seen in
    importlib's module-lock callback, in `test_signal_restores` under load). The delivery is
    then repeated at the next bytecode outside it; before, the Terminated was lost and the
    run went on (the test waited 30 s for a child that never stopped). It is sent again from a
    helper thread; the test waits for it, bounded."""
    import sys
    import weakref

    def callback(_ref) -> None:
        signal.raise_signal(signal.SIGTERM)  # the handler runs in this callback...
        for _ in range(1000):
            pass

    seen: list[object] = []
    saved = sys.unraisablehook
    sys.unraisablehook = seen.append  # what the guard finds there and must keep serving
    try:
        signals.install()
        try:
            before = arrivals()
            with pytest.raises(Terminated):
                obj = _Finalized()
                ref = weakref.ref(obj, callback)
                del obj
                deadline = time.monotonic() + 10  # bounded: sent again 1 ms after the callback
                while time.monotonic() < deadline:  # ... and handled here, where it propagates
                    time.sleep(0.001)
            assert arrivals() == before + 1  # one signal, counted once
            assert ref() is None and seen == []
        finally:
            signals.uninstall()
        assert sys.unraisablehook == seen.append  # put back
    finally:
        sys.unraisablehook = saved


def test_signal_during_the_writes_is_honoured_after_them(tmp_path, handlers):
    root = machine(tmp_path)
    before = snapshot(root)
    action = TuneAction(SysRoot(root), journal=tmp_path / "state" / "run.json",
                        write=_signalling_writer(2, [signal.SIGINT]))
    ctx = _ctx()
    with pytest.raises(KeyboardInterrupt):
        action(ctx)
    assert len(read_json(tmp_path / "state" / "run.json")["entries"]) == 5  # all written
    _must_not_raise("the restore", action.close, ctx)
    assert snapshot(root) == before


# ---------------------------------------------------------------------------- command line
def _tuned_run(tmp_path: Path, mode: list[str], runs: str, gate: str | None = None):
    """Start a tuned ``steadybench run``; returns the root, its snapshot before tuning, the
    sampling marker, the process and its stderr file."""
    root = machine(tmp_path)
    before = snapshot(root)
    script, marker = sampling_bench(tmp_path)
    stderr = tmp_path / "stderr.txt"
    extra = {GATE_ENV: gate} if gate else {}
    proc = start(["--root", str(root), "run", str(script), "--preset", str(preset(tmp_path)),
                  *mode, "--runs", runs, "--time-limit", "3600", "--json",
                  str(tmp_path / "r.json")], child_env(tmp_path, **extra), stderr)
    return root, before, marker, proc, stderr


@pytest.mark.parametrize("mode,signum,status,word", [
    (["--in-process"], signal.SIGTERM, 143, "terminated"),
    (["-p", "2"], signal.SIGTERM, 143, "terminated"),
    (["--in-process"], signal.SIGINT, 130, "interrupted"),
], ids=["TERM-in-process", "TERM-workers", "INT-in-process"])
def test_signal_during_a_tuned_run_exit_status(tmp_path, mode, signum, status, word):
    """Item 7: SIGTERM exits 143 "terminated", SIGINT 130; the machine is restored and the
    partial results are written."""
    root, before, marker, proc, stderr = _tuned_run(tmp_path, mode, "100000")
    wait_for(marker.exists, proc, "sampling", stderr)
    assert snapshot(root) != before  # tuned while measuring
    proc.send_signal(signum)
    code = wait_or_kill(proc, stderr)
    err = stderr.read_text()
    assert code == status and word in err and "Traceback" not in err, err
    assert snapshot(root) == before and run_journals(tmp_path) == []
    assert read_json(tmp_path / "r.json")["interrupted"] is True


@pytest.mark.parametrize("names,status,word", [("TERM", 143, "terminated"),
                                               ("INT,TERM", 143, "terminated"),
                                               ("INT", 130, "interrupted")])
def test_signals_during_the_restore_at_the_end_of_a_tuned_run(tmp_path, names, status, word):
    """Items 1 and 7: the run ends normally, the restore pauses before its third file, the
    signals arrive (in whatever thread), the restore completes and only then are they
    honoured."""
    gate = tmp_path / "gate"
    root, before, _marker, proc, stderr = _tuned_run(tmp_path, ["--in-process"], "3",
                                                     gate=f"2:{names}:{gate}")
    wait_for(gate.exists, proc, "the paused restore", stderr)
    assert snapshot(root) != before  # 2 of 5 files restored so far
    for name in names.split(","):
        proc.send_signal(getattr(signal, f"SIG{name}"))
    code = wait_or_kill(proc, stderr)
    err = stderr.read_text()
    assert snapshot(root) == before, err
    assert run_journals(tmp_path) == []
    assert code == status and word in err and "Traceback" not in err, err
    assert "system reset" not in err


def test_interrupt_then_signals_during_the_restore(tmp_path):
    """Ctrl-C during the benchmark, then SIGTERM and SIGHUP while it restores: restored, and
    SIGTERM decides the status."""
    gate = tmp_path / "gate"
    root, before, marker, proc, stderr = _tuned_run(tmp_path, ["--in-process"], "100000",
                                                    gate=f"1:TERM,HUP:{gate}")
    wait_for(marker.exists, proc, "sampling", stderr)
    proc.send_signal(signal.SIGINT)
    wait_for(gate.exists, proc, "the paused restore", stderr)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGHUP)
    code = wait_or_kill(proc, stderr)
    err = stderr.read_text()
    assert snapshot(root) == before and run_journals(tmp_path) == [], err
    assert code == 143 and "terminated" in err and "Traceback" not in err, err
    assert read_json(tmp_path / "r.json")["interrupted"] is True


def test_an_interrupt_that_gets_through_is_retried_then_reported(tmp_path, handlers):
    """Where no handler can hold a signal back, the restore (idempotent) is run again; if it
    can never finish, the journal stays and the case says to run ``system reset``."""
    root, before, action, ctx = _tuned(tmp_path)
    calls = {"n": 0}

    def once(path: Path, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        write_file(path, data)

    action.write = once
    with pytest.raises(KeyboardInterrupt):
        action.close(ctx)
    assert snapshot(root) == before and not (tmp_path / "state" / "run.json").exists()

    root, before, action, ctx = _tuned(tmp_path / "again")

    def never(path: Path, data: bytes) -> None:
        raise KeyboardInterrupt

    action.write = never
    with pytest.raises(KeyboardInterrupt):
        action.close(ctx)
    journal = tmp_path / "again" / "state" / "run.json"
    assert len(read_json(journal)["entries"]) == 5  # everything still journaled
    failed = ctx.case.extra["machine"]["restore_failed"]
    assert "steadybench system reset" in failed and str(journal) in failed
