"""Issue 12, item 8: Ctrl-C while the outputs were written lost some of them.

Once the outputs start being written, every requested output is written, and only then is the
signal honoured (status 130 after SIGINT, 143 after SIGTERM). The child is paused between its
first and second output by a test-only pipe (``STEADYBENCH_TEST_PAUSE_OUTPUTS``): it says
``paused``, the test signals it, then lets it go on, so the signal lands during the writing,
never by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from child_process import default_sigint
from steadybench.output.deferral import DeferredSignals
from steadybench.output.writing import PAUSE_ENV

BENCH = textwrap.dedent("""
    import steadybench as sb

    @sb.benchmark(n=[1, 2])
    def tiny(n):
        return lambda: None
""")

#: measures a few runs, then Ctrl-C's itself: the run is interrupted during the measurements
SELF_INTERRUPTING = textwrap.dedent("""
    import os, signal
    import steadybench as sb

    calls = 0

    def run():
        global calls
        calls += 1
        if calls == 20:
            os.kill(os.getpid(), signal.SIGINT)

    @sb.benchmark
    def interrupted():
        return run
""")

OUTPUTS = {"--json": "r.json", "--xml": "r.xml", "--csv": "r.csv", "--markdown": "r.md",
           "--report": "r.html"}
STALE = "stale output of a previous run\n"


def _run_paused(tmp_path: Path, bench_text: str, signum: int) -> tuple[int, str, dict]:
    """Run ``steadybench run`` with every output, signal it while it is paused after its first
    output, and return its status, its stderr and the outputs' texts."""
    bench = tmp_path / "bench.py"
    bench.write_text(bench_text)
    for name in OUTPUTS.values():
        (tmp_path / name).write_text(STALE)
    paused_r, paused_w = os.pipe()
    go_r, go_w = os.pipe()
    env = {**os.environ, PAUSE_ENV: f"{paused_w},{go_r}"}
    args = [str(Path(sys.executable).with_name("steadybench")), "run", str(bench),
            "--in-process", "-n", "3", "-q"]
    for option, name in OUTPUTS.items():
        args += [option, str(tmp_path / name)]
    err_path = tmp_path / "stderr.txt"
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(args, env=env, pass_fds=(paused_w, go_r), stdout=subprocess.DEVNULL,
                                stderr=err_file, preexec_fn=default_sigint)
    os.close(paused_w)
    os.close(go_r)
    try:
        with os.fdopen(paused_r, "rb") as paused:
            said = paused.readline()  # EOF if the child ended without pausing
        if said != b"paused\n":
            proc.wait()
            pytest.fail(f"steadybench did not pause ({proc.returncode}): {err_path.read_text()}")
        proc.send_signal(signum)
        os.write(go_w, b"go")
    finally:
        os.close(go_w)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    texts = {option: (tmp_path / name).read_text(encoding="utf-8")
             for option, name in OUTPUTS.items()}
    return proc.returncode, err_path.read_text(), texts


def _assert_all_new(texts: dict[str, str]) -> dict:
    stale = [option for option, text in texts.items() if text == STALE]
    assert not stale, f"left as the previous run's version: {stale}"
    ET.fromstring(texts["--xml"])
    assert texts["--csv"].startswith("benchmark,") and texts["--markdown"].startswith("# ")
    assert "<html" in texts["--report"]
    return json.loads(texts["--json"])


@pytest.mark.parametrize(("signum", "status", "word"), [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "terminated"),
    (signal.SIGHUP, 129, "hung up"),
])
@pytest.mark.slow
def test_signal_while_writing_outputs_writes_them_all(tmp_path, signum, status, word):
    code, err, texts = _run_paused(tmp_path, BENCH, signum)
    assert code == status, err
    assert word in err and "Traceback" not in err
    data = _assert_all_new(texts)
    assert len(data["benchmarks"]) == 2 and data["interrupted"] is False


def test_second_ctrl_c_while_writing_partial_results_writes_them_all(tmp_path):
    """Ctrl-C during the measurements, then again while the partial results are written."""
    code, err, texts = _run_paused(tmp_path, SELF_INTERRUPTING, signal.SIGINT)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err
    data = _assert_all_new(texts)
    assert data["interrupted"] is True and data["benchmarks"][0]["interrupted"] is True


def test_hangup_while_measuring_writes_the_partial_results(tmp_path):
    """Found by benchmarks/fault_matrix.py: SIGHUP (a closed terminal) during a run killed
    steadybench at once, every output lost (or, in a tuned run, reported as Ctrl-C). Now it
    ends the run like SIGTERM: partial results written, status 129 (128 + SIGHUP)."""
    code, err, texts = _run_paused(tmp_path, SELF_INTERRUPTING.replace("SIGINT", "SIGHUP"),
                                   signal.SIGHUP)
    assert code == 129, err
    assert "hung up" in err and "Traceback" not in err
    data = _assert_all_new(texts)
    assert data["interrupted"] is True


def test_deferred_signal_is_honoured_after_the_block():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt), DeferredSignals() as deferral:
            os.kill(os.getpid(), signal.SIGINT)
            done.append("after the signal")
            with DeferredSignals():  # nested: does nothing
                done.append("nested")
            assert deferral.received == [signal.SIGINT]
            done.append("end of block")
        assert done == ["after the signal", "nested", "end of block"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("command", ["exec", "iters"])
def test_second_signal_before_the_partial_results_are_written(tmp_path, monkeypatch, command):
    """Found by benchmarks/fault_matrix.py: exec (and iters, sweep) caught the first
    Ctrl-C, then a second signal while the partial results were prepared ended the command
    before any output was written; every stale file stayed. Now signals are held back from
    the moment the session ends or is interrupted until the outputs are written."""
    from steadybench.cli import main
    from steadybench.cli.programs import iters as programs_cli
    from steadybench.programs import exec as exec_module
    from steadybench.programs import iters as iters_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # the first Ctrl-C, during the measurements

    if command == "exec":
        monkeypatch.setattr(exec_module.ExecSession, "run", interrupted)
        original = exec_module.ExecSession.results

        def results_then_sigterm(self, *args, **kwargs):
            signal.raise_signal(signal.SIGTERM)  # the second signal, before the outputs
            return original(self, *args, **kwargs)

        monkeypatch.setattr(exec_module.ExecSession, "results", results_then_sigterm)
    else:
        monkeypatch.setattr(iters_module, "sweep_iters", interrupted)
        environment = programs_cli.capture_environment

        def environment_then_sigterm():
            signal.raise_signal(signal.SIGTERM)  # the second signal, before the outputs
            return environment()

        monkeypatch.setattr(programs_cli, "capture_environment", environment_then_sigterm)
    outputs = {"--json": "r.json", "--csv": "r.csv", "--markdown": "r.md"}
    for name in outputs.values():
        (tmp_path / name).write_text(STALE)
    args = [command, "-q", "--runs", "3", "--no-correction"] if command == "exec" else \
        [command, "-q"]
    for option, name in outputs.items():
        args += [option, str(tmp_path / name)]
    code = main([*args, "--", "true"])
    assert code == 143
    texts = {o: (tmp_path / n).read_text() for o, n in outputs.items()}
    assert all(text != STALE for text in texts.values()), texts
    assert json.loads(texts["--json"])["interrupted"] is True


def test_interrupt_half_way_through_recording_a_run(monkeypatch):
    """Found by benchmarks/fault_matrix.py: SIGTERM landing inside ``CaseResult.add_run``
    (after the status was appended, before the times) left the columns of different lengths,
    and writing the partial results failed with "IndexError: array index out of range". The
    interrupted loop now drops the half-recorded run."""
    import steadybench as sb
    from steadybench.methods import make_method
    from steadybench.model.implementation import CallableImplementation
    from steadybench.model.parameters import Parameters
    from steadybench.model.results import CaseResult
    from steadybench.processors import finalize_case
    from steadybench.testing import SimulatedClock

    original = CaseResult.add_run
    calls = [0]

    def add_run_cut_short(self, status, values):
        calls[0] += 1
        if calls[0] == 50:
            self.status.append(status)  # half of add_run, then the signal
            raise KeyboardInterrupt
        original(self, status, values)

    monkeypatch.setattr(CaseResult, "add_run", add_run_cut_short)
    clock = SimulatedClock(read_cost_ns=50, jitter_ns=10, seed=1)
    runner = sb.Runner(sb.Runs(1000), clock=clock, sleep=clock.sleep,
                       method=make_method("direct"))
    with pytest.raises(KeyboardInterrupt):
        runner.execute(CallableImplementation(clock.workload(1000), "w"), Parameters())
    case = runner.last_case
    assert case is not None and case.interrupted
    assert {len(case.status), len(case.outlier), *map(len, case.metrics.values())} == {49}
    finalize_case(case, (), runner.method, 0.95)  # the partial results can be summarised
    assert case.estimate.ok
