"""Counting external programs: ``exec`` (the count per process) and ITERS programs (the count
per iteration).

``exec --measure instructions`` counts each command's whole process, once per layout: an
external program's start-up is part of what ``exec`` measures (as hyperfine's time is), and the
count of one process is exact, so repeating it in one layout would give the same number again.
``-p K`` counts it in K layouts and reports their median and range.

``iters --measure instructions`` runs an ITERS program (source ``004``; ``contrib/c``,
:mod:`steadybench.iters_protocol`) at ``ITERS = n, 2n, …`` and fits the count on ITERS, the
regression of ``004`` with counts for BATCHTIME: the slope is the count per iteration, the
intercept the program's start-up and set-up. ``n`` is sized from a counted probe at ITERS = 1
and 2, as for Python cases (:func:`.child.calls_for`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import MeasurementError
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult
from .backend import NOT_TIME, CountedExecution, count_process, make_identity
from .child import calls_for
from .fit import fit_counts
from .python import CountSettings, LayoutCount, count_estimate, fill_case
from .valgrind import CountFailure, Valgrind, over_limit


def time_budget(limit: float, label: str) -> Callable[[], float]:
    """The seconds left of a case's ``--time-limit``, which covers all its counted processes
    together (the execution layer's meaning); a ``hang`` failure once it is spent."""
    deadline = time.monotonic() + limit

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise over_limit(label, limit)
        return remaining
    return left


def count_command(case: CaseResult, valgrind: Valgrind, argv: Sequence[str],
                  settings: CountSettings) -> None:
    """Count ``argv``'s process in each layout into ``case`` (errors: one line in
    ``case.errors``)."""
    case.unit = settings.measure
    case.units[PRIMARY_METRIC] = settings.measure
    case.method = "count"
    done: list[CountedExecution] = []
    left = time_budget(settings.time_limit, case.label)
    try:
        for index in range(settings.layouts):
            done.append(count_process(valgrind, argv, settings.measure, index,
                                      timeout=left(), label=case.label))
    except CountFailure as exc:
        case.errors.append(str(over_limit(case.label, settings.time_limit)
                               if exc.kind == "hang" else exc))
        case.stop_reason = "count failed"
    for execution in done:
        case.add_run(RUN_OK, {PRIMARY_METRIC: float(execution.value)})
        case.accumulate({PRIMARY_METRIC: float(execution.value)})
    case.extra["counts"] = {
        "measure": settings.measure, "per": "process",
        "identity": make_identity(settings.measure, valgrind, argv[0]).to_dict(),
        "executions": [{"layout": e.layout.to_dict(), "counts": e.counts.to_dict(),
                        "value": e.value} for e in done], "note": NOT_TIME}
    if not done:
        return
    values = [float(e.value) for e in done]
    if len(done) >= 2:
        from ..model.execution import Execution

        case.processes = [Execution(index=i, value=v, n=1, stop_reason="counted",
                                    counts={k: float(c) for k, c in e.counts.to_dict().items()
                                            if c is not None})
                          for i, (v, e) in enumerate(zip(values, done, strict=True))]
    case.stop_reason = case.stop_reason or f"counted in {len(done)} layout(s)"
    mean = statistics.fmean(values)
    from ..model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS, Estimate

    spread = statistics.stdev(values) / mean if len(values) >= 2 and mean else None
    case.estimate = Estimate(
        statistics.median(values), min(values), max(values), None, settings.measure, "count",
        "count per process" + (" (median of layouts)" if len(values) >= 2 else ""),
        LEVEL_EXECUTIONS if len(values) >= 2 else LEVEL_RUNS, len(values), len(values),
        None, spread, {"per": "process", "note": NOT_TIME,
                       "interval_scope": f"the range of {len(values)} layouts' counts"})


def count_iters(case: CaseResult, valgrind: Valgrind, argv_for: Callable[[int], list[str]],
                settings: CountSettings, iters: Sequence[int] | None = None) -> None:
    """Count an ITERS program at several ITERS per layout and fit the line into ``case``.
    ``argv_for(n)`` is the command line at ITERS = n; ``iters`` fixes the points (default:
    ``n, 2n, …`` sized from a probe)."""
    case.unit = settings.measure
    case.method = "count"

    left = time_budget(settings.time_limit, case.label)

    def counted(n: int, index: int) -> CountedExecution:
        return count_process(valgrind, argv_for(n), settings.measure, index,
                             timeout=left(), label=case.label)

    try:
        probe = None
        if iters is None:
            probe = (counted(1, 0), counted(2, 0))
            n = calls_for(probe[1].value - probe[0].value)
            iters = [n * k for k in range(1, settings.points + 1)]
        layouts = []
        for index in range(settings.layouts):
            done = [probe[0] if (probe and index == 0 and c == 1) else
                    probe[1] if (probe and index == 0 and c == 2) else counted(c, index)
                    for c in iters]
            layouts.append(LayoutCount(tuple(done),
                                       fit_counts(iters, [e.value for e in done],
                                                  settings.confidence)))
    except (CountFailure, MeasurementError) as exc:
        hang = isinstance(exc, CountFailure) and exc.kind == "hang"
        case.errors.append(str(over_limit(case.label, settings.time_limit) if hang else exc))
        case.stop_reason = "count failed"
        return
    record: dict[str, Any] = {
        "measure": settings.measure, "calls": list(iters),
        "identity": make_identity(settings.measure, valgrind, argv_for(1)[0]).to_dict(),
        "layouts": [lc.to_dict() for lc in layouts], "note": NOT_TIME}
    fill_case(case, layouts, record, what="iteration")
    case.estimate = count_estimate(settings.measure, [lc.fit.slope for lc in layouts],
                                   [lc.fit for lc in layouts], settings.confidence, case.n,
                                   "iteration")
