"""The places an execution can run. Each is one class with ``isolation``, ``cases`` and
``execute(request)`` (:class:`steadybench.execution.backend.Backend`); a valgrind-counting
worker, a remote host or a fleet task is one more.

* :class:`WorkerBackend` — a spawned interpreter per execution (``run``'s default, ``ab``,
  ``evaluate``, the fleet, the pytest plugin): its own hash seed, environment size and process
  group (:mod:`steadybench.runner.workers`);
* :class:`InProcessBackend` — the execution in this process (code a fresh interpreter cannot
  import); its executions share this process's state, so they are repetitions rather than
  independent executions, and the case says so in ``extra["executions"]["isolation"]``;
* :class:`CommandBackend` — one execution is one run loop of external commands (``exec``,
  ``ab`` and ``evaluate`` on commands): each run a fresh process, several commands stepped in
  turn (interleaved), the start-up cost measured beside them and subtracted.
"""

from __future__ import annotations

import copy
import pickle
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..model.execution import RunSpread
from .backend import ExecutionRequest, Outcome

if TYPE_CHECKING:
    from ..meters.base import Meter
    from ..model.implementation import Implementation
    from ..model.parameters import Parameters
    from ..model.results import CaseResult
    from ..programs.exec import ExecSession
    from ..runner.runner import Runner
    from ..runner.worker import WorkerTask


class WorkerBackend:
    """Each execution a spawned worker interpreter (``python -m steadybench.runner.worker``)
    running ``runner``'s in-process measurement of the case; the worker is killed
    :data:`~steadybench.runner.workers.KILL_GRACE_S` after the time left.

    ``task`` is a ready-made :class:`~steadybench.runner.worker.WorkerTask` (a fleet host gets
    it from the client; ``ab`` selects a case of a file in another interpreter); otherwise it is
    made from the runner, implementation, parameters and meters.
    """

    isolation = "spawned worker processes"
    cases = 1

    def __init__(self, runner: Runner, implementation: Implementation | None = None,
                 params: Parameters | None = None, meters: Sequence[Meter] = (),
                 benchmark: str | None = None, *, task: WorkerTask | None = None) -> None:
        from ..runner.workers import make_task

        self.runner = runner
        if task is None:
            assert implementation is not None and params is not None
            task = make_task(runner, implementation, params, meters, benchmark)
        self.task = task

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        from ..runner.actions import Stage
        from ..runner.workers import KILL_GRACE_S, run_execution

        inner = self.runner.worker_runner(time_limit=request.time_left)
        inner.actions[Stage.BEFORE_RUN] = list(request.before_run)
        inner.actions[Stage.AFTER_RUN] = list(request.after_run)
        self.task.runner = pickle.dumps(inner)
        deadline = time.monotonic() + request.time_left + KILL_GRACE_S
        return [run_execution(self.task, request.index, deadline, request.progress)]


class InProcessBackend:
    """Each execution the case's in-process measurement (set-up, calibration, warm-up, runs,
    teardown) with a fresh copy of the method, in this process."""

    isolation = "in this process (executions share its state)"
    cases = 1

    def __init__(self, runner: Runner, implementation: Implementation, params: Parameters,
                 meters: Sequence[Meter] = (), benchmark: str | None = None) -> None:
        self.runner = runner
        self.implementation = implementation
        self.params = params
        self.meters = list(meters)
        self.benchmark = benchmark

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        from ..runner.actions import Stage

        inner = self.runner.worker_runner(time_limit=request.time_left)
        inner.method = copy.deepcopy(self.runner.method)
        inner.actions[Stage.BEFORE_RUN] = list(request.before_run)
        inner.actions[Stage.AFTER_RUN] = list(request.after_run)
        report = request.progress

        def progress(case: CaseResult, state: Any) -> None:
            if report is not None:
                report(int(state.runs))

        outcome = Outcome(index=request.index, method=inner.method)
        try:
            outcome.case = inner.execute(self.implementation, self.params, self.meters,
                                         self.benchmark, progress)
        except KeyboardInterrupt as exc:
            outcome.case = inner.last_case
            outcome.interrupted = True
            outcome.interrupt = exc
        return [outcome]


class CommandBackend:
    """Each execution one run loop per command × parameter set of an ``exec`` session,
    stepped in turn (:class:`steadybench.programs.exec.ExecSession`); one outcome per case,
    valued by the mean of its start-up-corrected runs (hyperfine's statistic)."""

    isolation = "command sessions (a fresh process per run)"

    def __init__(self, session: ExecSession) -> None:
        self.session = session

    @property
    def cases(self) -> int:
        return len(self.session.commands) * len(self.session.param_sets)

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        interrupt: BaseException | None = None
        try:
            jobs, calibration = self.session.execute_once(request)
        except KeyboardInterrupt as exc:
            interrupt = exc
            jobs, calibration = self.session.executions[-1], self.session.calibrations[-1]
            if not jobs:  # interrupted before any command ran (while calibrating)
                raise
        startup = calibration.value if calibration is not None else 0.0
        outcomes = []
        for job in jobs:
            outcome = Outcome(index=request.index, case=job.case, spread=_spread(job.case,
                                                                                startup))
            if interrupt is not None:
                outcome.interrupted = True
                outcome.interrupt = interrupt
            outcomes.append(outcome)
        return outcomes


def _spread(case: CaseResult, startup: float) -> RunSpread:
    """The plain figures ``exec`` records of one execution's successful runs."""
    import statistics

    ok = case.values()
    raw = case.values("wall_time_raw")
    return RunSpread(mean=statistics.fmean(ok) if ok else None,
                     stdev=statistics.stdev(ok) if len(ok) > 1 else None,
                     median=statistics.median(ok) if ok else None,
                     raw_mean=statistics.fmean(raw) if ok and raw else None, startup=startup)


def single_execution(backend: Any, index: int, time_left: float,
                     progress: Callable[[int], None] | None = None) -> Outcome:
    """One execution of a one-case backend outside the driver (``ab`` interleaves variants
    round by round, one execution each): the same request the driver makes."""
    return backend.execute(ExecutionRequest(index=index, planned=index + 1,
                                            time_left=time_left, progress=progress))[0]
