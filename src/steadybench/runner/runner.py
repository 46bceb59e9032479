"""The runner: runs one implementation for one parameter set until its stop condition holds.

This is Rancid's ModularBenchmarkRunner (§V-A): actions at four stages (before the benchmark,
before each run, after each run, after the benchmark), a stop condition checked after every
measured run, and meters around the measured code. The runs themselves are made by the one run
loop of :mod:`steadybench.runner.loop` with an :class:`~steadybench.runner.loop.InProcessExecutor`
(the shared harness of source ``000``: one wrapper loop for every experiment, a monotonic
nanosecond clock, streaming mean/variance so a million runs need O(1) memory when raw samples
are not kept); the runner adds set-up, the before/after-benchmark stages and teardown around it.

Every case always ends: besides the user's stop condition, a hard time limit and a hard run
limit apply, and the reason the case stopped is recorded in ``case.stop_reason``.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Sequence

from ..clocks import budget_clock
from ..defaults import LAYOUTS
from ..errors import ConfigurationError
from ..meters.base import Meter, WallTimeMeter
from ..methods.base import DirectMethod, Method
from ..model.implementation import Implementation
from ..model.parameters import Parameters
from ..model.results import PRIMARY_METRIC, CaseResult
from . import sigint
from .actions import Action, RunContext, Stage, as_action
from .deadline import deadline, grace
from .loop import (
    MAX_ERRORS_KEPT,
    InProcessExecutor,
    LoopSettings,
    ProgressCallback,
    RunFailure,
    RunLoop,
    keep_traceback,
)
from .stdfds import kept_streams
from .stop import RunState, StopCondition, build_stop_condition, effective_time_limit

__all__ = ["MAX_ERRORS_KEPT", "ProgressCallback", "Runner", "Stage"]


class Runner:
    """Runs cases. All arguments are optional.

    Args:
        stop: the stop condition (default: see :func:`build_stop_condition`).
        warmup: runs made first and recorded as ``warmup``, not counted in the statistics.
        clock: zero-argument callable returning integer nanoseconds (default
            ``time.perf_counter_ns``); a :class:`~steadybench.testing.SimulatedClock` in tests.
        sleep: how to wait (default ``time.sleep``; ``SimulatedClock.sleep`` in tests).
        method: the measurement method (default :class:`DirectMethod`).
        keep_samples: keep every run's values; False keeps streaming statistics only.
        time_limit: hard limit in seconds for one case, whatever the stop condition says.
        max_runs: hard limit on measured runs for one case.
        max_failures: with an error policy of "continue", stop after this many failed runs.
        processes: run each case as this many independent executions: spawned worker
            processes, one after another (see :mod:`steadybench.runner.workers`); 1 runs it in
            this process.
        confidence: the level of the per-execution intervals (the manager sets its own).
        layout: how the executions' hash seeds, environment sizes and address-space
            randomisation are chosen: ``"design"`` (seeds and paddings the same in every
            invocation), ``"fixed"`` (also ASLR off) or ``"random"`` (see
            :mod:`steadybench.runner.layout`).
    """

    def __init__(
        self,
        stop: StopCondition | None = None,
        *,
        warmup: int = 0,
        clock: Callable[[], int] = time.perf_counter_ns,
        sleep: Callable[[float], None] = time.sleep,
        method: Method | None = None,
        keep_samples: bool = True,
        time_limit: float = 600.0,
        max_runs: int = 100_000_000,
        max_failures: int = 100,
        processes: int = 1,
        confidence: float = 0.95,
        layout: str = "design",
    ) -> None:
        if warmup < 0:
            raise ConfigurationError(f"warm-up runs must not be negative, got {warmup}")
        if not time_limit > 0:
            raise ConfigurationError(f"time limit must be positive, got {time_limit}")
        if max_runs < 1:
            raise ConfigurationError(f"max_runs must be at least 1, got {max_runs}")
        self.stop = stop if stop is not None else build_stop_condition()
        self.warmup = int(warmup)
        self.timer = WallTimeMeter(clock)
        #: what times the budget, the hard limit and the countermeasures: the samples' clock,
        #: or the wall clock when that one counts CPU time (:func:`.clocks.budget_clock`)
        self.wall_clock = budget_clock(clock)
        self.sleep = sleep
        self.method = method or DirectMethod()
        self.keep_samples = keep_samples
        # never shorter than the time the stop condition asks for
        self.time_limit = effective_time_limit(self.stop, float(time_limit))
        self.max_runs = int(max_runs)
        self.max_failures = int(max_failures)
        self.actions: dict[Stage, list[Action]] = {stage: [] for stage in Stage}
        self.last_case: CaseResult | None = None
        if int(processes) < 1:
            raise ConfigurationError(f"processes must be at least 1, got {processes}")
        self.processes = int(processes)
        self.confidence = float(confidence)
        if layout not in LAYOUTS:
            raise ConfigurationError(f"layout must be one of {', '.join(LAYOUTS)}, got "
                                     f"{layout!r}")
        self.layout = layout

    def worker_runner(self, time_limit: float | None = None) -> Runner:
        """The in-process runner a worker process uses for one execution: these settings, the
        per-run actions only (the parent runs the benchmark-stage ones around all executions),
        and ``time_limit`` when given (the time left of the case's hard limit)."""
        inner = copy.copy(self)
        inner.processes = 1
        inner.last_case = None
        inner.actions = {stage: list(self.actions[stage])
                         if stage in (Stage.BEFORE_RUN, Stage.AFTER_RUN) else []
                         for stage in Stage}
        if time_limit is not None:
            inner.time_limit = max(float(time_limit), 1e-3)
        return inner

    @property
    def clock(self) -> Callable[[], int]:
        return self.timer.clock

    def add_action(
        self, stage: Stage | str, action: Action | Callable[[RunContext], None]
    ) -> Runner:
        stage = Stage(stage) if isinstance(stage, str) else stage
        self.actions[stage].append(as_action(action))
        return self

    # ------------------------------------------------------------------ one case
    def loop_settings(self) -> LoopSettings:
        """The loop settings of this runner (stop condition, warm-up, limits)."""
        return LoopSettings(stop=self.stop, warmup=self.warmup, time_limit=self.time_limit,
                            max_runs=self.max_runs, max_failures=self.max_failures,
                            keep_samples=self.keep_samples)

    def execute(
        self,
        implementation: Implementation,
        params: Parameters,
        meters: Sequence[Meter] = (),
        benchmark: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> CaseResult:
        """Run one case and return its raw results (processors have not run yet).

        Whatever the user's code raises — in set-up, calibration, a run or teardown, including
        ``SystemExit`` and other ``BaseException`` subclasses — is recorded in the case (one
        line in ``case.errors``, the user's frames in ``case.extra["tracebacks"]``); only
        ``KeyboardInterrupt`` (and a :class:`ConfigurationError`) propagates.
        """
        if self.processes > 1:
            return self._execute_in_workers(implementation, params, meters, benchmark, progress)
        case = self.new_case(implementation, params, benchmark)
        self.last_case = case  # what the manager keeps if Ctrl-C ends this case
        case.units[PRIMARY_METRIC] = "s"
        for meter in meters:
            case.units[meter.name] = meter.unit
        executor = InProcessExecutor(implementation, self.method, self.clock, meters)
        loop = RunLoop(executor, case, self.loop_settings(), clock=self.wall_clock,
                       sleep=self.sleep,
                       before_run=self.actions[Stage.BEFORE_RUN],
                       after_run=self.actions[Stage.AFTER_RUN], progress=progress,
                       implementation=implementation, params=params)
        ctx = loop.context
        all_actions = [a for stage in Stage for a in self.actions[stage]]
        # code in this process that never returns is interrupted just after the hard limit
        # (issue 27 item 12); the loop stops by itself at the limit between runs
        limit_ns = (self.time_limit + grace(self.time_limit)) * 1e9
        user_since: list[int | None] = [None]  # set while set-up or teardown runs

        def overdue() -> bool:
            if loop.running_since is not None:  # a run: with the time of the runs before it
                return loop.state.elapsed_ns + self.wall_clock() - loop.running_since > limit_ns
            since = user_since[0]
            return since is not None and self.wall_clock() - since > limit_ns

        guard = contextlib.ExitStack()
        try:
            guard.enter_context(kept_streams(case.warnings))
            executor.counting_sigint = guard.enter_context(sigint.counting())
            guard.enter_context(deadline(self.time_limit, f"benchmark {case.label}",
                                         grace(self.time_limit), overdue))
            try:
                user_since[0] = self.wall_clock()
                implementation.setup(params)
            except KeyboardInterrupt:
                case.interrupted = True
                case.stop_reason = "interrupted"
                raise
            except ConfigurationError:
                raise
            except BaseException as exc:  # noqa: BLE001 - user code is contained
                failure = RunFailure.from_exception(exc, "set-up")
                case.errors.append(f"setup failed: {failure.message}")
                keep_traceback(case, failure)
                case.stop_reason = "setup failed"
                return case
            finally:
                user_since[0] = None
            try:
                self._run_stage(Stage.BEFORE_BENCHMARK, ctx)
                loop.run()
                self._run_stage(Stage.AFTER_BENCHMARK, ctx)
            except KeyboardInterrupt:
                case.trim_partial_run()
                case.interrupted = True
                case.stop_reason = "interrupted"
                raise
            finally:
                user_since[0] = self.wall_clock()
                try:
                    self._teardown(implementation, case)
                finally:
                    user_since[0] = None
        except (KeyboardInterrupt, ConfigurationError):
            raise
        except BaseException as exc:  # noqa: BLE001 - user code is contained
            failure = RunFailure.from_exception(exc)
            case.errors.append(failure.message)
            keep_traceback(case, failure)
            case.stop_reason = case.stop_reason or "error"
        finally:
            guard.close()  # before the actions put the machine back
            for action in reversed(all_actions):
                action.close(ctx)
            for meter in meters:
                meter.close()
        return case

    @staticmethod
    def _teardown(implementation: Implementation, case: CaseResult) -> None:
        try:
            implementation.teardown()
        except KeyboardInterrupt:
            case.interrupted = True
            case.stop_reason = "interrupted"
            raise
        except BaseException as exc:  # noqa: BLE001 - user code is contained
            failure = RunFailure.from_exception(exc, "teardown")
            case.warnings.append(f"teardown failed: {failure.message}")
            keep_traceback(case, failure)

    def _execute_in_workers(self, implementation: Implementation, params: Parameters,
                            meters: Sequence[Meter], benchmark: str | None,
                            progress: ProgressCallback | None) -> CaseResult:
        """The case as ``processes`` independent executions in spawned workers, through the
        execution layer (:func:`steadybench.execution.driver.run_executions`): the
        benchmark-stage actions (machine tuning, pinning, priority) run here, around all the
        worker processes, which inherit them; the per-run ones run in every worker."""
        from ..execution.backends import WorkerBackend
        from ..execution.driver import StageActions, run_executions

        case = self.new_case(implementation, params, benchmark)
        self.last_case = case
        ctx = RunContext(implementation, params, case, RunState(), self.wall_clock, self.sleep)
        run_executions(WorkerBackend(self, implementation, params, meters, benchmark), case,
                       self.processes, time_limit=self.time_limit, method=self.method,
                       confidence=self.confidence,
                       stop_on_error=implementation.error_policy == "stop",
                       actions=StageActions.of_runner(self.actions, ctx), progress=progress,
                       hard_limits=self.hard_limits())
        return case

    def hard_limits(self) -> dict[str, object]:
        """The limits every case of this runner had (``extra["hard_limits"]``)."""
        return {"time_s": self.time_limit, "runs": self.max_runs,
                "stop": self.stop.describe()}

    def new_case(self, implementation: Implementation, params: Parameters,
                 benchmark: str | None = None) -> CaseResult:
        """An empty case for this implementation and parameter set, run by this runner."""
        return CaseResult(
            benchmark=benchmark or implementation.name,
            implementation=implementation.name,
            params=params.to_dict(),
            method=self.method.name,
            keep_samples=self.keep_samples,
        )

    def _run_stage(self, stage: Stage, ctx: RunContext) -> None:
        for action in self.actions[stage]:
            action(ctx)
