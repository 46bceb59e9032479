"""Independent rounds: one case as R forked worker processes."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import pytest

import steadybench as sb
from steadybench.errors import ConfigurationError
from steadybench.methods import make_method
from steadybench.model.parameters import Parameters
from steadybench.model.results import Results
from steadybench.processors import finalize_case
from steadybench.runner import processes as procmod
from steadybench.runner.processes import process_spread
from steadybench.testing import SimulatedClock

WORK_NS = 100_000


def _run(runner, fn, name="work"):
    case = runner.execute(sb.CallableImplementation(fn, name=name), Parameters())
    finalize_case(case, (), runner.method, 0.95)
    return case


def test_pooled_samples_and_per_process_estimates():
    clock = SimulatedClock(read_cost_ns=8_500, jitter_ns=100)
    runner = sb.Runner(sb.Runs(40), warmup=2, clock=clock, sleep=clock.sleep,
                       method=make_method("linefit"), processes=3)
    case = _run(runner, clock.workload(WORK_NS))
    assert len(case.processes) == 3
    assert [p["n"] for p in case.processes] == [40, 40, 40]
    assert len({p["pid"] for p in case.processes}) == 3
    assert os.getpid() not in {p["pid"] for p in case.processes}
    assert case.n == 120 and case.count("warmup") == 6
    assert len(case.extra["fit"]["x"]) == 120
    est = case.estimate
    assert est["ci_low"] <= WORK_NS / 1e9 <= est["ci_high"]
    for p in case.processes:
        assert p["ci_low"] <= WORK_NS / 1e9 <= p["ci_high"]
    assert est["processes"] == 3
    assert est["between_process_sd"] is not None and est["within_process_se"] > 0
    assert est["processes_disagree"] is False
    assert "3 of 3 processes" in case.stop_reason
    assert multiprocessing.active_children() == []
    data = json.loads(json.dumps(Results(cases=[case]).to_dict()))
    back = Results.from_dict(data).cases[0]
    assert back.processes == case.processes and back.estimate == case.estimate


def test_processes_that_differ_are_flagged():
    clock = SimulatedClock(read_cost_ns=1_000, jitter_ns=50)

    def work():  # each process settles on its own speed
        clock.advance(WORK_NS + (os.getpid() % 13) * 2_000 + 1_000)

    runner = sb.Runner(sb.Runs(30), clock=clock, method=make_method("batch", executions=10),
                       processes=4)
    case = _run(runner, work)
    values = [p["value"] for p in case.processes]
    if len(set(values)) == 1:
        pytest.skip("pids happened to give identical speeds")
    assert case.estimate["spread_ratio"] > 3 and case.estimate["processes_disagree"]


def test_process_spread_formula():
    procs = [{"value": v, "ci_low": v - 1.96, "ci_high": v + 1.96} for v in (10.0, 12.0, 14.0)]
    out = process_spread(procs, {"confidence": 0.95})
    assert out["between_process_sd"] == pytest.approx(2.0)
    assert out["between_process_mean"] == pytest.approx(12.0)
    assert out["within_process_se"] == pytest.approx(1.0, rel=1e-3)
    assert out["spread_ratio"] == pytest.approx(2.0, rel=1e-3)
    lo, hi = out["between_process_ci"]
    assert hi - 12.0 == pytest.approx(4.302653 * 2.0 / 3 ** 0.5, rel=1e-5)


def test_worker_errors_are_reported():
    def boom():
        raise ValueError("bad input")

    runner = sb.Runner(sb.Runs(5), clock=SimulatedClock(read_cost_ns=10), processes=2)
    case = runner.execute(sb.CallableImplementation(boom, name="boom"), Parameters())
    assert any("process 0" in e and "bad input" in e for e in case.errors)
    assert case.n == 0
    assert multiprocessing.active_children() == []


def test_invalid_process_count():
    with pytest.raises(ConfigurationError, match="processes"):
        sb.Runner(processes=0)


def test_ctrl_c_in_worker_stops_and_keeps_partial():
    calls = {"n": 0}

    def work():
        calls["n"] += 1
        if calls["n"] == 7:
            raise KeyboardInterrupt

    runner = sb.Runner(sb.Runs(50), clock=SimulatedClock(read_cost_ns=10), processes=3)
    with pytest.raises(KeyboardInterrupt):
        runner.execute(sb.CallableImplementation(work, name="w"), Parameters())
    case = runner.last_case
    assert case.interrupted and len(case.processes) == 1 and case.processes[0]["interrupted"]
    assert case.n == 6
    assert multiprocessing.active_children() == []


def test_ctrl_c_in_parent_leaves_no_children(monkeypatch):
    monkeypatch.setattr(procmod, "INTERRUPT_GRACE_S", 0.1)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    runner = sb.Runner(sb.Runs(1000), processes=2, time_limit=30)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            runner.execute(sb.CallableImplementation(lambda: time.sleep(0.01), name="slow"),
                           Parameters())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert runner.last_case is not None and runner.last_case.interrupted
    assert multiprocessing.active_children() == []
