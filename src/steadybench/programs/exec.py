"""``steadybench exec``: benchmark external commands, interleaved run by run.

Every command × parameter set is one *job*: a :class:`~steadybench.runner.loop.RunLoop` of its
own around a :class:`CommandExecutor`, so warm-up, stop conditions, the hard time and run limits
(``--time-limit``, ``max_runs``), failure limits, per-run countermeasures and progress behave as
in every other command. The scheduler gives each unfinished job one step (one run) per round —
in a fixed round-robin order, or in an order shuffled every round with a seeded generator — so
slow drift of the machine (heat, background load, frequency) reaches every command alike instead
of biasing whichever happened to be measured last; a job leaves the rotation when its loop ends.
Warm-up runs are interleaved the same way.

A job's elapsed time (what ``--max-time`` and the hard ``--time-limit`` look at) is the time
spent in its own steps, so interleaving does not cut a command's budget. Both limits hold for a
command that never ends, too: every run gets a timeout (:meth:`CommandExecutor.run_timeout`),
the shortest of ``--timeout``, the rest of the hard time limit and, when ``--max-time`` is given,
the whole budget (a run longer than the budget could never fit in it); a run still going then is
killed with its process group and recorded as failed. Precision targets
(``--target-cov``, ``--target-ci``) are judged on the raw run times: the corrected mean of a
command that does little more than start can be near zero, and no relative precision of a
near-zero mean is ever reached.

``processes`` repeats the whole measurement K times (source ``000``: "we run each experiment
program several times"); with ``best_of`` the execution with the smallest mean is reported, as
that harness did, and labelled so: minimum-based figures favour rare lucky runs (Touati et al.,
source ``003`` §1.3), so every output carries a warning.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..environment import capture_environment
from ..errors import ConfigurationError
from ..execution.backend import ExecutionRequest
from ..model.results import (
    PRIMARY_METRIC,
    RUN_WARMUP,
    CaseResult,
    Results,
)
from ..processors import finalize_case
from ..runner.actions import Action, FunctionAction
from ..runner.loop import (
    Executor,
    LoopSettings,
    OnFailure,
    ProgressCallback,
    RunFailure,
    RunLoop,
    Sample,
)
from ..runner.stop import RunState, StopCondition, build_stop_condition
from ..stats.streaming import StreamingStats
from .calibration import Calibration, calibrate
from .choices import ORDERS
from .commands import Command
from .process import CommandRunner, ProcessRun

#: metric name → unit, recorded for every run
EXEC_UNITS = {
    PRIMARY_METRIC: "s", "wall_time_raw": "s", "user_time": "s", "sys_time": "s",
    "max_rss": "B", "exit_code": "",
}

BEST_OF_WARNING = ("best of {k} executions: the figures are those of the execution with the "
                   "smallest mean, which favours rare lucky runs (Touati et al. §1.3); "
                   "prefer the pooled figures of --processes for comparisons")


@dataclass
class ExecOptions:
    """Settings of one ``exec`` session (see ``docs/programs.md``)."""

    stop: StopCondition = field(default_factory=build_stop_condition)
    warmup: int = 0
    time_limit: float = 600.0
    ignore_failure: bool = False
    correct: bool = True
    order: str = "round-robin"
    seed: int | None = None
    processes: int = 1
    best_of: bool = False
    confidence: float = 0.95
    max_failures: int = 100
    #: hard limit on measured runs of one command (at one parameter set), whatever the stop
    #: condition says
    max_runs: int = 100_000_000
    #: the ``--max-time`` budget when given: a single run longer than it is killed
    max_time: float | None = None

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ConfigurationError(
                f"order must be one of {', '.join(ORDERS)}, not {self.order!r}")
        if self.warmup < 0:
            raise ConfigurationError(f"--warmup must not be negative, got {self.warmup}")
        if self.processes < 1:
            raise ConfigurationError(f"--processes must be at least 1, got {self.processes}")
        if not self.time_limit > 0:
            raise ConfigurationError(f"--time-limit must be positive, got {self.time_limit}")
        if self.max_runs < 1:
            raise ConfigurationError(f"--max-runs must be at least 1, got {self.max_runs}")
        if self.max_failures < 1:
            raise ConfigurationError(
                f"max_failures must be at least 1, got {self.max_failures}")
        if self.max_time is not None and not self.max_time > 0:
            raise ConfigurationError(f"--max-time must be positive, got {self.max_time}")

    def loop_settings(self) -> LoopSettings:
        """The run loop's settings: the same stop condition and limits as every command."""
        return LoopSettings(stop=self.stop, warmup=self.warmup, time_limit=self.time_limit,
                            max_runs=self.max_runs, max_failures=self.max_failures)


@dataclass
class Job:
    """One command at one parameter set, during one execution: its run loop."""

    command: Command
    params: dict[str, Any]
    argv: list[str]
    loop: RunLoop

    @property
    def case(self) -> CaseResult:
        return self.loop.case

    @property
    def state(self) -> RunState:
        return self.loop.state

    @property
    def done(self) -> bool:
        return self.loop.done


#: why a run's timeout was what it was → how a run killed by it is described
_TIMEOUT_WHY = {
    "timeout": "timed out after {s:g} s (process group killed)",
    "max-time": "still running after {s:g} s, the whole --max-time budget (process group "
                "killed; raise --max-time, or set --timeout)",
    "time-limit": "still running at the hard time limit of {limit:g} s (process group killed; "
                  "raise --time-limit, or set --timeout)",
}


#: what the shell's own exit statuses mean (POSIX XCU §2.8.2)
_SHELL_STATUS = {126: "the shell found the command but could not run it",
                 127: "the shell found no such command, or the interpreter on its #! line"}


def _failure_message(command: Command, case: CaseResult, run: ProcessRun,
                     timeout: float | None, why_timeout: str = "timeout",
                     time_limit: float | None = None, shell: bool = False) -> str:
    why = run.describe_failure()
    if run.timed_out and timeout is not None:
        why = _TIMEOUT_WHY[why_timeout].format(s=timeout, limit=time_limit or timeout)
    elif shell and run.exit_code in _SHELL_STATUS:
        why += f" ({_SHELL_STATUS[run.exit_code]})"
    msg = f"command {command.text!r}"
    if case.params:
        msg += f" [{case.param_name}]"
    msg += f" failed: {why}"
    tail = run.stderr_excerpt()
    if tail:
        msg += "; stderr: " + tail
    return msg


class CommandExecutor(Executor):
    """One run of an external command: wall time from the runner's clock around the process,
    CPU time and peak memory from ``wait4``. A non-zero exit status or a timeout is a failed
    run, which ends the case unless failures are ignored (``--ignore-failure``).

    ``time_limit`` and ``max_time`` (seconds, optional) bound every run, with :attr:`state`
    (the loop's :class:`RunState`, set once the loop exists) telling the time already spent:
    see :meth:`run_timeout`. ``stated_limit`` is the case's ``--time-limit`` as the user gave
    it, quoted in messages (``time_limit`` is what is left of it for this execution).
    """

    def __init__(self, runner: CommandRunner, command: Command, argv: Sequence[str],
                 case: CaseResult, ignore_failure: bool = False,
                 time_limit: float | None = None, max_time: float | None = None,
                 stated_limit: float | None = None) -> None:
        self.runner = runner
        self.command = command
        self.argv = list(argv)
        self.case = case
        self.ignore_failure = ignore_failure
        self.time_limit = time_limit
        self.max_time = max_time
        self.stated_limit = stated_limit if stated_limit is not None else time_limit
        self.state: RunState | None = None

    def run_timeout(self) -> tuple[float | None, str]:
        """The timeout of the next run and what sets it ("timeout", "max-time" or
        "time-limit"): the shortest of the runner's ``--timeout``, the ``--max-time`` budget
        and what is left of the hard time limit. (None, "") when there is none."""
        limits: list[tuple[float, str]] = []
        user = getattr(self.runner, "timeout", None)
        if user is not None:
            limits.append((user, "timeout"))
        if self.max_time is not None:
            limits.append((self.max_time, "max-time"))
        if self.time_limit is not None:
            spent = self.state.elapsed if self.state is not None else 0.0
            limits.append((max(self.time_limit - spent, 1e-3), "time-limit"))
        if not limits:
            return None, ""
        return min(limits, key=lambda item: item[0])

    def sample(self, warmup: bool = False) -> Sample:
        timeout, why = self.run_timeout()
        # the runner applies its own --timeout; only a shorter one is passed
        run = self.runner.run(self.argv, timeout=timeout) if why in ("max-time", "time-limit") \
            else self.runner.run(self.argv)
        raw = run.wall_ns / 1e9
        values: dict[str, float | None] = {
            PRIMARY_METRIC: raw, "wall_time_raw": raw,  # corrected at the end
            "user_time": run.user_time, "sys_time": run.sys_time,
            "max_rss": float(run.max_rss) if run.max_rss is not None else None,
            "exit_code": float(run.exit_code) if run.exit_code is not None
            else (-float(run.signal) if run.signal is not None else None),
        }
        if run.ok:
            return Sample(run.wall_ns, 1, values)
        message = _failure_message(self.command, self.case, run, timeout, why or "timeout",
                                   self.stated_limit, bool(getattr(self.runner, "shell", False)))
        return Sample(run.wall_ns, 1, values, RunFailure(message))

    def on_failure(self, failure: RunFailure) -> OnFailure:
        return OnFailure.IGNORE if self.ignore_failure else OnFailure.STOP


class ExecSession:
    """Measures commands; keeps every case measured so far in :attr:`executions`.

    Args:
        commands: the commands (templates).
        param_sets: parameter sets (``[{}]`` when there are no parameters).
        runner: the :class:`CommandRunner` (or a test double with ``resolve``/``run``/``clock``).
        options: :class:`ExecOptions`.
        calibrate_fn: measures the start-up cost (default :func:`calibrate`).
        progress: called with (case, state) while a job runs, as every run loop does (at most
            about ten times a second per job).
    """

    def __init__(self, commands: Sequence[Command], param_sets: Sequence[dict[str, Any]],
                 runner: CommandRunner, options: ExecOptions,
                 calibrate_fn: Callable[[CommandRunner], Calibration] = calibrate,
                 progress: ProgressCallback | None = None) -> None:
        if not commands:
            raise ConfigurationError("no command to benchmark")
        self.commands = list(commands)
        self.param_sets = list(param_sets) or [{}]
        self.runner = runner
        self.options = options
        self.calibrate_fn = calibrate_fn
        self.progress = progress
        #: called before each run of a command (machine countermeasures such as cool-down)
        self.before_run: Callable[[], None] | None = None
        #: called after each run of a command (the machine session's after-run stage)
        self.after_run: Callable[[], None] | None = None
        #: per-run actions of every job's loop, besides :attr:`before_run`
        self.before_run_actions: list[Action] = []
        self.after_run_actions: list[Action] = []
        self.rng = random.Random(options.seed)
        #: per execution: the jobs, in command × parameter order
        self.executions: list[list[Job]] = []
        #: the execution layer's records of them are in each merged case's ``processes``
        self.calibrations: list[Calibration | None] = []
        # Check every command before anything runs: a typo fails at once.
        self._argvs = {
            (ci, pi): runner.resolve(cmd.render(ps))
            for ci, cmd in enumerate(self.commands) for pi, ps in enumerate(self.param_sets)
        }
        #: one case per command × parameter set, in that order: the executions merged
        self.merged = [self._new_case(ci, pi) for ci in range(len(self.commands))
                       for pi in range(len(self.param_sets))]

    # ------------------------------------------------------------------ running
    def run(self) -> Results:
        """All executions through the execution layer, then the finished results (what
        :meth:`results` returns). The hard time limit covers all executions of a case together
        (the execution layer's one meaning of ``--time-limit``)."""
        from ..execution.backends import CommandBackend
        from ..execution.driver import StageActions, run_executions

        opts = self.options
        before = list(self.before_run_actions)
        if self.before_run is not None:
            hook = self.before_run
            before.insert(0, FunctionAction(lambda ctx: hook()))
        after = list(self.after_run_actions)
        if self.after_run is not None:
            after_hook = self.after_run
            after.append(FunctionAction(lambda ctx: after_hook()))
        clock = self.runner.clock
        run_executions(CommandBackend(self), self.merged, opts.processes,
                       time_limit=opts.time_limit, method=None, confidence=opts.confidence,
                       stop_on_error=not opts.ignore_failure,
                       actions=StageActions(before_run=before, after_run=after),
                       clock=lambda: clock() / 1e9)
        return self.results()

    def _new_jobs(self, request: ExecutionRequest) -> list[Job]:
        jobs: list[Job] = []
        opts = self.options
        own, report = self.progress, request.progress

        def progress(case: CaseResult, state: RunState) -> None:
            if own is not None:
                own(case, state)
            if report is not None:
                report(sum(job.state.runs for job in jobs))

        settings = dataclasses.replace(opts.loop_settings(),
                                       time_limit=min(opts.time_limit, request.time_left))
        for ci, cmd in enumerate(self.commands):
            for pi, ps in enumerate(self.param_sets):
                case = self._new_case(ci, pi)
                argv = self._argvs[(ci, pi)]
                executor = CommandExecutor(self.runner, cmd, argv, case, opts.ignore_failure,
                                           time_limit=settings.time_limit, max_time=opts.max_time,
                                           stated_limit=opts.time_limit)
                loop = RunLoop(executor, case, settings, clock=self.runner.clock,
                               before_run=list(request.before_run),
                               after_run=list(request.after_run),
                               progress=progress if own or report else None)
                executor.state = loop.state
                jobs.append(Job(cmd, dict(ps), argv, loop))
        return jobs

    def _new_case(self, ci: int, pi: int) -> CaseResult:
        cmd, ps = self.commands[ci], self.param_sets[pi]
        case = CaseResult(benchmark=cmd.name, implementation=cmd.name, params=dict(ps),
                          method="exec")
        case.units.update(EXEC_UNITS)
        case.extra["command"] = cmd.text
        case.extra["argv"] = list(self._argvs[(ci, pi)])
        return case

    def execute_once(self, request: ExecutionRequest) -> tuple[list[Job], Calibration | None]:
        """One execution: every command × parameter set stepped in turn until each loop ends
        (:class:`steadybench.execution.backends.CommandBackend` calls it)."""
        opts = self.options
        calibration = None
        self.calibrations.append(None)
        self.executions.append([])
        if opts.correct:
            calibration = self.calibrate_fn(self.runner)
            self.calibrations[-1] = calibration
        jobs = self._new_jobs(request)
        self.executions[-1] = jobs
        try:
            while True:
                active = [j for j in jobs if not j.done]
                if not active:
                    break
                if opts.order == "random":
                    self.rng.shuffle(active)
                for job in active:
                    job.loop.step()
                if calibration is not None:
                    # One trivial process per round, so the start-up cost is measured under
                    # the same drift as the commands.
                    self._calibration_run(calibration)
        except KeyboardInterrupt:
            for job in jobs:
                job.loop.interrupt()
            raise
        finally:
            for job in jobs:
                job.loop.close()
                _require_a_success(job)
            _apply_correction(jobs, calibration)
        return jobs, calibration

    def _calibration_run(self, calibration: Calibration) -> None:
        run = self.runner.run(calibration.command)
        if run.ok:
            calibration.samples.append(run.wall_ns / 1e9)

    # ------------------------------------------------------------------ results
    def results(self, interrupted: bool = False) -> Results:
        """Finished cases of everything measured so far (safe to call after Ctrl-C; once)."""
        cases = [self._finish(index, case) for index, case in enumerate(self.merged)
                 if any(index < len(jobs) for jobs in self.executions)]
        results = Results(suite="exec", cases=cases, environment=capture_environment(),
                          interrupted=interrupted)
        results.context["programs"] = {
            "command": "exec",
            "commands": [c.text for c in self.commands],
            "shell": bool(getattr(self.runner, "shell", False)),
            "timeout": getattr(self.runner, "timeout", None),
            "order": self.options.order,
            "seed": self.options.seed,
            "warmup": self.options.warmup,
            "stop": self.options.stop.describe(),
            "time_limit": self.options.time_limit,
            "max_runs": self.options.max_runs,
            "processes": self.options.processes,
            "best_of": self.options.best_of,
            "startup_correction": self.options.correct,
            "calibration": [c.to_dict() if c else None for c in self.calibrations],
        }
        return results

    def _finish(self, index: int, merged: CaseResult) -> CaseResult:
        """The case of one command × parameter set: its executions merged by the execution
        layer (or, with ``best_of``, the execution with the smallest mean), with exec's own
        figures (start-up correction, exit statuses)."""
        opts = self.options
        per_exec = [jobs[index] for jobs in self.executions if index < len(jobs)]
        chosen: int | None = 0 if len(per_exec) == 1 else None
        case = merged
        if opts.best_of and len(per_exec) > 1:
            means = [r.spread.mean if r.spread is not None and r.spread.mean is not None
                     else math.inf for r in merged.processes]
            chosen = int(np.argmin(means))
            case = per_exec[chosen].case
            case.extra.update({k: v for k, v in merged.extra.items() if k not in case.extra})
        if len(per_exec) == 1:
            case.stop_reason = per_exec[0].case.stop_reason
        else:
            case.stop_reason = "; ".join(dict.fromkeys(j.case.stop_reason for j in per_exec
                                                       if j.case.stop_reason))
        cal = self.calibrations[chosen if chosen is not None else 0]
        case.extra["calibration"] = cal.to_dict() if cal else None
        case.extra["shell"] = bool(getattr(self.runner, "shell", False))
        codes: dict[str, int] = {}
        for value, status in zip(case.metrics.get("exit_code", []), case.status):
            if status != RUN_WARMUP:
                key = "signal" if math.isnan(value) else str(int(value))
                codes[key] = codes.get(key, 0) + 1
        case.extra["exit_statuses"] = codes
        if opts.best_of and len(per_exec) > 1:
            case.method = f"exec (best of {len(per_exec)})"
            case.extra["best_of"] = {"executions": len(per_exec), "chosen": chosen,
                                     "label": f"best of {len(per_exec)} executions "
                                              "(smallest mean)"}
            _warn(case, BEST_OF_WARNING.format(k=len(per_exec)))
            case.estimate = None  # the chosen execution's own estimate, made again
        finalize_case(case, (), None, opts.confidence)
        if case is not merged:  # best of: the other executions' records, for reference
            case.processes = list(merged.processes)
        raw = case.values("wall_time_raw")
        figures: dict[str, Any] = {
            "raw_mean": float(np.mean(raw)) if raw else None,
            "startup": cal.value if cal else 0.0,
            "corrected": cal is not None,
        }
        if opts.best_of and len(per_exec) > 1:
            figures["label"] = case.extra["best_of"]["label"]
        estimate = case.estimate
        assert estimate is not None  # finalize_case always makes one
        case.estimate = dataclasses.replace(estimate, fields={**estimate.fields, **figures})
        if cal is not None and case.n:
            mean = case.stats.get("mean")
            if mean is not None and mean < cal.value:
                _warn(
                    case,
                    f"the command runs only {mean * 1e3:.3g} ms beyond the start-up cost of "
                    f"{cal.value * 1e3:.3g} ms that was subtracted: the correction dominates the "
                    "corrected figure; measure more work per run (or use 'steadybench iters')")
        if case.n and "max_rss" not in case.stream:
            _warn(case, "peak memory not shown: no C compiler could build the launcher "
                        "that measures a command's own peak (set $CC), and the kernel's figure "
                        "for a child of steadybench never exceeded steadybench's own")
        return case


def _require_a_success(job: Job) -> None:
    """A finished, uninterrupted job without one successful measured run failed, even when its
    failures were ignored (``-i``) and its time budget ran out first: say so in its errors."""
    case, state = job.case, job.state
    if case.interrupted or case.errors or state.runs > 0 or state.attempted == 0:
        return
    last = f"; last: {state.last_error}" if state.last_error else ""
    case.errors.append(f"no run succeeded ({state.failed} failed{last})")


def _apply_correction(jobs: Sequence[Job], calibration: Calibration | None) -> None:
    """Set every run's ``wall_time`` to its raw time minus the mean start-up cost."""
    startup = calibration.value if calibration is not None else 0.0
    for job in jobs:
        case = job.case
        raw = case.metrics.get("wall_time_raw")
        if raw is None:
            continue
        case.metrics[PRIMARY_METRIC] = array("d", (v - startup for v in raw))
        case.stream[PRIMARY_METRIC] = StreamingStats().extend(case.values(PRIMARY_METRIC))


def _warn(case: CaseResult, message: str) -> None:
    if message not in case.warnings:
        case.warnings.append(message)


def exec_commands(commands: Sequence[Command], param_sets: Sequence[dict[str, Any]] | None = None,
                  *, options: ExecOptions | None = None, shell: bool = False,
                  timeout: float | None = None, input_path: str | None = None,
                  output_path: str | None = None,
                  clock: Callable[[], int] = time.perf_counter_ns) -> Results:
    """Library entry point: measure ``commands`` and return finished :class:`Results`."""
    runner = CommandRunner(shell=shell, timeout=timeout, input_path=input_path,
                           output_path=output_path, clock=clock)
    session = ExecSession(commands, param_sets or [{}], runner, options or ExecOptions())
    return session.run()
