"""The one run loop of steadybench, and the executors that take its samples.

Every command measures the same way: ``run`` (code in this process), ``exec`` (whole runs of
external commands) and ``iters``/``sweep`` (the ITERS protocol) all go through a
:class:`RunLoop`. The loop owns everything about *when* to sample and what to do with a sample:

* warm-up runs (recorded as ``warmup``, left out of the statistics);
* the stop condition, checked after every measured run (not before ``min_runs`` successful
  ones);
* the hard limits, whatever the stop condition says: time (the sum of the case's own steps on the
  loop's clock) and measured runs;
* failures: the executor's policy says whether a failed run ends the case, is an error and the
  case goes on, or is only recorded; after ``max_failures`` failed runs the case gives up;
* the per-run actions (countermeasures such as cool-down) before and after every run;
* progress callbacks (at most about ten a second);
* recording into the :class:`~steadybench.model.results.CaseResult`: run statuses, metric
  columns, streaming statistics, errors, warnings, the stop reason and the user's traceback
  frames of failed runs.

An :class:`Executor` only knows how to take *one* sample where the code runs and returns it as a
:class:`Sample`; it never decides to stop. This is the shape of hyperfine's ``Executor`` trait
(``src/benchmark/executor.rs``: ``calibrate`` once, then ``run_command_and_measure`` for one
run, told whether it is a warm-up; the benchmark loop around it is shared). The
executors are :class:`InProcessExecutor` (the measurement method's ``sample(impl, clock)``),
:class:`steadybench.programs.exec.CommandExecutor` (one run of an external command) and
:class:`steadybench.programs.iters.ItersExecutor` (one run of a program at ITERS=n).

A loop can be driven to the end (:meth:`RunLoop.run`) or one step at a time
(:meth:`RunLoop.step`): ``exec`` interleaves several commands by giving each unfinished loop one
step per round.

**Containment.** Whatever user code raises in a sample — an ``Exception``, ``SystemExit`` from a
``sys.exit()`` in the benchmark, or any other ``BaseException`` subclass — is a failed run with
one line of error (:func:`describe_exception`); the user's own traceback frames (those outside
the steadybench package) are kept in ``case.extra["tracebacks"]``. Only ``KeyboardInterrupt``
passes through, so Ctrl-C still ends the session with partial results.
"""

from __future__ import annotations

import enum
import os
import re
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..model.results import PRIMARY_METRIC, RUN_FAILED, RUN_OK, RUN_WARMUP, CaseResult
from . import sigint
from .actions import RunContext
from .stop import RunState, StopCondition, effective_time_limit

if TYPE_CHECKING:
    from ..meters.base import Meter
    from ..methods.base import Method
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from .actions import Action

#: called with (case, state) while a case runs, at most about every PROGRESS_INTERVAL_NS
ProgressCallback = Callable[[CaseResult, RunState], None]

#: at most this many distinct error messages are kept per case
MAX_ERRORS_KEPT = 5
#: at most this many distinct user tracebacks are kept per case
MAX_TRACEBACKS_KEPT = 3
#: progress callbacks come at most this often (loop clock)
PROGRESS_INTERVAL_NS = 100_000_000

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------- samples
@dataclass(frozen=True)
class RunFailure:
    """Why one run failed: a one-line message and, for user code, the exception and the user's
    own traceback frames."""

    message: str
    exception: BaseException | None = None
    frames: tuple[str, ...] = ()

    @classmethod
    def from_exception(cls, exc: BaseException, who: str = "benchmark") -> RunFailure:
        return cls(describe_exception(exc, who), exc, tuple(user_frames(exc)))


@dataclass(slots=True)
class Sample:
    """What one run gave (made once per run: a light slotted class, to be treated as
    read-only; the loop takes ``values`` over).

    Attributes:
        elapsed_ns: the measured time of the sample in nanoseconds (fractional when converted
            from a program's own report, e.g. BATCHTIME).
        executions: how many executions of the measured code the time covers; the run's
            ``wall_time`` is ``elapsed_ns / executions`` in seconds.
        values: the run's other metrics (meters, CPU times, the ITERS count...); recorded
            for failed runs too.
        failure: set when the run failed; ``elapsed_ns`` then does not count.
    """

    elapsed_ns: float
    executions: int = 1
    values: dict[str, float | None] = field(default_factory=dict)
    failure: RunFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def seconds(self) -> float:
        """Seconds per execution."""
        return self.elapsed_ns / self.executions / 1e9

    @classmethod
    def failed(cls, failure: RunFailure | str, values: dict[str, float | None] | None = None,
               elapsed_ns: float = 0) -> Sample:
        if isinstance(failure, str):
            failure = RunFailure(failure)
        return cls(elapsed_ns, 1, dict(values or {}), failure)


class OnFailure(enum.Enum):
    """What a failed run does to its case (the executor's policy)."""

    #: the case ends; the failure is its error
    STOP = "stop"
    #: the run is recorded as failed, its message kept among the case's errors, and the case
    #: goes on (an implementation's ``error_policy = "continue"``)
    CONTINUE = "continue"
    #: the run is recorded as failed and the case goes on; not an error (``exec -i``)
    IGNORE = "ignore"


class Executor:
    """Takes one sample where the measured code runs. Subclasses override :meth:`sample`.

    The loop calls :meth:`prepare` once before the first run, :meth:`sample` once per run
    (``warmup`` says whether the run is a warm-up run), :meth:`on_failure` after a failed run,
    and :meth:`close` once at the end.
    """

    def prepare(self) -> None:
        """Get ready (calibrate, check the command); called once, before the first run."""

    def sample(self, warmup: bool = False) -> Sample:
        raise NotImplementedError

    def on_failure(self, failure: RunFailure) -> OnFailure:
        """What this failed run does to the case (default: it ends it)."""
        return OnFailure.STOP

    def close(self) -> None:
        """Release what :meth:`prepare` took; called once when the loop ends."""


# ---------------------------------------------------------------------------- containment
def _one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " | ", text.strip())


def describe_exception(exc: BaseException, who: str = "benchmark") -> str:
    """One line about an exception raised by user code (``who`` is "benchmark", "set-up"...).

    ``SystemExit: 0 — the benchmark called sys.exit(0)``; ``ValueError: bad input``; a
    ``BaseException`` subclass that is not an ``Exception`` says so.
    """
    name = type(exc).__name__
    if name in ("HardTimeLimit", "OwnInterrupt"):  # steadybench's own: the message says it
        return _one_line(str(exc))
    if isinstance(exc, SystemExit):
        arg = "" if exc.code is None else repr(exc.code)
        return f"SystemExit: {arg or None} — the {who} called sys.exit({arg})"
    text = _one_line(str(exc))
    line = f"{name}: {text}" if text else name
    if not isinstance(exc, Exception):
        line += f" — raised by the {who} (a BaseException subclass, not an Exception)"
    return line


def user_frames(exc: BaseException) -> list[str]:
    """The formatted traceback frames of ``exc`` whose file is outside the steadybench package:
    the user's own code."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames
            if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR + os.sep)
            and not f.filename.startswith("<steadybench")]  # code steadybench generated
    return traceback.format_list(mine)


def keep_traceback(case: CaseResult, failure: RunFailure) -> None:
    """Keep the failure's user frames in ``case.extra["tracebacks"]`` (a few distinct ones)."""
    if not failure.frames:
        return
    kept: list[dict[str, Any]] = case.extra.setdefault("tracebacks", [])
    entry = {"error": failure.message, "frames": list(failure.frames)}
    if entry not in kept and len(kept) < MAX_TRACEBACKS_KEPT:
        kept.append(entry)


def keep_error(case: CaseResult, message: str) -> None:
    """Add ``message`` to the case's errors unless already there or enough are kept."""
    if message not in case.errors and len(case.errors) < MAX_ERRORS_KEPT:
        case.errors.append(message)


# ---------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class LoopSettings:
    """When a loop stops, whichever executor it drives.

    Args:
        stop: the stop condition, checked after every measured run.
        warmup: runs made first, recorded as ``warmup`` and left out of the statistics.
        min_runs: the stop condition is not consulted before this many successful measured
            runs (the ITERS sweep's ``--min-points``).
        time_limit: hard limit in seconds on the case's own time, whatever the stop condition.
        max_runs: hard limit on measured runs (successful or not).
        max_failures: when failed runs do not end the case, it gives up after this many.
        keep_samples: keep every run's values; False keeps streaming statistics only.
    """

    stop: StopCondition
    warmup: int = 0
    min_runs: int = 0
    time_limit: float = 600.0
    max_runs: int = 100_000_000
    max_failures: int = 100
    keep_samples: bool = True

    def __post_init__(self) -> None:
        if self.warmup < 0:
            raise ConfigurationError(f"warm-up runs must not be negative, got {self.warmup}")
        if not self.time_limit > 0:
            raise ConfigurationError(f"time limit must be positive, got {self.time_limit}")
        if self.max_runs < 1:
            raise ConfigurationError(f"max_runs must be at least 1, got {self.max_runs}")
        if self.max_failures < 1:
            raise ConfigurationError(f"max_failures must be at least 1, got {self.max_failures}")


# ---------------------------------------------------------------------------- the loop
class RunLoop:
    """Runs one case with one executor until a stop condition or a limit ends it.

    Args:
        executor: takes the samples.
        case: where the runs are recorded (units and extras are the caller's).
        settings: stop condition, warm-up and limits.
        clock: integer nanoseconds; the case's time is the sum of its steps on this clock.
        sleep: given to the actions' context.
        before_run, after_run: actions called around every run (warm-up runs too).
        progress: called with (case, state) at most about ten times a second.
        implementation, params: what the actions' :class:`RunContext` shows.
        context: use this context instead of making one (its ``state`` becomes the loop's).
    """

    def __init__(self, executor: Executor, case: CaseResult, settings: LoopSettings, *,
                 clock: Callable[[], int] = time.perf_counter_ns,
                 sleep: Callable[[float], None] = time.sleep,
                 before_run: Sequence[Action] = (), after_run: Sequence[Action] = (),
                 progress: ProgressCallback | None = None,
                 implementation: Implementation | None = None,
                 params: Parameters | None = None,
                 context: RunContext | None = None) -> None:
        self.executor = executor
        self.case = case
        self.settings = settings
        self.clock = clock
        self.before_run = list(before_run)
        self.after_run = list(after_run)
        self.progress = progress
        if context is None:
            from ..model.parameters import Parameters

            state = RunState(window=deque(maxlen=max(1, settings.stop.window_size())))
            if params is None:
                params = Parameters.from_mapping(case.params)
            context = RunContext(implementation, params, case, state, clock, sleep)
        self.context = context
        self.state = context.state
        self._warmup = settings.warmup
        self._keep = settings.keep_samples
        #: never shorter than the time the stop condition asks for (Rancid §VI-A's 2-hour runs)
        self.time_limit = effective_time_limit(settings.stop, settings.time_limit)
        self._limit_ns = self.time_limit * 1e9
        case.extra.setdefault("hard_limits", {"time_s": self.time_limit,
                                              "runs": settings.max_runs,
                                              "stop": settings.stop.describe()})
        self.index = 0
        self.done = False
        self._started = False
        self._closed = False
        self._last_progress = 0
        self._primary = case.stream.setdefault(PRIMARY_METRIC, self.state.stream)
        #: clock reading when the run (or the calibration) in progress began; None between
        #: runs (what :func:`steadybench.runner.deadline.deadline` asks to judge a hang)
        self.running_since: int | None = None

    # ------------------------------------------------------------------ driving
    def run(self) -> CaseResult:
        """Step until the case ends; the executor is closed on every exit path."""
        try:
            while self.step():
                pass
        finally:
            self.close()
        return self.case

    def step(self) -> bool:
        """Take one run (warm-up or measured); return True while the case goes on.

        Ctrl-C marks the case interrupted and propagates; anything else an action or the
        executor raises (not user code in a sample, which the executor contains) ends the loop
        and propagates.
        """
        if self.done:
            return False
        ctx, clock, state = self.context, self.clock, self.state
        warm = self.index < self._warmup
        ctx.run_index, ctx.warmup = self.index, warm
        try:
            if not self._started:
                self._started = True
                self.running_since = clock()
                self.executor.prepare()
                self._last_progress = clock()
            t0 = self.running_since = clock()
            for action in self.before_run:
                action(ctx)
            sample = self.executor.sample(warm)
            for action in self.after_run:
                action(ctx)
            t1 = clock()
            self.running_since = None
            self.index += 1
            state.elapsed_ns += t1 - t0
            reason = self._record(sample, warm)
            if self.progress is not None and t1 - self._last_progress > PROGRESS_INTERVAL_NS:
                self._last_progress = t1
                self.progress(self.case, state)
            if reason is None:
                reason = self._limit_reached(warm)
        except KeyboardInterrupt:
            self.running_since = None
            self.interrupt()
            raise
        except BaseException:
            self.running_since = None
            self.done = True
            raise
        if reason is not None:
            self.case.stop_reason = reason
            self.done = True
            return False
        return True

    def interrupt(self) -> None:
        """Mark an unfinished case interrupted (Ctrl-C); a finished one keeps its reason."""
        self.case.trim_partial_run()  # the signal may have come half-way through recording
        if not self.done:
            self.done = True
            self.case.interrupted = True
            self.case.stop_reason = "interrupted"

    def close(self) -> None:
        """Close the executor (once); call when the case ends, on every exit path."""
        if not self._closed:
            self._closed = True
            self.done = True
            if self._started:
                self.executor.close()

    # ------------------------------------------------------------------ recording
    def _record(self, sample: Sample, warm: bool) -> str | None:
        """Record the run; return a reason to stop that the run itself gives (a failure)."""
        case, state = self.case, self.state
        values = sample.values
        failure = sample.failure
        if failure is None:
            seconds = sample.elapsed_ns / sample.executions / 1e9
            values[PRIMARY_METRIC] = seconds
        if self._keep:
            case.add_run(RUN_WARMUP if warm else (RUN_OK if failure is None else RUN_FAILED),
                         values)
        if not warm:
            state.attempted += 1
        if failure is None:
            if not warm:
                state.runs += 1
                self._primary.push(seconds)
                state.window.append(seconds)
                if len(values) > 1:
                    del values[PRIMARY_METRIC]
                    case.accumulate(values)
            return None
        keep_traceback(case, failure)
        message = failure.message
        if not warm:
            state.failed += 1
            state.last_error = message
        policy = self.executor.on_failure(failure)
        if policy is OnFailure.STOP:
            keep_error(case, message)
            return f"run failed: {message}"
        if policy is OnFailure.CONTINUE:
            keep_error(case, message)
        if not warm and state.failed >= self.settings.max_failures:
            # The stop condition never held: the case failed, whatever the policy.
            case.errors.append(f"gave up after {state.failed} failed runs "
                               f"({state.runs} succeeded): {message}")
            return f"{state.failed} runs failed: {message}"
        return None

    def _limit_reached(self, warm: bool) -> str | None:
        settings, state, case = self.settings, self.state, self.case
        stop = settings.stop
        if not warm:
            if state.runs >= settings.min_runs:
                reason = stop.check(state)
                if reason:
                    return reason
            if state.attempted >= settings.max_runs:
                case.warnings.append(f"stopped by the hard run limit ({settings.max_runs} runs) "
                                     f"before the stop condition ({stop.describe()}) held")
                return f"hard limit: {settings.max_runs} runs"
        if state.elapsed_ns >= self._limit_ns:
            case.warnings.append(f"stopped by the hard time limit ({self.time_limit:g} s) "
                                 f"before the stop condition ({stop.describe()}) held")
            return f"hard limit: {self.time_limit:g} s"
        return None


# ---------------------------------------------------------------------------- in-process
class InProcessExecutor(Executor):
    """One sample of the measurement method in this process, meters around it.

    Per run: ``init_run()``, meters started, ``method.sample(implementation, clock)`` (clock
    reads innermost; ``method.sample_warmup`` for a warm-up run, so that warm-up does not use up
    the points a method's schedule needs), meters stopped (innermost first),
    ``release_run()``. Whatever the user's code raises there, but ``KeyboardInterrupt``, is a
    failed run; the implementation's ``on_error`` decides whether the case goes on.
    """

    def __init__(self, implementation: Implementation, method: Method,
                 clock: Callable[[], int], meters: Sequence[Meter] = ()) -> None:
        self.implementation = implementation
        self.method = method
        self.clock = clock
        self.meters = list(meters)
        self.reversed_meters = self.meters[::-1]
        self.record_raw = bool(method.variable_executions)
        # Hooks the implementation does not override are not called: a no-op call per run is
        # pure harness overhead.
        self.init_run = implementation.init_run if _overrides(implementation, "init_run") \
            else None
        self.release_run = implementation.release_run \
            if _overrides(implementation, "release_run") else None

    #: set by the runner while :func:`steadybench.runner.sigint.counting` is in force
    counting_sigint = False

    def prepare(self) -> None:
        before = sigint.arrivals()
        try:
            self.method.prepare(self.implementation, self.clock)
        except KeyboardInterrupt as exc:
            if not sigint.raised_by_benchmark(exc, before, self.counting_sigint):
                raise
            raise sigint.OwnInterrupt(sigint.MESSAGE) from exc

    def sample(self, warmup: bool = False) -> Sample:
        impl = self.implementation
        failure: RunFailure | None = None
        if self.init_run is not None:
            try:
                self.init_run()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - user code is contained
                return Sample.failed(RunFailure.from_exception(exc))
        meters = self.meters
        for meter in meters:
            meter.start()
        before = sigint.arrivals()
        try:
            take = self.method.sample_warmup if warmup else self.method.sample
            elapsed_ns, executions = take(impl, self.clock)
        except KeyboardInterrupt as exc:
            if not sigint.raised_by_benchmark(exc, before, self.counting_sigint):
                raise
            failure = RunFailure(sigint.MESSAGE, exc, tuple(user_frames(exc)))
        except BaseException as exc:  # noqa: BLE001 - user code is contained
            failure = RunFailure.from_exception(exc)
        values = {m.name: m.stop(failure is None) for m in self.reversed_meters} \
            if meters else {}
        if self.release_run is not None:
            try:
                self.release_run()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - user code is contained
                failure = failure or RunFailure.from_exception(exc)
        if failure is not None:
            return Sample(0, 1, values, failure)
        if self.record_raw:
            values["elapsed"] = elapsed_ns / 1e9
            values["executions"] = float(executions)
        return Sample(elapsed_ns, executions, values)

    def on_failure(self, failure: RunFailure) -> OnFailure:
        error = failure.exception if failure.exception is not None else \
            RuntimeError(failure.message)
        return OnFailure.CONTINUE if self.implementation.on_error(error) else OnFailure.STOP


def _overrides(impl: Implementation, hook: str) -> bool:
    """True when ``impl`` provides its own ``hook`` (set on the instance or in a subclass)."""
    from ..model.implementation import Implementation

    return hook in vars(impl) or getattr(type(impl), hook) is not getattr(Implementation, hook)
