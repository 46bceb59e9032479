"""A Python case counted: the count per call from a line over call counts, per layout.

For each of K layouts (:mod:`.layout`) the case's process (:mod:`.child`) runs once under
callgrind, cut into segments at a marker function: its start-up and set-up, one probe call,
then ``n, 2n, …, P·n`` calls (P = :attr:`CountSettings.points`, default 3), one segment each.
A line is fitted over the points' segments (:mod:`.fit`): the slope is the count per call, the
intercept what each segment costs besides its calls (a loop's start, a collection, the marker
call); the start-up, imports and set-up are segment 1, recorded as ``startup``. Before any
counting the case runs once natively (:func:`check_natively`: errors in seconds, bytecode caches
written). ``n`` is sized inside the counted process from the probe call's count
(:func:`~.child.calls_for`): about :data:`~.child.TARGET_COUNT` instructions of calls in the
smallest point, and, being sized from a count rather than a clock, the same ``n`` in every
invocation. One process per layout, rather than one per point, is what makes a count take
seconds rather than tens of seconds: valgrind's start of the interpreter costs more than the
calls.

The headline is the median of the K layouts' slopes; with one layout its interval is the fit's
(of zero width when the points lie exactly on a line), with several it spans the layouts'
slopes (how much the count depends on the layout). :class:`CountRunner` puts this behind the
interface the :class:`~steadybench.manager.Manager` expects of a runner, so ``run``, the
pytest plugin and the Python API get counts by choosing this runner.
"""

from __future__ import annotations

import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, MeasurementError
from ..execution.backend import Outcome
from ..model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS, Estimate
from ..model.implementation import Implementation, StatementText
from ..model.parameters import Parameters
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult
from ..programs.process import excerpt
from .backend import (
    COUNT_MEASURES,
    NOT_TIME,
    PYTHON_SEGMENTS,
    CountedExecution,
    count_process,
    make_identity,
    measure_value,
    python_identity,
)
from .child import (
    CALLS,
    DONE,
    LEAD_SEGMENTS,
    MARKER,
    PREFIX,
    USER_ERROR_STATUS,
)
from .fit import CountFit, fit_counts
from .valgrind import CountFailure, Counts, Valgrind, find_valgrind
from .view import PathView, compile_as, make_view

if TYPE_CHECKING:
    from ..execution.backend import ExecutionRequest


@dataclass(frozen=True)
class CountSettings:
    """How a case is counted. ``calls`` fixes ``n`` (None: from the native run)."""

    measure: str = "instructions"
    layouts: int = 1
    points: int = 3
    calls: int | None = None
    time_limit: float = 600.0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.measure not in COUNT_MEASURES:
            raise ConfigurationError(f"not a count measure: {self.measure!r}")
        if self.points < 2:
            raise ConfigurationError("a count per call needs at least 2 call counts (points)")
        if self.layouts < 1:
            raise ConfigurationError("at least one layout")


def task_bytes(implementation: Implementation, params: Parameters, benchmark: str,
               select: tuple[str, str | None] | None = None, cwd: str | None = None,
               extra_path: Sequence[str] = (), view: PathView | None = None) -> bytes:
    """What the counted process (:mod:`.child`) needs to find the case, pickled: the benchmark
    file's case (``origin``), a ``(file, selector)`` pair (``ab``: a case of a file, maybe in
    another checkout: ``cwd`` and ``extra_path`` then point there), or the pickled
    implementation. With ``view`` every path goes through its links (:mod:`.view`)."""
    seen = view.map if view is not None else (lambda path: path)
    task: dict[str, Any] = {"benchmark": benchmark, "params": params,
                            "sys_path": [seen(p) for p in [*extra_path, *sys.path]],
                            "cwd": seen(cwd or os.getcwd()),
                            "select": None if select is None else (seen(select[0]), select[1]),
                            "origin": None, "implementation": None}
    if select is None and implementation.origin is not None:
        path, *rest = implementation.origin
        task["origin"] = (seen(path), *rest)
    elif select is None:
        try:
            task["implementation"] = pickle.dumps(implementation)
        except Exception as exc:
            raise ConfigurationError(
                f"{implementation.name}: counting runs the code in a fresh interpreter, which "
                "needs code it can import (a benchmark file, or a function defined at module "
                f"level); this one cannot be sent ({type(exc).__name__}: {exc})") from None
    return pickle.dumps(task)


def _user_error(stderr: str) -> str | None:
    for line in stderr.splitlines():
        if line.startswith(PREFIX):
            return line[len(PREFIX):].strip()
    return None


def check_natively(python: str, task: bytes, timeout: float, label: str,
                   env: dict[str, str] | None = None, limit: float | None = None) -> None:
    """Run the case once natively (one call): errors surface in seconds rather than after a
    valgrind start-up, and the bytecode caches are written before anything is counted."""
    try:
        proc = subprocess.run([python, "-m", "steadybench.counts.child", "check"], input=task,
                              capture_output=True, timeout=timeout, start_new_session=True,
                              env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        raise CountFailure(f"{label}: did not finish within {limit or timeout:g} s natively "
                           "(killed at the case's --time-limit)", "hang") from None
    except OSError as exc:
        raise CountFailure(f"{label}: {python} cannot be started ({exc.strerror or exc})",
                           "start") from None
    _check_child(proc.returncode, proc.stdout.decode(errors="replace"),
                 proc.stderr.decode(errors="replace"), label)


def _check_child(code: int, stdout: str, stderr: str, label: str) -> None:
    said = _user_error(stderr)
    if code == USER_ERROR_STATUS and said:
        raise CountFailure(f"{label}: {said}", "exit")
    if code < 0:
        raise CountFailure(f"{label}: crashed (signal {-code})", "crash")
    if code != 0:
        raise CountFailure(f"{label}: exited with status {code}"
                           + (f": {excerpt(stderr)}" if excerpt(stderr) else ""), "exit")
    _check_done(stdout, label)


@dataclass(frozen=True)
class LayoutCount:
    """One layout's counted processes and their line."""

    executions: tuple[CountedExecution, ...]
    fit: CountFit

    def to_dict(self) -> dict[str, Any]:
        return {"layout": self.executions[0].layout.to_dict(), "fit": self.fit.to_dict(),
                "raw": [e.counts.to_dict() for e in self.executions]}


class PythonCountBackend:
    """A backend of the execution layer (:mod:`steadybench.execution`): execution ``i`` counts
    the case in layout ``i``, in one process cut into segments (:mod:`.child`), and fits its
    line. The first execution first runs the case natively (:func:`check_natively`); its
    process sizes ``n`` (unless ``settings.calls`` fixes it), and every later layout uses the
    same ``n``. Each outcome's raw case has one run, the layout's count per call, and its
    ``extra["counts"]``; ``Outcome.counts`` holds every callgrind event per call (the
    difference of the largest and smallest points over their calls)."""

    isolation = "counted processes under valgrind"
    cases = 1

    def __init__(self, implementation: Implementation, params: Parameters, benchmark: str,
                 settings: CountSettings, valgrind: Valgrind, python: str | None = None,
                 select: tuple[str, str | None] | None = None, cwd: str | None = None,
                 extra_path: Sequence[str] = ()) -> None:
        self.settings = settings
        self.valgrind = valgrind
        self.python = python or sys.executable
        self.implementation, self.params, self.benchmark = implementation, params, benchmark
        self.label = benchmark if implementation.name in (benchmark, "") else (
            f"{benchmark} {implementation.name}")
        self.task = task_bytes(implementation, params, benchmark, select, cwd, extra_path)
        self._where = (select, cwd, tuple(extra_path))
        #: the directories the counted process sees through a view (:mod:`.view`)
        file = select[0] if select else (implementation.origin[0] if implementation.origin
                                         else None)
        self.file = file
        self.view_dirs = [cwd or os.getcwd(),
                          os.path.dirname(os.path.abspath(file)) if file else os.getcwd(),
                          *extra_path]
        #: another interpreter finds this copy of steadybench (and the checkout) on PYTHONPATH
        self.env: dict[str, str] = {}
        if self.python != sys.executable or extra_path:
            package_root = str(Path(__file__).resolve().parents[2])  # holds this steadybench
            self.env["PYTHONPATH"] = os.pathsep.join([package_root, *extra_path])
        self.calls: list[int] | None = None
        self.checked = False
        #: the first layout's start-up and probe segments, in the measure's unit
        self.startup: int | None = None
        self.probe: int | None = None

    def _count_segments(self, index: int, timeout: float, work: str,
                        ) -> tuple[CountedExecution, int]:
        """Layout ``index``'s process: its segments and the call count ``n`` it used."""
        os.makedirs(work, exist_ok=True)
        view = make_view(work, self.view_dirs)
        if self.file is not None:
            compile_as(self.file, view.map(self.file))
        select, cwd, extra_path = self._where
        task = task_bytes(self.implementation, self.params, self.benchmark, select, cwd,
                          extra_path, view)
        env = dict(self.env)
        if "PYTHONPATH" in env:
            env["PYTHONPATH"] = os.pathsep.join(view.map(p) for p in
                                                env["PYTHONPATH"].split(os.pathsep))
        out_file = os.path.join(work, "cg.out")
        n = self.settings.calls if self.calls is None else self.calls[0]
        spec = pickle.dumps({"points": self.settings.points, "calls": n, "out_file": out_file})
        got = count_process(self.valgrind, [self.python, "-m", "steadybench.counts.child",
                                            "segments"], self.settings.measure, index,
                            cwd=work, timeout=timeout, label=self.label, workdir=work,
                            stdin_data=task + spec, extra_env=env, dump_before=MARKER)
        _check_done(got.stdout, self.label)
        wanted = LEAD_SEGMENTS + self.settings.points
        if len(got.segments) != wanted:
            raise CountFailure(f"{self.label}: {len(got.segments)} counted segments where "
                               f"{wanted} were expected (the code calls {MARKER}(), "
                               "steadybench's marker: count it with --measure time)", "output")
        return got, _calls_said(got.stdout, self.label)

    def record(self) -> dict[str, Any]:
        """How the case was counted (everything but the layouts' own counts)."""
        return {"measure": self.settings.measure, "calls": self.calls,
                "startup": self.startup,
                "probe": None if self.probe is None else {"calls": 1, "count": self.probe},
                "identity": make_identity(self.settings.measure, self.valgrind,
                                          python_identity(self.python),
                                          PYTHON_SEGMENTS).to_dict(),
                "note": NOT_TIME}

    def execute(self, request: ExecutionRequest) -> list[Outcome]:
        from ..model.execution import ProcessLayout

        index = request.index
        settings = self.settings
        # --time-limit is the layer's: all executions of the case together (the native check
        # included), so each process gets what is left of the case's budget
        deadline = time.monotonic() + request.time_left
        work = tempfile.mkdtemp(prefix="sb-count-")
        try:
            if not self.checked:
                check_natively(self.python, self.task, request.time_left, self.label, self.env,
                               settings.time_limit)
                self.checked = True
            try:
                got, n = self._count_segments(index, max(deadline - time.monotonic(), 0.001),
                                              work)
            except CountFailure as exc:
                if exc.kind != "hang":
                    raise
                from .valgrind import over_limit

                raise over_limit(self.label, settings.time_limit) from None
            measure = settings.measure
            segments = got.segments
            if self.calls is None:
                self.calls = [n * k for k in range(1, settings.points + 1)]
                self.startup = measure_value(segments[0], measure)
                self.probe = measure_value(segments[1], measure)
            points = [CountedExecution(c, measure_value(c, measure), got.layout, "")
                      for c in segments[LEAD_SEGMENTS:]]
            if request.progress is not None:
                request.progress(0)
            fit = fit_counts(self.calls, [p.value for p in points], settings.confidence)
        except (CountFailure, MeasurementError) as exc:
            return [Outcome(index, error=str(exc))]
        except KeyboardInterrupt as exc:
            return [Outcome(index, error="interrupted", interrupted=True, interrupt=exc)]
        finally:
            shutil.rmtree(work, ignore_errors=True)
        layout_count = LayoutCount(tuple(points), fit)
        raw = CaseResult(benchmark=self.benchmark, implementation=self.implementation.name,
                         params=self.params.to_dict(), unit=settings.measure, method="count")
        fill_case(raw, [layout_count], {**self.record(), "layouts": [layout_count.to_dict()]})
        every_event = per_call(points[0].counts, points[-1].counts,
                               self.calls[-1] - self.calls[0])
        layout = got.layout
        return [Outcome(index, case=raw, counts=every_event,
                        layout=ProcessLayout(None, layout.hash_seed, layout.env_bytes, "fixed",
                                             layout.aslr_off))]


def per_call(low: Counts, high: Counts, span: int) -> dict[str, float]:
    """Every event per call: the difference of two points over the calls between them."""
    return {name: value / span for name, value in high.minus(low).items() if value is not None}


def _calls_said(stdout: str, label: str) -> int:
    for line in reversed(stdout.splitlines()):
        if line.startswith(CALLS):
            return int(line[len(CALLS):])
    raise CountFailure(f"{label}: the counted process did not say its call count", "output")


def _check_done(stdout: str, label: str) -> None:
    if DONE not in stdout.rstrip().splitlines()[-1:]:
        raise CountFailure(f"{label}: the process ended before the calls finished (the code "
                           "left it early, e.g. with os._exit)", "exit")


def count_estimate(unit: str, slopes: Sequence[float], fits: Sequence[CountFit],
                   confidence: float, n_runs: int, what: str = "call",
                   fields: dict[str, Any] | None = None) -> Estimate:
    """The case's headline from its layouts' slopes."""
    figures = dict(fields or {})
    figures["intercept"] = statistics.median(f.intercept for f in fits)
    figures["worst_residual_share"] = max(f.worst for f in fits)
    # how far the slope could move if the worst point lay on the line: its residual spread
    # over the calls between the first and last points (what a verdict allows for the fit)
    figures["fit_slack"] = max(max(abs(r) for r in f.residuals) / (f.calls[-1] - f.calls[0])
                               for f in fits)
    figures["per"] = what
    figures["note"] = NOT_TIME
    value = statistics.median(slopes)
    if len(slopes) >= 2:
        mean = statistics.fmean(slopes)
        cov = statistics.stdev(slopes) / mean if mean else None
        figures["execution_values"] = list(slopes)
        figures["interval_scope"] = f"the range of {len(slopes)} layouts' counts"
        return Estimate(value, min(slopes), max(slopes), None, unit, "count",
                        f"median of layouts' count per {what}", LEVEL_EXECUTIONS, len(slopes),
                        n_runs, None, cov, figures)
    low, high = fits[0].slope_ci
    figures["interval_scope"] = "the line fit over call counts (one layout)"
    return Estimate(value, low, high, confidence, unit, "count",
                    f"count per {what} (slope over {what} counts)", LEVEL_RUNS, 1, n_runs,
                    None, None, figures)


class StatementCall(StatementText):
    """A statement string counted per call: ``setup`` runs once (in :meth:`setup`, so it is
    in the line's intercept), then each call executes the statement. Both run in one
    namespace (``globals`` plus what the set-up defines), so the statement reads the set-up's
    names as globals of a function, where ``timeit`` reads them as locals: a few instructions
    per name read. Pickles as its text, for the counted process."""

    def setup(self, params: Parameters) -> None:
        namespace = dict(self.globals)
        exec(compile(self.setup_statement, "<steadybench setup>", "exec"), namespace)  # noqa: S102
        body = "\n".join("    " + line for line in self.statement.splitlines())
        exec(compile(f"def _steadybench_call():\n{body}\n", "<steadybench statement>",  # noqa: S102
                     "exec"), namespace)
        self.run = namespace["_steadybench_call"]  # type: ignore[method-assign]

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k != "run"}


class CountMethod:
    """The method slot of a counting runner: it builds the case's :class:`Estimate` from the
    slopes the runner recorded (what :func:`~steadybench.processors.base.finalize_case` calls)."""

    name = "count"

    def __init__(self, settings: CountSettings) -> None:
        self.settings = settings

    def options(self) -> dict[str, Any]:
        s = self.settings
        return {"measure": s.measure, "layouts": s.layouts, "points": s.points, "calls": s.calls}

    def finish(self, case: CaseResult) -> None:
        record = case.extra.get("counts")
        if not record or not record.get("layouts"):
            case.estimate = Estimate(None, unit=case.unit, method=self.name,
                                     error="; ".join(case.errors) or "no counts")
            return
        fits = [CountFit(tuple(lc["fit"]["calls"]), tuple(lc["fit"]["counts"]),
                         lc["fit"]["slope"], lc["fit"]["intercept"],
                         tuple(lc["fit"]["slope_ci"]), tuple(lc["fit"]["residuals"]),
                         lc["fit"]["worst_residual_share"], lc["fit"]["on_line"])
                for lc in record["layouts"]]
        case.estimate = count_estimate(case.unit, [f.slope for f in fits], fits,
                                       self.settings.confidence, case.n, record.get("per", "call"))


def fill_case(case: CaseResult, layouts: Sequence[LayoutCount], record: dict[str, Any],
              what: str = "call") -> None:
    """Record the layouts' slopes as the case's runs, and the record in ``extra["counts"]`` (a
    layout is one execution: its record in ``case.processes`` is the merge's)."""
    unit = record["measure"]
    case.unit = unit
    case.units[PRIMARY_METRIC] = unit
    record["per"] = what
    for lc in layouts:
        case.add_run(RUN_OK, {PRIMARY_METRIC: lc.fit.slope})
        case.accumulate({PRIMARY_METRIC: lc.fit.slope})
    case.extra["counts"] = record
    for lc in layouts:
        warning = lc.fit.warning(what)
        if warning and warning not in case.warnings:
            case.warnings.append(warning)
    case.stop_reason = f"counted at {', '.join(str(c) for c in layouts[0].fit.calls)} {what}s"


def count_case(case: CaseResult, backend: PythonCountBackend, progress: Any = None) -> None:
    """Count ``backend``'s case into ``case`` through the execution layer's driver, one
    execution per layout; the record of how in ``case.extra["counts"]``."""
    from ..execution.driver import run_executions

    settings = backend.settings
    done = run_executions(backend, case, settings.layouts,
                          time_limit=settings.time_limit,
                          method=CountMethod(settings), confidence=settings.confidence,
                          progress=progress)
    layouts = [o.case.extra["counts"]["layouts"][0] for outcomes in done for o in outcomes
               if o.case is not None]
    case.unit = settings.measure
    case.units[PRIMARY_METRIC] = settings.measure
    case.method = "count"
    if layouts:
        case.extra["counts"] = {**backend.record(), "layouts": layouts, "per": "call"}
        case.stop_reason = (f"counted at {', '.join(map(str, backend.calls or []))} calls "
                            f"in {len(layouts)} layout(s)")


class CountRunner:
    """A runner that counts instead of timing (the shape of
    :class:`~steadybench.runner.runner.Runner` the manager uses: ``execute``, ``new_case``,
    ``method``, ``last_case``, ``confidence``)."""

    keep_samples = True

    def __init__(self, settings: CountSettings, python: str | None = None) -> None:
        self.settings = settings
        self.method = CountMethod(settings)
        self.python = python
        self.confidence = settings.confidence
        self.last_case: CaseResult | None = None
        self.processes = settings.layouts
        self._valgrind: Valgrind | None = None
        #: the clock the environment record describes (counts read none)
        from ..clocks import get_clock

        self.clock = get_clock()

    def add_action(self, stage: Any, action: Any) -> None:
        raise ConfigurationError("machine presets and actions do not apply to counts (a count "
                                 "does not depend on the machine's state); drop --preset")

    def new_case(self, implementation: Implementation, params: Parameters,
                 benchmark: str | None = None) -> CaseResult:
        return CaseResult(benchmark=benchmark or implementation.name,
                          implementation=implementation.name, params=params.to_dict(),
                          unit=self.settings.measure, method=self.method.name)

    def execute(self, implementation: Implementation, params: Parameters, meters: Any = (),
                benchmark: str | None = None, progress: Any = None) -> CaseResult:
        """Count one case through the execution layer's driver, one execution per layout; a
        failure is one line in ``case.errors`` (the other cases go on), except a missing
        valgrind, which ends the command (exit 2)."""
        case = self.new_case(implementation, params, benchmark)
        self.last_case = case
        if self._valgrind is None:
            self._valgrind = find_valgrind()
        backend = PythonCountBackend(implementation, params, case.benchmark, self.settings,
                                     self._valgrind, self.python)
        count_case(case, backend, progress)
        return case
