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

from ..errors import MeasurementError
from ..execution.backend import ExecutionRequest, Outcome
from ..model.estimate import Estimate
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult
from .backend import NOT_TIME, CountedExecution, count_process, make_identity
from .child import calls_for
from .fit import fit_counts
from .layout import CountLayout
from .python import CountSettings, LayoutCount, count_estimate, fill_case, per_call
from .valgrind import CountFailure, Valgrind, over_limit


class _ProgramCountBackend:
    """A backend of the execution layer (:mod:`steadybench.execution`) for external programs:
    execution ``i`` counts in layout ``i``. The driver owns what is common to every backend
    (the case's ``--time-limit`` across all layouts, the stop after a failing layout, Ctrl-C,
    and the one merge, :func:`~steadybench.execution.merge.merge_executions`); a subclass says
    what one layout counts (:meth:`count_layout`)."""

    isolation = "counted processes under valgrind"
    cases = 1

    def __init__(self, case: CaseResult, valgrind: Valgrind, settings: CountSettings) -> None:
        self.template, self.valgrind, self.settings = case, valgrind, settings
        self.label = case.label

    def _raw(self) -> CaseResult:
        t = self.template
        return CaseResult(benchmark=t.benchmark, implementation=t.implementation,
                          params=dict(t.params), unit=self.settings.measure, method="count")

    def _process(self, argv: Sequence[str], index: int, deadline: float) -> CountedExecution:
        return count_process(self.valgrind, argv, self.settings.measure, index,
                             timeout=max(deadline - time.monotonic(), 0.001), label=self.label)

    def count_layout(self, index: int, deadline: float,
                     ) -> tuple[CaseResult, CountLayout, dict[str, float]]:
        """Layout ``index``'s raw case (one run: its count), the layout, and every event
        counted per unit of the count (process or iteration)."""
        raise NotImplementedError

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        from ..model.execution import ProcessLayout

        deadline = time.monotonic() + request.time_left
        try:
            raw, layout, counts = self.count_layout(request.index, deadline)
        except CountFailure as exc:
            error = over_limit(self.label, self.settings.time_limit) if exc.kind == "hang" \
                else exc
            return [Outcome(request.index, error=str(error))]
        except MeasurementError as exc:
            return [Outcome(request.index, error=str(exc))]
        except KeyboardInterrupt as exc:
            return [Outcome(request.index, error="interrupted", interrupted=True, interrupt=exc)]
        if request.progress is not None:
            request.progress(1)
        return [Outcome(request.index, case=raw, counts=counts,
                        layout=ProcessLayout(None, layout.hash_seed, layout.env_bytes, "fixed",
                                             layout.aslr_off))]


class _CommandCount(_ProgramCountBackend):
    """Each layout counts the command's whole process once (the count per process)."""

    def __init__(self, case: CaseResult, valgrind: Valgrind, argv: Sequence[str],
                 settings: CountSettings) -> None:
        super().__init__(case, valgrind, settings)
        self.argv = list(argv)
        self.done: list[CountedExecution] = []

    def count_layout(self, index: int, deadline: float,
                     ) -> tuple[CaseResult, CountLayout, dict[str, float]]:
        execution = self._process(self.argv, index, deadline)
        self.done.append(execution)
        raw = self._raw()
        value = float(execution.value)
        raw.add_run(RUN_OK, {PRIMARY_METRIC: value})
        raw.accumulate({PRIMARY_METRIC: value})
        raw.stop_reason = "counted"
        raw.estimate = Estimate(value, unit=self.settings.measure, method="count")
        counts = {k: float(c) for k, c in execution.counts.to_dict().items() if c is not None}
        return raw, execution.layout, counts


def count_command(case: CaseResult, valgrind: Valgrind, argv: Sequence[str],
                  settings: CountSettings) -> None:
    """Count ``argv``'s process in each layout into ``case`` (errors: one line in
    ``case.errors``)."""
    from ..execution.driver import run_executions

    case.unit = settings.measure
    case.units[PRIMARY_METRIC] = settings.measure
    case.method = "count"
    backend = _CommandCount(case, valgrind, argv, settings)
    run_executions(backend, case, settings.layouts, time_limit=settings.time_limit,
                   confidence=settings.confidence)
    done = backend.done
    case.extra["counts"] = {
        "measure": settings.measure, "per": "process",
        "identity": make_identity(settings.measure, valgrind, argv[0]).to_dict(),
        "executions": [{"layout": e.layout.to_dict(), "counts": e.counts.to_dict(),
                        "value": e.value} for e in done], "note": NOT_TIME}
    case.stop_reason = "count failed" if case.errors else f"counted in {len(done)} layout(s)"
    if not done:
        return
    values = [float(e.value) for e in done]
    mean = statistics.fmean(values)
    from ..model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS

    spread = statistics.stdev(values) / mean if len(values) >= 2 and mean else None
    case.estimate = Estimate(
        statistics.median(values), min(values), max(values), None, settings.measure, "count",
        "count per process" + (" (median of layouts)" if len(values) >= 2 else ""),
        LEVEL_EXECUTIONS if len(values) >= 2 else LEVEL_RUNS, len(values), len(values),
        None, spread, {"per": "process", "note": NOT_TIME,
                       "interval_scope": f"the range of {len(values)} layouts' counts"})


class _ItersCount(_ProgramCountBackend):
    """Each layout counts the ITERS program at every point and fits its line; the first
    sizes the points from a probe at ITERS = 1 and 2 unless they are given."""

    def __init__(self, case: CaseResult, valgrind: Valgrind,
                 argv_for: Callable[[int], list[str]], settings: CountSettings,
                 iters: Sequence[int] | None) -> None:
        super().__init__(case, valgrind, settings)
        self.argv_for = argv_for
        self.iters = list(iters) if iters is not None else None
        self.layouts: list[LayoutCount] = []

    def count_layout(self, index: int, deadline: float,
                     ) -> tuple[CaseResult, CountLayout, dict[str, float]]:
        known: dict[int, CountedExecution] = {}
        if self.iters is None:  # the probe, in the first layout: its points are kept
            known = {c: self._process(self.argv_for(c), index, deadline) for c in (1, 2)}
            n = calls_for(known[2].value - known[1].value)
            self.iters = [n * k for k in range(1, self.settings.points + 1)]
        done = [known.get(c) or self._process(self.argv_for(c), index, deadline)
                for c in self.iters]
        layout = LayoutCount(tuple(done), fit_counts(self.iters, [e.value for e in done],
                                                     self.settings.confidence))
        self.layouts.append(layout)
        raw = self._raw()
        fill_case(raw, [layout], {"measure": self.settings.measure}, what="iteration")
        per_iteration = per_call(done[0].counts, done[-1].counts,
                                 self.iters[-1] - self.iters[0])
        return raw, done[0].layout, per_iteration


def count_iters(case: CaseResult, valgrind: Valgrind, argv_for: Callable[[int], list[str]],
                settings: CountSettings, iters: Sequence[int] | None = None) -> None:
    """Count an ITERS program at several ITERS per layout and fit the line into ``case``.
    ``argv_for(n)`` is the command line at ITERS = n; ``iters`` fixes the points (default:
    ``n, 2n, …`` sized from a probe)."""
    from ..execution.driver import run_executions

    case.unit = settings.measure
    case.method = "count"
    backend = _ItersCount(case, valgrind, argv_for, settings, iters)
    run_executions(backend, case, settings.layouts, time_limit=settings.time_limit,
                   confidence=settings.confidence)
    layouts = backend.layouts
    if case.errors or not layouts:
        case.stop_reason = "count failed"
        return
    case.unit = settings.measure
    case.units[PRIMARY_METRIC] = settings.measure
    case.extra["counts"] = {
        "measure": settings.measure, "calls": list(backend.iters or ()),
        "identity": make_identity(settings.measure, valgrind, argv_for(1)[0]).to_dict(),
        "layouts": [lc.to_dict() for lc in layouts], "note": NOT_TIME, "per": "iteration"}
    case.stop_reason = f"counted at {', '.join(str(c) for c in layouts[0].fit.calls)} iterations"
    case.estimate = count_estimate(settings.measure, [lc.fit.slope for lc in layouts],
                                   [lc.fit for lc in layouts], settings.confidence, case.n,
                                   "iteration")
