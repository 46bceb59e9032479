"""The one driver: K executions of a case (or of a group of interleaved cases) in turn.

:func:`run_executions` owns everything that must mean the same whichever backend runs the
executions:

* **the hard time limit across all K executions** (``time_limit`` seconds from the first
  execution's start, on ``clock``): each execution is told the time left, and none starts once
  it is spent (the case records how many ran);
* **stop on a failing execution**: an execution that gave no successful run (a load error, a
  crash, a kill at the limit) or, under the "stop" error policy, one with a failed run, ends
  the case: later executions would do the same;
* **Ctrl-C returns the partial case**: the executions so far, the interrupted one included, are
  merged, the case is marked interrupted, then the ``KeyboardInterrupt`` is re-raised;
* **progress**: ``progress(case, RunState)`` with the runs of all executions so far and the
  value so far;
* **countermeasures on all four stages**: the before/after-benchmark actions run here, around
  all executions (the executions inherit what they set: frequency, pinning, priority), the
  before/after-run ones go with every execution's request; every action is closed (its setting
  put back) on every exit path;
* **the merge**: :func:`steadybench.execution.merge.merge_executions`, once per case;
* **the machine's CPU pressure** over all K executions (:mod:`steadybench.cpu_pressure`):
  recorded in each case, with a warning when the machine was too contended for the case to be
  compared with runs taken at other times.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cpu_pressure import PressureMark, busy_share, busy_text, is_busy
from .backend import Backend, ExecutionRequest, Outcome
from .merge import merge_executions

if TYPE_CHECKING:
    from ..model.results import CaseResult
    from ..runner.actions import Action, RunContext
    from ..runner.loop import ProgressCallback


@dataclass(frozen=True)
class StageActions:
    """The countermeasures of the four stages (Rancid §V-A) and the context the
    benchmark-stage ones get."""

    before_benchmark: Sequence[Action] = ()
    before_run: Sequence[Action] = ()
    after_run: Sequence[Action] = ()
    after_benchmark: Sequence[Action] = ()
    context: RunContext | None = None

    @classmethod
    def of_runner(cls, actions: Mapping[Any, Sequence[Action]],
                  context: RunContext | None) -> StageActions:
        """From a :class:`~steadybench.runner.runner.Runner`'s ``actions`` by stage."""
        from ..runner.actions import Stage

        return cls(tuple(actions[Stage.BEFORE_BENCHMARK]), tuple(actions[Stage.BEFORE_RUN]),
                   tuple(actions[Stage.AFTER_RUN]), tuple(actions[Stage.AFTER_BENCHMARK]),
                   context)


def run_executions(backend: Backend, cases: CaseResult | Sequence[CaseResult], count: int, *,
                   time_limit: float, method: Any = None, confidence: float = 0.95,
                   stop_on_error: bool = True, actions: StageActions | None = None,
                   progress: ProgressCallback | None = None,
                   on_execution: Callable[[Outcome], bool | None] | None = None,
                   hard_limits: Mapping[str, Any] | None = None,
                   clock: Callable[[], float] = time.monotonic) -> list[list[Outcome]]:
    """Run ``count`` executions through ``backend`` and merge them into ``cases`` (one case,
    or one per case an execution of the backend measures). Returns the outcomes of each
    execution. ``on_execution`` sees each outcome as soon as its execution ended (a fleet
    streams it off the host); returning False stops the case as interrupted. ``hard_limits``
    is recorded in each case's ``extra["hard_limits"]``."""
    merged = [cases] if not isinstance(cases, Sequence) else list(cases)
    stages = actions or StageActions()
    done: list[list[Outcome]] = []
    finished = False

    def finish() -> None:
        nonlocal finished
        if not finished:
            finished = True
            _finish(merged, done, count, method, confidence, backend, hard_limits)
            _record_pressure(merged, pressure_from)

    busy_share()  # a bad STEADYBENCH_BUSY_SHARE is one line now, not after the measuring
    pressure_from = PressureMark.now()

    deadline = clock() + time_limit
    try:
        for action in stages.before_benchmark:
            action(stages.context)  # type: ignore[arg-type]
        for index in range(count):
            left = deadline - clock()
            if left <= 0:
                for case in merged:
                    case.warnings.append(
                        f"stopped by the hard time limit ({time_limit:g} s) after "
                        f"{index} of {count} executions")
                break
            runs_before = sum(o.case.n for outcomes in done for o in outcomes
                              if o.case is not None)
            request = ExecutionRequest(
                index=index, planned=count, time_left=left,
                progress=_progress(progress, merged[0], runs_before, done, clock),
                before_run=tuple(stages.before_run), after_run=tuple(stages.after_run))
            outcomes = list(backend.execute(request))
            done.append(outcomes)
            stopped = on_execution is not None and any(
                on_execution(o) is False for o in outcomes)
            interrupt = next((o.interrupt for o in outcomes if o.interrupt is not None), None)
            if interrupt is not None:
                raise interrupt
            if stopped:
                for case in merged:
                    case.interrupted = True  # the caller stopped the case (a fleet cancel)
                break
            if all(o.failed or (stop_on_error and o.case is not None and o.case.errors)
                   for o in outcomes):
                break
        finish()
        for action in stages.after_benchmark:
            action(stages.context)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        # the partial case: every execution so far, the interrupted one included
        finish()
        for case in merged:
            case.interrupted = True
            case.stop_reason = "interrupted"
        raise
    except BaseException:
        finish()  # what was measured stays in the case, whatever failed after it
        raise
    finally:
        for action in reversed([*stages.before_benchmark, *stages.after_benchmark]):
            action.close(stages.context)  # type: ignore[arg-type]
    return done


def _finish(merged: Sequence[CaseResult], done: Sequence[Sequence[Outcome]], count: int,
            method: Any, confidence: float, backend: Backend,
            hard_limits: Mapping[str, Any] | None) -> None:
    for position, case in enumerate(merged):
        outcomes = [outcomes[position] for outcomes in done if position < len(outcomes)]
        merge_executions(case, outcomes, count, method=method, confidence=confidence,
                         isolation=backend.isolation, hard_limits=hard_limits)


def _record_pressure(merged: Sequence[CaseResult], since: PressureMark) -> None:
    """Each case's CPU pressure over its executions, and the warning when it was busy."""
    share = since.share_until(PressureMark.now())
    for case in merged:
        case.cpu_pressure = share
        if share is not None and is_busy(share):
            case.warnings.append(
                f"the machine was busy: {busy_text(share)}; not compared with runs taken at "
                "other times (steadybench ab measures both versions together)")


def _progress(progress: ProgressCallback | None, case: CaseResult, runs_before: int,
              done: Sequence[Sequence[Outcome]],
              clock: Callable[[], float]) -> Callable[[int], None] | None:
    """The request's progress callback: the runs of every execution so far, and the value so
    far (the median of the finished executions' sample medians)."""
    if progress is None:
        return None
    from ..runner.stop import RunState

    started = clock()
    so_far = value_so_far(done)

    def report(runs: int) -> None:
        progress(case, RunState(runs=runs_before + runs,
                                elapsed_ns=int((clock() - started) * 1e9), estimate=so_far))

    return report


def value_so_far(done: Sequence[Sequence[Outcome]]) -> float | None:
    """The median of the finished executions' sample medians (of the first case): a progress
    display's "current estimate" (the headline is made by the method when the case ends)."""
    medians = []
    for outcomes in done:
        case = outcomes[0].case if outcomes else None
        values = case.values() if case is not None else []
        if values:
            medians.append(statistics.median(values))
    return statistics.median(medians) if medians else None
