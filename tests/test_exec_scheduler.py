"""ExecSession with a fake runner on a simulated clock: interleaving, stop conditions, failures,
start-up correction, independent executions and best-of, partial results after Ctrl-C."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.errors import ConfigurationError
from steadybench.model.results import RUN_FAILED, RUN_OK, RUN_WARMUP, Results
from steadybench.output.results_io import results_to_json
from steadybench.programs.calibration import Calibration
from steadybench.programs.commands import Command
from steadybench.programs.exec import ExecOptions, ExecSession
from steadybench.programs.process import ProcessRun
from steadybench.runner.stop import ElapsedTime, Runs
from steadybench.testing import SimulatedClock

STARTUP_NS = 1_000_000  # every fake process costs 1 ms to start


class FakeRunner:
    """Runs 'programs' whose cost is read from the command: ``work MS [fail-on-call N]``."""

    def __init__(self, clock: SimulatedClock, drift_ns: int = 0,
                 interrupt_after: int | None = None):
        self.clock = clock
        self.calls: list[list[str]] = []
        self.drift_ns = drift_ns
        self.interrupt_after = interrupt_after
        self.timeout = None
        self.shell = False

    def resolve(self, argv):
        if argv[0] not in ("work", "true", "fail"):
            raise ConfigurationError(f"command not found: {argv[0]}")
        return list(argv)

    def run(self, argv, timeout=None):
        self.calls.append(list(argv))
        if self.interrupt_after is not None and len(self.calls) > self.interrupt_after:
            raise KeyboardInterrupt
        # slow drift of the machine: every call costs a little more than the one before
        extra = self.drift_ns * len(self.calls)
        t0 = self.clock()
        ms = float(argv[1]) if len(argv) > 1 and argv[0] != "true" else 0.0
        self.clock.advance(STARTUP_NS + ms * 1e6 + extra)
        t1 = self.clock()
        code = 0
        if argv[0] == "fail":
            code = 1
        return ProcessRun(wall_ns=t1 - t0, user_time=ms / 1e3, sys_time=0.0, max_rss=None,
                          exit_code=code, stderr_tail="something broke" if code else "")


def fake_calibrate(runner):
    cal = Calibration(["true"], [])
    for _ in range(5):
        cal.samples.append(runner.run(["true"]).wall_ns / 1e9)
    return cal


def session(commands, options, runner=None, param_sets=None):
    runner = runner or FakeRunner(SimulatedClock())
    cmds = [Command.from_line(c) for c in commands]
    return ExecSession(cmds, param_sets or [{}], runner, options, calibrate_fn=fake_calibrate), \
        runner


def test_round_robin_interleaves_run_by_run():
    s, runner = session(["work 2", "work 5"], ExecOptions(stop=Runs(4)))
    results = s.run()
    measured = [c[1] for c in runner.calls if c[0] == "work"]
    assert measured == ["2", "5"] * 4
    # one calibration run after each round
    rounds = [c[0] for c in runner.calls[5:]]
    assert rounds == ["work", "work", "true"] * 4
    a, b = results.cases
    assert a.n == b.n == 4
    assert a.stop_reason == "4 runs done"


def test_random_order_is_seeded_and_still_interleaved():
    orders = []
    for _ in range(2):
        s, runner = session(["work 1", "work 2", "work 3"],
                            ExecOptions(stop=Runs(6), order="random", seed=42, correct=False))
        s.run()
        orders.append([c[1] for c in runner.calls])
    assert orders[0] == orders[1]
    rounds = [orders[0][i:i + 3] for i in range(0, 18, 3)]
    assert all(sorted(r) == ["1", "2", "3"] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # the order changes between rounds


def test_drift_hits_interleaved_commands_alike():
    # Two identical commands on a drifting machine: interleaved, their means differ by far
    # less than the drift over the whole session.
    s, _ = session(["work 3", "work 3.0"], ExecOptions(stop=Runs(50), correct=False),
                   runner=FakeRunner(SimulatedClock(), drift_ns=10_000))
    a, b = s.run().cases
    total_drift = 10_000 * 100 / 1e9
    assert abs(a.stats["mean"] - b.stats["mean"]) < total_drift / 20


def test_each_job_stops_on_its_own_condition():
    # ElapsedTime counts a job's own time: the 10 ms command stops after ~5 runs of 50 ms
    s, _ = session(["work 1", "work 10"], ExecOptions(stop=ElapsedTime(0.05), correct=False))
    fast, slow = s.run().cases
    assert slow.n == 5
    assert fast.n == 25
    assert "elapsed" in fast.stop_reason


def test_hard_time_limit():
    s, _ = session(["work 10"], ExecOptions(stop=Runs(1000), time_limit=0.1, correct=False))
    (case,) = s.run().cases
    assert case.n < 1000
    assert case.stop_reason.startswith("hard limit")
    assert any("hard time limit" in w for w in case.warnings)


def test_warmup_runs_are_recorded_but_not_counted():
    s, runner = session(["work 1"], ExecOptions(stop=Runs(3), warmup=2, correct=False))
    (case,) = s.run().cases
    assert case.status == [RUN_WARMUP, RUN_WARMUP, RUN_OK, RUN_OK, RUN_OK]
    assert case.n == 3


def test_startup_correction_subtracts_the_calibrated_mean():
    s, _ = session(["work 4"], ExecOptions(stop=Runs(10)))
    (case,) = s.run().cases
    assert case.stats["mean"] == pytest.approx(0.004, abs=1e-9)
    assert case.estimate.figure("raw_mean") == pytest.approx(0.005, abs=1e-9)
    assert case.estimate.figure("startup") == pytest.approx(0.001, abs=1e-9)
    assert case.extra["calibration"]["runs"] == 5 + 10  # 5 up front, one per round
    assert case.values("wall_time_raw")[0] == pytest.approx(0.005, abs=1e-9)
    assert not any("dominates" in w for w in case.warnings)


def test_true_gives_zero_and_a_warning():
    s, _ = session(["true"], ExecOptions(stop=Runs(10)))
    (case,) = s.run().cases
    assert case.stats["mean"] == pytest.approx(0.0, abs=1e-9)
    assert case.estimate.figure("raw_mean") == pytest.approx(0.001, abs=1e-9)
    assert any("correction dominates" in w for w in case.warnings)


def test_no_correction_keeps_raw_times():
    s, _ = session(["work 4"], ExecOptions(stop=Runs(3), correct=False))
    (case,) = s.run().cases
    assert case.stats["mean"] == pytest.approx(0.005, abs=1e-9)
    assert case.extra["calibration"] is None


def test_failure_fails_the_benchmark_with_stderr_tail():
    s, _ = session(["fail", "work 1"], ExecOptions(stop=Runs(3), correct=False))
    bad, good = s.run().cases
    assert bad.errors and "exit status 1" in bad.errors[0]
    assert "something broke" in bad.errors[0]
    assert bad.status == [RUN_FAILED]
    assert good.n == 3 and not good.errors


def test_ignore_failure_records_failed_runs_and_goes_on():
    opts = ExecOptions(stop=Runs(3), ignore_failure=True, max_failures=4, correct=False)
    s, _ = session(["fail"], opts)
    (case,) = s.run().cases
    assert case.status == [RUN_FAILED] * 4
    assert case.n == 0
    assert "4 runs failed" in case.stop_reason
    # giving up before the stop condition held fails the benchmark, --ignore-failure or not
    assert len(case.errors) == 1 and case.errors[0].startswith("gave up after 4 failed runs")


def test_parameter_sets_become_cases():
    s, runner = session(["work {ms}"], ExecOptions(stop=Runs(2), correct=False),
                        param_sets=[{"ms": 1}, {"ms": 3}])
    a, b = s.run().cases
    assert a.params == {"ms": 1} and b.params == {"ms": 3}
    assert b.stats["mean"] == pytest.approx(0.004, abs=1e-9)
    assert [c[1] for c in runner.calls] == ["1", "3", "1", "3"]


def test_bad_command_fails_before_anything_runs():
    runner = FakeRunner(SimulatedClock())
    with pytest.raises(ConfigurationError, match="command not found"):
        ExecSession([Command.from_line("work 1"), Command.from_line("nosuch")], [{}], runner,
                    ExecOptions())
    assert runner.calls == []


def test_processes_pool_runs_and_keep_per_process_summaries():
    s, _ = session(["work 2"], ExecOptions(stop=Runs(4), processes=3))
    (case,) = s.run().cases
    assert case.n == 12
    assert len(case.processes) == 3
    assert all(p.n == 4 for p in case.processes)
    assert "best_of" not in case.extra
    # the executions are the independent observations: mean of their means, t interval
    means = [p.spread.mean for p in case.processes]
    est = case.estimate
    assert est.level == "executions" and est.n_executions == 3
    assert est.value == pytest.approx(float(np.mean(means)))
    if np.std(means) > 0:
        low, high = sps.t.interval(0.95, 2, loc=np.mean(means), scale=sps.sem(means))
        assert (est.ci_low, est.ci_high) == (pytest.approx(low), pytest.approx(high))


def test_best_of_reports_the_smallest_mean_and_warns():
    runner = FakeRunner(SimulatedClock(), drift_ns=50_000)  # later executions are slower
    s, _ = session(["work 2"], ExecOptions(stop=Runs(4), processes=3, best_of=True),
                   runner=runner)
    (case,) = s.run().cases
    means = [p.spread.mean for p in case.processes]
    assert case.extra["best_of"]["chosen"] == int(np.argmin(means))
    assert case.stats["mean"] == pytest.approx(min(means))
    assert case.n == 4
    assert "best of 3" in case.method
    assert case.estimate.figure("label").startswith("best of 3")
    assert any("lucky" in w for w in case.warnings)


def test_results_survive_json_roundtrip():
    s, _ = session(["work 2", "fail"], ExecOptions(stop=Runs(3), processes=2))
    results = s.run()
    data = json.loads(results_to_json(results))
    back = Results.from_dict(data)
    assert back.to_dict()["benchmarks"] == json.loads(results_to_json(results))["benchmarks"]
    case = back.cases[0]
    assert case.extra["exit_statuses"] == {"0": 6}
    assert case.units["max_rss"] == "B"
    assert back.context["programs"]["processes"] == 2


def test_ctrl_c_keeps_what_was_measured():
    runner = FakeRunner(SimulatedClock(), interrupt_after=5 + 7)
    s, _ = session(["work 1", "work 2"], ExecOptions(stop=Runs(100)), runner=runner)
    with pytest.raises(KeyboardInterrupt):
        s.run()
    results = s.results(interrupted=True)
    assert results.interrupted
    a, b = results.cases
    assert a.interrupted and b.interrupted
    assert a.n + b.n >= 4
    # the correction was applied to the partial runs too
    assert a.stats["mean"] == pytest.approx(0.001, abs=1e-9)


def test_options_are_checked():
    with pytest.raises(ConfigurationError):
        ExecOptions(order="sideways")
    with pytest.raises(ConfigurationError):
        ExecOptions(processes=0)
    with pytest.raises(ConfigurationError):
        ExecOptions(warmup=-1)


def test_hard_run_limit_caps_every_command():
    s, runner = session(["work 1", "work 2"],
                        ExecOptions(stop=Runs(1000), max_runs=7, warmup=1, correct=False))
    a, b = s.run().cases
    assert a.n == b.n == 7 and a.runs_recorded == 8
    assert a.stop_reason == b.stop_reason == "hard limit: 7 runs"
    assert any("hard run limit (7 runs)" in w for w in a.warnings)
    assert len(runner.calls) == 2 * 8
    assert s.results().context["programs"]["max_runs"] == 7
    with pytest.raises(ConfigurationError, match="max-runs"):
        ExecOptions(max_runs=0)


def test_countermeasures_and_progress_come_from_the_run_loop():
    clock = SimulatedClock()
    s, runner = session(["work 10", "work 20"],
                        ExecOptions(stop=Runs(10), warmup=2, correct=False),
                        runner=FakeRunner(clock))
    before: list[int] = []
    s.before_run = lambda: before.append(len(runner.calls))
    seen: list[tuple[str, int]] = []
    s.progress = lambda case, state: seen.append((case.benchmark, state.runs))
    s.run()
    # before every run of every command, warm-up runs too, right before the process
    assert before == list(range(2 * 12))
    # progress: each job at most every 100 ms on the clock; a round takes 11 + 21 ms, so the
    # second command reports after rounds 4, 8 and 12 (2 of them warm-up)
    assert {name for name, _ in seen} == {"work 10", "work 20"}
    assert [n for name, n in seen if name == "work 20"] == [2, 6, 10]


def test_failure_stops_a_command_in_its_warmup_too():
    s, _ = session(["fail", "work 1"], ExecOptions(stop=Runs(2), warmup=1, correct=False))
    bad, good = s.run().cases
    assert bad.status == [RUN_WARMUP] and bad.n == 0
    assert bad.stop_reason.startswith("run failed: command 'fail' failed: exit status 1")
    assert good.n == 2


def test_time_limit_covers_all_executions_together():
    """--time-limit is the case's limit across its --processes executions (the execution
    layer's one meaning), not a fresh limit per execution: on the simulated clock each
    execution takes 4 runs of 101 ms plus 5 calibration runs and 4 calibration rounds of 1 ms,
    about 0.41 s, so a 1 s limit leaves room for two executions and a cut third."""
    s, runner = session(["work 100"], ExecOptions(stop=Runs(4), processes=5, time_limit=1.0))
    start = runner.clock()
    (case,) = s.run().cases
    spent = (runner.clock() - start) / 1e9
    assert len(case.processes) == 3
    first, second, third = case.processes
    assert first.n == second.n == 4 and third.n < 4
    assert third.stop_reason.startswith("hard limit")  # what was left of the 1 s
    assert any("hard time limit (1 s) after 3 of 5 executions" in w for w in case.warnings)
    assert spent <= 1.0 + 0.101 + 0.01  # at most the run under way when the limit passed
