"""The one run loop (steadybench.runner.loop): stop conditions, warm-up, hard limits, failure
policies and limits, per-run actions, progress and recording — the same whichever executor takes
the samples (in-process, an external command, an ITERS program), on a simulated clock."""

from __future__ import annotations

import pytest

from steadybench.errors import ConfigurationError
from steadybench.methods.base import DirectMethod
from steadybench.model import CallableImplementation
from steadybench.model.results import RUN_FAILED, RUN_OK, RUN_WARMUP, CaseResult
from steadybench.programs.commands import Command
from steadybench.programs.exec import CommandExecutor
from steadybench.programs.iters import ItersExecutor, ItersOptions
from steadybench.programs.process import ProcessRun
from steadybench.runner.actions import FunctionAction
from steadybench.runner.loop import (
    Executor,
    InProcessExecutor,
    LoopSettings,
    OnFailure,
    RunFailure,
    RunLoop,
    Sample,
    describe_exception,
    user_frames,
)
from steadybench.runner.stop import ElapsedTime, OnError, Runs
from steadybench.testing import SimulatedClock

STEP_NS = 1_000_000  # every run of every executor below takes 1 ms of simulated time


class FakeExecutor(Executor):
    """Takes 1 ms per sample; fails on the given sample numbers (1-based) with a policy."""

    def __init__(self, clock, fail_on=(), policy=OnFailure.STOP):
        self.clock = clock
        self.fail_on = set(fail_on)
        self.policy = policy
        self.calls: list[bool] = []
        self.prepared = self.closed = 0

    def prepare(self):
        self.prepared += 1

    def sample(self, warmup=False):
        self.calls.append(warmup)
        self.clock.advance(STEP_NS)
        if len(self.calls) in self.fail_on:
            return Sample.failed(f"failure {len(self.calls)}", {"extra": 1.0})
        return Sample(STEP_NS, 1, {"extra": 2.0})

    def on_failure(self, failure):
        return self.policy

    def close(self):
        self.closed += 1


class FakeCommandRunner:
    """A CommandRunner double: every process takes 1 ms; ``exit 1`` fails."""

    timeout = None
    shell = False

    def __init__(self, clock):
        self.clock = clock

    def resolve(self, argv):
        return list(argv)

    def run(self, argv):
        t0 = self.clock()
        self.clock.advance(STEP_NS)
        code = 1 if argv[:2] == ["exit", "1"] else 0
        return ProcessRun(wall_ns=self.clock() - t0, user_time=0.0, sys_time=0.0,
                          max_rss=None, exit_code=code)


class FakeItersProgram(FakeCommandRunner):
    """An ITERS program whose process always takes 1 ms; BATCHTIME = iters µs."""

    timeout = 5.0

    def __init__(self, clock):
        super().__init__(clock)
        self.counts: list[int] = []

    def run(self, argv):
        iters = int(argv[1])
        self.counts.append(iters)
        run = super().run(argv)
        run.stdout = f"BATCHTIME: {iters * 1e-6!r}\n"
        return run


def make_executor(kind, clock, case):
    if kind == "fake":
        return FakeExecutor(clock)
    if kind == "in-process":
        return InProcessExecutor(CallableImplementation(clock.workload(STEP_NS), "w"),
                                 DirectMethod(), clock)
    if kind == "command":
        cmd = Command.from_line("work")
        return CommandExecutor(FakeCommandRunner(clock), cmd, ["work"], case)
    if kind == "iters":
        return ItersExecutor(Command.from_line("prog"), FakeItersProgram(clock), ItersOptions())
    raise AssertionError(kind)


EXECUTORS = ["fake", "in-process", "command", "iters"]


def run_loop(kind, **settings):
    clock = SimulatedClock()
    case = CaseResult("b", "i")
    loop = RunLoop(make_executor(kind, clock, case), case, LoopSettings(**settings), clock=clock)
    loop.run()
    return case, loop


# ---------------------------------------------------------------------------- same everywhere
@pytest.mark.parametrize("kind", EXECUTORS)
def test_runs_condition(kind):
    case, loop = run_loop(kind, stop=Runs(5))
    assert case.n == 5 and case.stop_reason == "5 runs done"
    assert loop.state.runs == loop.state.attempted == 5
    assert case.stream["wall_time"].n == 5
    assert not case.warnings and not case.errors


@pytest.mark.parametrize("kind", EXECUTORS)
def test_elapsed_condition_counts_the_case_own_time(kind):
    case, loop = run_loop(kind, stop=ElapsedTime(0.05))
    assert case.n == 50 and case.stop_reason == "0.05 s elapsed"
    assert loop.state.elapsed_ns == 50 * STEP_NS


@pytest.mark.parametrize("kind", EXECUTORS)
def test_warmup_runs_are_recorded_but_not_counted(kind):
    case, loop = run_loop(kind, stop=Runs(3), warmup=2)
    assert case.status == [RUN_WARMUP, RUN_WARMUP, RUN_OK, RUN_OK, RUN_OK]
    assert case.n == 3 and loop.state.attempted == 3
    assert case.stream["wall_time"].n == 3


@pytest.mark.parametrize("kind", EXECUTORS)
def test_hard_time_limit(kind):
    case, _ = run_loop(kind, stop=Runs(10**6), time_limit=0.02)
    assert case.n == 20
    assert case.stop_reason == "hard limit: 0.02 s"
    assert case.warnings == ["stopped by the hard time limit (0.02 s) before the stop "
                             "condition (runs >= 1000000) held"]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_hard_run_limit(kind):
    case, _ = run_loop(kind, stop=Runs(10**6), max_runs=7, warmup=1)
    assert case.n == 7 and case.runs_recorded == 8
    assert case.stop_reason == "hard limit: 7 runs"
    assert case.warnings == ["stopped by the hard run limit (7 runs) before the stop "
                             "condition (runs >= 1000000) held"]


@pytest.mark.parametrize("kind", EXECUTORS)
def test_min_runs_delays_the_stop_condition(kind):
    case, _ = run_loop(kind, stop=ElapsedTime(0.001), min_runs=6)
    assert case.n == 6


@pytest.mark.parametrize("kind", EXECUTORS)
def test_streaming_mode_keeps_no_rows(kind):
    case, _ = run_loop(kind, stop=Runs(4), keep_samples=False)
    assert case.runs_recorded == 0 and case.stream["wall_time"].n == 4


@pytest.mark.parametrize("kind", EXECUTORS)
def test_actions_and_progress_are_the_loop_s(kind):
    clock = SimulatedClock()
    case = CaseResult("b", "i")
    log: list[tuple[str, int, bool]] = []
    progress: list[int] = []
    loop = RunLoop(make_executor(kind, clock, case), case,
                   LoopSettings(stop=Runs(500), warmup=2), clock=clock,
                   before_run=[FunctionAction(lambda c: log.append(("b", c.run_index, c.warmup)))],
                   after_run=[FunctionAction(lambda c: log.append(("a", c.run_index, c.warmup)))],
                   progress=lambda c, s: progress.append(s.runs))
    loop.run()
    assert len(log) == 2 * 502
    assert log[:4] == [("b", 0, True), ("a", 0, True), ("b", 1, True), ("a", 1, True)]
    assert log[4] == ("b", 2, False) and log[-1] == ("a", 501, False)
    # about every 100 ms of the 502 ms
    assert len(progress) == 4 and progress == sorted(progress)


# ---------------------------------------------------------------------------- failures
def fake_loop(fail_on, policy, **settings):
    clock = SimulatedClock()
    case = CaseResult("b", "i")
    executor = FakeExecutor(clock, fail_on, policy)
    RunLoop(executor, case, LoopSettings(**settings), clock=clock).run()
    return case, executor


def test_a_failure_ends_the_case_under_stop():
    case, executor = fake_loop({3}, OnFailure.STOP, stop=Runs(10))
    assert case.status == [RUN_OK, RUN_OK, RUN_FAILED]
    assert case.errors == ["failure 3"] and case.stop_reason == "run failed: failure 3"
    assert case.values("extra", status=RUN_FAILED) == [1.0]  # a failed run's values are kept
    assert executor.prepared == executor.closed == 1


def test_continue_keeps_the_errors_and_goes_on():
    case, _ = fake_loop({2, 4}, OnFailure.CONTINUE, stop=Runs(5))
    assert case.n == 5 and case.count(RUN_FAILED) == 2
    assert case.errors == ["failure 2", "failure 4"]


def test_ignore_records_failed_runs_without_errors():
    case, _ = fake_loop({2, 4}, OnFailure.IGNORE, stop=Runs(5))
    assert case.n == 5 and case.count(RUN_FAILED) == 2 and not case.errors


@pytest.mark.parametrize("policy", [OnFailure.CONTINUE, OnFailure.IGNORE])
def test_failure_limit_gives_up(policy):
    case, _ = fake_loop(range(1, 100), policy, stop=Runs(5), max_failures=3)
    assert case.count(RUN_FAILED) == 3 and case.n == 0
    assert case.stop_reason == "3 runs failed: failure 3"
    assert case.errors[-1] == "gave up after 3 failed runs (0 succeeded): failure 3"


def test_a_failed_warmup_run_follows_the_policy():
    case, _ = fake_loop({1}, OnFailure.STOP, stop=Runs(5), warmup=2)
    assert case.status == [RUN_WARMUP] and case.stop_reason == "run failed: failure 1"
    case, _ = fake_loop({1}, OnFailure.IGNORE, stop=Runs(2), warmup=2)
    assert case.status == [RUN_WARMUP, RUN_WARMUP, RUN_OK, RUN_OK] and not case.errors


def test_stop_conditions_see_failures():
    case, _ = fake_loop({2, 3}, OnFailure.IGNORE, stop=OnError(2))
    assert case.stop_reason == "2 failed runs: failure 3"


def test_failures_are_the_same_for_commands_and_in_process_code():
    """A failing command under --ignore-failure and failing code under error_policy
    'continue' count alike; only whether the message is an error differs (by policy)."""
    clock = SimulatedClock()
    settings = LoopSettings(stop=Runs(3), max_failures=4)
    command_case = CaseResult("c", "c")
    executor = CommandExecutor(FakeCommandRunner(clock), Command.from_line("exit 1"),
                               ["exit", "1"], command_case, ignore_failure=True)
    RunLoop(executor, command_case, settings, clock=clock).run()

    def boom():
        raise ValueError("boom")

    impl = CallableImplementation(boom, "boom")
    impl.error_policy = "continue"
    code_case = CaseResult("p", "p")
    RunLoop(InProcessExecutor(impl, DirectMethod(), clock), code_case, settings,
            clock=clock).run()
    for case in (command_case, code_case):
        assert case.status == [RUN_FAILED] * 4
        assert case.stop_reason.startswith("4 runs failed: ")
        assert case.errors[-1].startswith("gave up after 4 failed runs (0 succeeded): ")
    assert code_case.errors[0] == "ValueError: boom"
    assert "exit status 1" in command_case.errors[0]


def test_interrupt_marks_the_case_and_propagates():
    clock = SimulatedClock()

    class Interrupting(FakeExecutor):
        def sample(self, warmup=False):
            if len(self.calls) == 3:
                raise KeyboardInterrupt
            return super().sample(warmup)

    case = CaseResult("b", "i")
    executor = Interrupting(clock)
    loop = RunLoop(executor, case, LoopSettings(stop=Runs(10)), clock=clock)
    with pytest.raises(KeyboardInterrupt):
        loop.run()
    assert case.interrupted and case.stop_reason == "interrupted" and case.n == 3
    assert loop.done and executor.closed == 1
    assert not loop.step()


def test_step_by_step_drives_several_loops():
    clock = SimulatedClock()
    loops = [RunLoop(FakeExecutor(clock), CaseResult(str(n), "i"), LoopSettings(stop=Runs(n)),
                     clock=clock) for n in (2, 4)]
    rounds = 0
    while any(not lp.done for lp in loops):
        for lp in loops:
            lp.step()
        rounds += 1
    assert rounds == 4 and [lp.case.n for lp in loops] == [2, 4]
    # each loop's elapsed time is its own steps', not the interleaved total
    assert [lp.state.elapsed_ns for lp in loops] == [2 * STEP_NS, 4 * STEP_NS]


def test_settings_are_checked():
    for bad in (dict(warmup=-1), dict(time_limit=0), dict(max_runs=0), dict(max_failures=0)):
        with pytest.raises(ConfigurationError):
            LoopSettings(stop=Runs(1), **bad)


# ---------------------------------------------------------------------------- containment
class Abort(BaseException):
    """A user's BaseException subclass."""


def test_describe_exception_is_one_line():
    assert describe_exception(SystemExit(0)) == \
        "SystemExit: 0 — the benchmark called sys.exit(0)"
    assert describe_exception(SystemExit(), "set-up") == \
        "SystemExit: None — the set-up called sys.exit()"
    assert describe_exception(ValueError("two\nlines")) == "ValueError: two | lines"
    assert describe_exception(Abort("stop")) == (
        "Abort: stop — raised by the benchmark (a BaseException subclass, not an Exception)")


def test_user_frames_leave_steadybench_out():
    def mine():
        raise ValueError("x")

    clock = SimulatedClock()
    executor = InProcessExecutor(CallableImplementation(mine), DirectMethod(), clock)
    sample = executor.sample()
    assert isinstance(sample.failure, RunFailure)
    frames = "".join(sample.failure.frames)
    assert "in mine" in frames and "raise ValueError" in frames
    # the loop's and the method's frames are steadybench's: left out
    assert all(f'File "{__file__}"' in frame for frame in sample.failure.frames)
    try:
        mine()
    except ValueError as exc:
        assert "in mine" in "".join(user_frames(exc))
