"""The runner: runs one implementation for one parameter set until its stop condition holds.

This is Rancid's ModularBenchmarkRunner (§V-A): actions at four stages (before the benchmark,
before each run, after each run, after the benchmark), a stop condition checked after every
measured run, and meters around the measured code. The loop is the shared harness of source
``000``: one wrapper loop for every experiment, a monotonic nanosecond clock, streaming
mean/variance so a million runs need O(1) memory when raw samples are not kept.

Every case always ends: besides the user's stop condition, a hard time limit and a hard run
limit apply, and the reason the case stopped is recorded in ``case.stop_reason``.
"""

from __future__ import annotations

import copy
import enum
import time
from collections import deque
from collections.abc import Callable, Sequence

from ..errors import ConfigurationError
from ..meters.base import Meter, WallTimeMeter
from ..methods.base import DirectMethod, Method
from ..model.implementation import Implementation
from ..model.parameters import Parameters
from ..model.results import PRIMARY_METRIC, RUN_FAILED, RUN_OK, RUN_WARMUP, CaseResult
from .actions import Action, RunContext, as_action
from .stop import RunState, StopCondition, build_stop_condition

ProgressCallback = Callable[[CaseResult, RunState], None]

#: at most this many distinct error messages are kept per case
MAX_ERRORS_KEPT = 5


class Stage(enum.Enum):
    BEFORE_BENCHMARK = "before_benchmark"
    BEFORE_RUN = "before_run"
    AFTER_RUN = "after_run"
    AFTER_BENCHMARK = "after_benchmark"


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
        self.sleep = sleep
        self.method = method or DirectMethod()
        self.keep_samples = keep_samples
        self.time_limit = float(time_limit)
        self.max_runs = int(max_runs)
        self.max_failures = int(max_failures)
        self.actions: dict[Stage, list[Action]] = {stage: [] for stage in Stage}
        self.last_case: CaseResult | None = None
        if int(processes) < 1:
            raise ConfigurationError(f"processes must be at least 1, got {processes}")
        self.processes = int(processes)
        self.confidence = float(confidence)

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
    def execute(
        self,
        implementation: Implementation,
        params: Parameters,
        meters: Sequence[Meter] = (),
        benchmark: str | None = None,
        progress: ProgressCallback | None = None,
    ) -> CaseResult:
        """Run one case and return its raw results (processors have not run yet)."""
        if self.processes > 1:
            return self._execute_in_workers(implementation, params, meters, benchmark, progress)
        case = self.new_case(implementation, params, benchmark)
        self.last_case = case  # what the manager keeps if Ctrl-C ends this case
        case.units[PRIMARY_METRIC] = "s"
        for meter in meters:
            case.units[meter.name] = meter.unit
        state = RunState(window=deque(maxlen=max(1, self.stop.window_size())))
        ctx = RunContext(implementation, params, case, state, self.clock, self.sleep)
        all_actions = [a for stage in Stage for a in self.actions[stage]]
        try:
            try:
                implementation.setup(params)
            except Exception as exc:
                case.errors.append(f"setup failed: {type(exc).__name__}: {exc}")
                case.stop_reason = "setup failed"
                return case
            except KeyboardInterrupt:
                case.interrupted = True
                case.stop_reason = "interrupted"
                raise
            try:
                self._run_stage(Stage.BEFORE_BENCHMARK, ctx)
                self.method.prepare(implementation, self.clock)
                self._loop(implementation, meters, case, state, ctx, progress)
                self._run_stage(Stage.AFTER_BENCHMARK, ctx)
            except KeyboardInterrupt:
                case.interrupted = True
                case.stop_reason = "interrupted"
                raise
            finally:
                try:
                    implementation.teardown()
                except Exception as exc:
                    case.warnings.append(f"teardown failed: {type(exc).__name__}: {exc}")
        except Exception as exc:
            if isinstance(exc, ConfigurationError):
                raise
            case.errors.append(f"{type(exc).__name__}: {exc}")
            case.stop_reason = case.stop_reason or "error"
        finally:
            for action in reversed(all_actions):
                action.close(ctx)
            for meter in meters:
                meter.close()
        return case

    def _execute_in_workers(self, implementation: Implementation, params: Parameters,
                            meters: Sequence[Meter], benchmark: str | None,
                            progress: ProgressCallback | None) -> CaseResult:
        """The case as independent executions: the benchmark-stage actions (machine tuning,
        pinning, priority) run here, around all the worker processes, which inherit them."""
        from .workers import run_in_workers

        case = self.new_case(implementation, params, benchmark)
        self.last_case = case
        ctx = RunContext(implementation, params, case, RunState(), self.clock, self.sleep)
        staged = self.actions[Stage.BEFORE_BENCHMARK] + self.actions[Stage.AFTER_BENCHMARK]
        try:
            self._run_stage(Stage.BEFORE_BENCHMARK, ctx)
            run_in_workers(self, implementation, params, meters, benchmark, progress, case)
            self._run_stage(Stage.AFTER_BENCHMARK, ctx)
        except KeyboardInterrupt:
            case.interrupted = True
            case.stop_reason = "interrupted"
            raise
        finally:
            for action in reversed(staged):
                action.close(ctx)
        return case

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

    def _loop(
        self,
        impl: Implementation,
        meters: Sequence[Meter],
        case: CaseResult,
        state: RunState,
        ctx: RunContext,
        progress: ProgressCallback | None,
    ) -> None:
        clock = self.clock
        sample = self.method.sample
        record_raw = self.method.variable_executions
        keep = self.keep_samples
        before = self.actions[Stage.BEFORE_RUN]
        after = self.actions[Stage.AFTER_RUN]
        stop = self.stop
        primary = case.stream.setdefault(PRIMARY_METRIC, state.stream)
        window = state.window
        limit_ns = int(self.time_limit * 1e9)
        last_progress = start = clock()
        index = 0
        # Hooks the implementation does not override are not called: a no-op call per run is
        # pure harness overhead.
        init_run = impl.init_run if _overrides(impl, "init_run") else None
        release_run = impl.release_run if _overrides(impl, "release_run") else None
        while True:
            warm = index < self.warmup
            ctx.run_index, ctx.warmup = index, warm
            for action in before:
                action(ctx)
            if init_run is not None:
                init_run()
            for meter in meters:
                meter.start()
            error: Exception | None = None
            try:
                elapsed_ns, executions = sample(impl, clock)
            except Exception as exc:
                error = exc
            values = {m.name: m.stop(error is None) for m in reversed(meters)} if meters else {}
            if release_run is not None:
                release_run()
            for action in after:
                action(ctx)

            if error is None:
                seconds = elapsed_ns / executions / 1e9
                values[PRIMARY_METRIC] = seconds
                if record_raw:
                    values["elapsed"] = elapsed_ns / 1e9
                    values["executions"] = float(executions)
            status = RUN_WARMUP if warm else (RUN_OK if error is None else RUN_FAILED)
            if keep:
                case.add_run(status, values)
            if not warm:
                state.attempted += 1
                if error is None:
                    state.runs += 1
                    primary.push(seconds)
                    window.append(seconds)
                    if len(values) > 1:
                        case.accumulate({k: v for k, v in values.items() if k != PRIMARY_METRIC})
                else:
                    state.failed += 1
                    message = f"{type(error).__name__}: {error}"
                    state.last_error = message
                    if message not in case.errors and len(case.errors) < MAX_ERRORS_KEPT:
                        case.errors.append(message)
                    if not impl.on_error(error):
                        case.stop_reason = f"run failed: {message}"
                        return
                    if state.failed >= self.max_failures:
                        case.stop_reason = f"{state.failed} runs failed: {message}"
                        return
            index += 1

            now = clock()
            state.elapsed_ns = now - start
            if progress is not None and now - last_progress > 100_000_000:
                last_progress = now
                progress(case, state)
            if not warm:
                reason = stop.check(state)
                if reason:
                    case.stop_reason = reason
                    return
                if state.attempted >= self.max_runs:
                    case.stop_reason = f"hard limit: {self.max_runs} runs"
                    case.warnings.append(
                        f"stopped by the hard run limit ({self.max_runs} runs) "
                        f"before the stop condition ({stop.describe()}) held"
                    )
                    return
            if state.elapsed_ns >= limit_ns:
                case.stop_reason = f"hard limit: {self.time_limit:g} s"
                case.warnings.append(
                    f"stopped by the hard time limit ({self.time_limit:g} s) "
                    f"before the stop condition ({stop.describe()}) held"
                )
                return


def _overrides(impl: Implementation, hook: str) -> bool:
    """True when ``impl`` provides its own ``hook`` (set on the instance or in a subclass)."""
    return hook in vars(impl) or getattr(type(impl), hook) is not getattr(Implementation, hook)
