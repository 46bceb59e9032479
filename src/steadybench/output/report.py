"""A self-contained HTML report of any steadybench result: ``run``, ``exec``, ``iters``,
``sweep`` (results files), ``compare`` (its JSON) and ``ab`` (its JSON).

The page answers first and explains after, the order criterion.rs and asv use:

1. **Summary**: the verdicts (``compare``, ``ab``), the plain-words relative comparisons of
   every set of variants (:mod:`steadybench.output.groups`, said by
   :func:`steadybench.output.relative.summary_lines`: "join is 1.520× faster than concat
   [1.490, 1.550]"), the growth class of every parameter scan, and what went wrong.
2. **Results**: one table of every case with its estimate and interval in one unit, then the
   figures of the whole result: time relative to the fastest, growth plots (log–log, fitted
   class), box plots, the comparison and A/B figures.
3. **Details** per case: the run-by-run series, histogram, error evolution and fits, the
   statistics, warnings and errors.
4. **Environment** and machine settings, collapsed (``<details>``).

Numbers are written with their unit everywhere (a time is never shown as a bare number of
seconds), p-values below 1e-16 as "< 1e-16", and nothing is pasted as raw JSON: nested values
become rows with dotted keys.

The plots are embedded as PNG ``data:`` URIs and the style sheet is inline, so the file needs
no network and works from a ``file://`` URL; a Content-Security-Policy forbids every fetch and
every script. Every text that comes from the measured benchmarks goes through jinja2's
autoescaping; ids are made from indices, never from names.

Scale: figures are drawn in worker processes (``fork``, one per core up to
:data:`MAX_WORKERS`, or ``STEADYBENCH_REPORT_WORKERS``) when there are many; beyond
:data:`COMPACT_CASES` cases each case gets one small figure instead of three.
"""

from __future__ import annotations

import base64
import math
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from .. import __version__
from ..errors import ConfigurationError
from ..fileio import atomic_write_bytes, atomic_write_text
from ..model.execution import execution_values
from ..model.results import (
    PRIMARY_METRIC,
    RUN_FAILED,
    RUN_OK,
    RUN_REMOVED,
    RUN_WARMUP,
    CaseResult,
    Results,
)
from . import comparedata as cd
from . import plotdata as pd
from .format import (
    case_estimate,
    change_text,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
    factor_text,
    format_params,
    ratio_text,
)
from .relative import Relation, Variant, relative_summary
from .sanitize import html_text

if TYPE_CHECKING:
    from ..compare.result import Comparison

TEMPLATES = Path(__file__).with_name("templates")
#: more cases than this (over all inputs) → one compact figure per case
COMPACT_CASES = 24
#: at most this many cases per overview box plot
BOX_CHUNK = 30
#: figures of their own for the first this many cases, overview box plots for the first
#: MAX_BOX_PLOTS × BOX_CHUNK: a report of 10^6 cases drew 10^6 figures for hours (issue 27
#: item 13); the table and every case's figures in numbers stay whole
MAX_CASE_FIGURES = 40
MAX_BOX_PLOTS = 4
#: per-pair comparison plots are drawn for at most this many pairs
MAX_PAIR_PLOTS = 40
#: longest text shown for one value of the environment, context or extra fields
MAX_VALUE_CHARS = 600
#: sections drawn from a key of a results file's context: key -> "module:function", called
#: with the context value, ``image(figure, name)`` and the Results; returns ``{"title",
#: "html"}`` (markup)
CONTEXT_SECTIONS = {"evaluate": "steadybench.evaluate.figures:report_section",
                    "fleet": "steadybench.fleet.report:report_section",
                    "counts_and_time": "steadybench.counts.report:report_section",
                    "profiles": "steadybench.profiles.flame:report_section"}
#: figures are drawn in worker processes when there are at least this many
PARALLEL_FIGURES = 12
#: at most this many worker processes draw figures
MAX_WORKERS = 4
#: keys whose numbers are times (in the case's unit) wherever they appear
TIME_KEY = re.compile(r"(^|_)(time|mean|median|stdev|std|stddev|min|max|startup|overhead|slope|"
                      r"intercept|value|ci_low|ci_high|low|high|mad|iqr|q1|q3|raw_mean|"
                      r"geomean|corrected_mean|values|sd|between_sd|within_sd)$")


# ============================================================================ text helpers
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # every plain string shown has its control characters and bidi overrides escaped
        finalize=lambda value: html_text(value) if type(value) is str else value,
    )
    env.filters["in_unit"] = pd.format_value
    env.filters["num"] = _num_text
    env.filters["pct"] = _pct_text
    env.filters["factor"] = _factor_text
    env.filters["pvalue"] = pd.p_value_text
    return env


def _num_text(value: Any, digits: int = 4) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}g}" if math.isfinite(value) else "–"
    return str(value)


def _pct_text(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{value * 100:.2f} %"
    return "–"


def _factor_text(ratio: Any, ci: Any = None) -> str:
    """A BASE/NEW ratio in words ("1.25× faster [1.1, 1.4]"), the way people say it; no
    direction when the interval holds 1 ("0.97× [0.33, 1.03]")."""
    if not isinstance(ratio, int | float) or isinstance(ratio, bool):
        return "–"
    low, high = (ci[0], ci[1]) if ci else (None, None)
    return change_text(float(ratio), low, high)


def _cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def human(key: str, value: Any, unit: str = "s") -> str:
    """A value as a person reads it: times (by the key's name) with their unit, other numbers
    to 4 significant digits, lists joined by commas (long ones counted), mappings as
    ``key: value`` pairs; never JSON."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        if TIME_KEY.search(str(key).lower()) and unit:
            return pd.format_value(float(value), unit)
        return _num_text(value)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, Mapping):
        return _cut("; ".join(f"{k}: {human(str(k), v, unit)}" for k, v in value.items()))
    if isinstance(value, Sequence):
        items = list(value)
        if len(items) > 12 and all(isinstance(v, int | float) for v in items):
            return f"{len(items)} values"
        return _cut(", ".join(human(key, v, unit) for v in items))
    return _cut(str(value))


def rows(mapping: Mapping[str, Any] | None, unit: str = "s",
         depth: int = 3) -> list[tuple[str, str]]:
    """(key, text) rows of a mapping, nested mappings flattened with dotted keys."""
    out: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any, level: int) -> None:
        if isinstance(value, Mapping) and value and level < depth:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v, level + 1)
        elif (isinstance(value, Sequence) and not isinstance(value, str) and value
              and all(isinstance(v, Mapping) for v in value) and level < depth):
            for i, v in enumerate(value[:20]):
                walk(f"{prefix}[{i}]", v, level + 1)
        else:
            out.append((prefix, human(prefix.rsplit(".", 1)[-1], value, unit)))

    for key, value in (mapping or {}).items():
        walk(str(key), value, 0)
    return out


# ============================================================================ figures
@dataclass
class Image:
    """A figure to embed: drawn later (maybe in another process), then its PNG as a data URI."""

    name: str
    make: Callable[[], Any]
    caption: str = ""
    src: str = ""


@dataclass
class _Figures:
    plots_dir: Path | None
    plot_format: str
    images: list[Image] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    #: cases given figures of their own so far (at most MAX_CASE_FIGURES)
    cases_drawn: int = 0

    def add(self, name: str, make: Callable[[], Any], caption: str = "") -> Image:
        image = Image(name, make, caption)
        self.images.append(image)
        return image


_JOBS: list[Image] = []
_FORMAT = "png"


def _render(index: int) -> tuple[bytes, bytes | None]:
    """Draw figure ``index`` of :data:`_JOBS`: (PNG, the other format or None)."""
    from .figures.common import figure_bytes

    fig = _JOBS[index].make()
    png = figure_bytes(fig, "png")
    other = figure_bytes(fig, _FORMAT) if _FORMAT != "png" else None
    # no fig.clear(): it re-creates every axes' ticks (0.1 s a figure) only to drop them
    return png, other


def _worker_init() -> None:
    """A drawing worker: Ctrl-C is the parent's to handle, and SIGTERM ends it at once (a
    handler inherited from the parent would run Python code that may wait on a lock some other
    thread of the parent held when it forked)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _workers(count: int) -> int:
    env = os.environ.get("STEADYBENCH_REPORT_WORKERS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            raise ConfigurationError(f"STEADYBENCH_REPORT_WORKERS must be a whole number, "
                                     f"got {env!r}") from None
    if count < PARALLEL_FIGURES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, cores or 1))


def _draw_all(figs: _Figures) -> None:
    """Draw every figure (in ``fork``-ed workers when there are many and several cores);
    each worker reads the figure list it inherited, so no data is copied to it."""
    global _JOBS, _FORMAT
    import multiprocessing

    _JOBS, _FORMAT = figs.images, figs.plot_format
    try:
        workers = _workers(len(figs.images))
        # fork only on Linux (elsewhere system libraries are not safe to fork) and only from
        # a single-threaded process: a lock another thread holds at the fork stays locked
        # forever in the child
        if workers > 1 and sys.platform.startswith("linux") and threading.active_count() == 1:
            pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_init)
            try:
                outputs = pool.map(_render, range(len(figs.images)),
                                   chunksize=max(1, len(figs.images) // (workers * 4)))
                pool.close()  # workers finish and exit by themselves
            finally:
                pool.terminate()
                pool.join()
        else:
            outputs = [_render(i) for i in range(len(figs.images))]
    finally:
        _JOBS = []
    for image, (png, other) in zip(figs.images, outputs):
        image.src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        if figs.plots_dir is not None:
            data = png if figs.plot_format == "png" else other
            figs.written.append(atomic_write_bytes(
                figs.plots_dir / f"{image.name}.{figs.plot_format}", data or b""))


def _eager_image(figs: _Figures, fig: Any, name: str) -> dict[str, str]:
    """Draw ``fig`` now (a context section's figures are part of its markup): a PNG data URI,
    written to the plots folder too when one was asked for."""
    from .figures.common import figure_bytes

    png = figure_bytes(fig, "png")
    if figs.plots_dir is not None:
        data = png if figs.plot_format == "png" else figure_bytes(fig, figs.plot_format)
        figs.written.append(atomic_write_bytes(figs.plots_dir / f"{name}.{figs.plot_format}",
                                               data))
    return {"src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
            "name": name}


def _context_sections(results: Results, figs: _Figures, prefix: str) -> list[dict[str, Any]]:
    """The sections of :data:`CONTEXT_SECTIONS` this results file has data for."""
    import importlib

    sections = []
    for key, target in CONTEXT_SECTIONS.items():
        data = results.context.get(key)
        if isinstance(data, Mapping):
            module, _, name = target.partition(":")
            hook = getattr(importlib.import_module(module), name)
            sections.append(hook(data, lambda fig, n: _eager_image(figs, fig, f"{prefix}{n}"),
                                 results))
    return sections


# ============================================================================ cases
def _run_counts(case: CaseResult) -> dict[str, int]:
    return {
        "ok": case.count(RUN_OK) if case.keep_samples else case.n,
        "warmup": case.count(RUN_WARMUP),
        "removed": case.count(RUN_REMOVED),
        "failed": case.count(RUN_FAILED),
        "outliers": sum(1 for f in case.outlier if f),
    }


def _extra_rows(case: CaseResult, unit: str) -> tuple[list[tuple[str, str]],
                                                     list[tuple[str, str]]]:
    """(short rows, long texts) of ``case.extra``, leaving out the fit and sweep (plotted)."""
    short: list[tuple[str, str]] = []
    long: list[tuple[str, str]] = []
    for key, value in case.extra.items():
        if key in ("fit", "sweep", "execution_starts"):  # plotted
            continue
        if isinstance(value, str) and ("\n" in value or len(value) > 120):
            long.append((key, value[-20_000:]))
        elif _per_execution(value):
            short += _per_execution_rows(key, value, unit)
        elif isinstance(value, Mapping):
            short += rows({key: value}, unit)
        else:
            short.append((key, human(key, value, unit)))
    return short, long


def _per_execution(value: Any) -> bool:
    """A list of mappings, one per execution (``method_options``...)."""
    return (isinstance(value, Sequence) and not isinstance(value, str) and len(value) > 1
            and all(isinstance(v, Mapping) for v in value))


def _per_execution_rows(key: str, entries: Sequence[Mapping[str, Any]],
                        unit: str) -> list[tuple[str, str]]:
    """One row per field of per-execution entries, not one per execution: the value when
    every execution had the same, else its range and how many executions differ."""
    out: list[tuple[str, str]] = []
    names: list[str] = []
    for entry in entries:
        names += [str(k) for k in entry if str(k) not in names]
    for name in names:
        values = [entry.get(name) for entry in entries]
        label = f"{key}.{name} ({len(entries)} executions)"
        first = values[0]
        if all(v == first for v in values):
            out.append((label, "each " + human(name, first, unit)))
        elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            out.append((label, f"{human(name, min(values), unit)} to "
                               f"{human(name, max(values), unit)}"))
        else:
            out.append((label, f"{len({repr(v) for v in values})} different values"))
    return out


def _fit_rows(fit: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(fit, Mapping):
        return []
    out = []
    for key in ("kind", "slope", "intercept", "slope_ci", "stddev", "confidence", "r2"):
        if key not in fit:
            continue
        value = fit[key]
        if key == "slope_ci" and isinstance(value, Sequence) and len(value) == 2:
            out.append(("slope interval", f"[{pd.format_value(value[0])}, "
                                          f"{pd.format_value(value[1])}]"))
        elif key == "confidence":
            out.append((key, _pct_text(value)))
        elif key == "r2":
            out.append(("R²", _num_text(value, 5)))
        else:
            out.append((key, human(key, value)))
    if fit.get("dropped"):
        out.append(("dropped points", human("dropped", fit["dropped"])))
    if isinstance(fit.get("loglog"), Mapping):
        out += [(f"log-log {k}", v) for k, v in rows(fit["loglog"])]
    return out


def _estimate(case: CaseResult) -> dict[str, Any] | None:
    """The case's :class:`~steadybench.model.estimate.Estimate` for the template: the same
    texts as the console, the interval's bounds, what it stands on, and the method's figures."""
    est = case_estimate(case)
    if est is None:
        return None
    if est.independent:
        level = f"across {est.n_executions} independent executions"
    else:
        level = f"across the runs of {est.n_executions or 'no'} execution" \
            + ("s" if est.n_executions > 1 else "")
    extra = [("statistic", est.statistic or "–"), ("level", level),
             ("runs", str(est.n_runs))]
    if est.within_cov is not None:
        extra.append(("CoV within an execution", _pct_text(est.within_cov)))
    if est.between_cov is not None:
        extra.append(("CoV between executions", _pct_text(est.between_cov)))
    extra += rows(est.fields, est.unit or "s")
    return {"value": est.value, "low": est.ci_low, "high": est.ci_high,
            "confidence": est.confidence, "unit": est.unit, "method": est.method,
            "value_text": estimate_value_text(est), "ci_text": estimate_ci_text(est),
            "confidence_text": confidence_text(est), "error": est.error, "rest": extra}


def _summary_value(case: CaseResult) -> dict[str, Any]:
    est = case_estimate(case)
    unit = estimate_unit(case)
    interval = "—"
    if est is not None and est.ok and est.has_ci and est.ci_low is not None \
            and est.ci_high is not None:
        interval = f"[{pd.format_value(est.ci_low, unit)}, {pd.format_value(est.ci_high, unit)}]"
    return {"value_text": estimate_value_text(est), "ci_text": estimate_ci_text(est),
            "interval": interval, "confidence_text": confidence_text(est)}


def _compact_figure(case: CaseResult, window: int) -> Any:
    """Series and histogram of one case side by side, small: the per-case figure of huge
    reports."""
    from .figures.common import build, esc, new_figure
    from .figures.histogram import draw_histogram
    from .figures.timeseries import draw_timeseries

    def make() -> Any:
        fig = new_figure(9.0, 2.8, layout=None)  # fixed margins: fast for many cases
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.18, top=0.88, wspace=0.22)
        left, right = fig.subplots(1, 2, width_ratios=[2, 1])
        draw_timeseries([left], case, window=window, secondary=False, title=False,
                        legend=False)
        draw_histogram(right, case, title=False, legend=False)
        label = case.label if len(case.label) < 80 else case.label[:79] + "…"
        fig.suptitle(esc(label) + "   — runs (blue), moving median (orange); histogram, "
                     "kernel density, median (orange)", fontsize=9.5, x=0.08, ha="left")
        return fig

    return build(make)


#: meters drawn per case at most (each its own time series), and the ones never drawn
MAX_METER_PLOTS = 6
UNDRAWN_METERS = ("timestamp", "loadavg")  # loadavg: drawn under the time series


def meter_metrics(case: CaseResult) -> list[str]:
    """The other metrics the case's meters recorded per run (energy, devfreq frequencies,
    temperatures...) that have at least one finite value: each gets a time series in the
    report, like the time (Rancid's Figs. 3–14 plot such meters against the runs)."""
    import math

    names = []
    for name, column in case.metrics.items():
        if name == PRIMARY_METRIC or name in UNDRAWN_METERS:
            continue
        if name == "exit_code" and not any(math.isfinite(v) and v != 0 for v in column):
            continue  # exec's exit codes: drawn only when one was not 0
        if any(math.isfinite(v) for v in column):
            names.append(name)
    return names[:MAX_METER_PLOTS]


def _case_figures(case: CaseResult, stem: str, figs: _Figures, *, compact: bool,
                  window: int) -> list[Image]:
    from .figures.evolution import error_evolution_figure
    from .figures.fit import fit_figure
    from .figures.growth import sweep_figure
    from .figures.histogram import histogram_figure
    from .figures.timeseries import timeseries_figure

    if figs.cases_drawn >= MAX_CASE_FIGURES:
        return []
    figs.cases_drawn += 1
    out = []
    has_runs = case.keep_samples and case.runs_recorded > 0
    if compact and has_runs:
        out.append(figs.add(f"{stem}-runs", lambda: _compact_figure(case, window)))
    elif has_runs:
        out.append(figs.add(f"{stem}-timeseries",
                            lambda: timeseries_figure(case, window=window)))
        out.append(figs.add(f"{stem}-histogram", lambda: histogram_figure(case)))
        if case.n >= 2:
            out.append(figs.add(f"{stem}-evolution", lambda: error_evolution_figure(case)))
    if has_runs and not compact:
        from .figures.common import safe_name

        for metric in meter_metrics(case):  # energy, frequencies, temperatures per run
            out.append(figs.add(f"{stem}-{safe_name(metric)}",
                                lambda m=metric: timeseries_figure(case, metric=m,
                                                                   window=window)))
    if isinstance(case.extra.get("fit"), Mapping):
        out.append(figs.add(f"{stem}-fit", lambda: fit_figure(case)))
    if isinstance(case.extra.get("sweep"), Mapping):
        out.append(figs.add(f"{stem}-sweep", lambda: sweep_figure(case)))
    if not out:  # says why there is nothing to draw
        out.append(figs.add(f"{stem}-histogram", lambda: histogram_figure(case)))
    return out


def _case_view(case: CaseResult, index: str, figs: _Figures, *, compact: bool,
               window: int) -> dict[str, Any]:
    from .figures.common import safe_name

    unit = estimate_unit(case)
    short, long = _extra_rows(case, unit)
    stats = [(k, case.stats.get(k)) for k in ("mean", "median", "stdev", "min", "max",
                                              "q1", "q3", "iqr") if k in case.stats]
    return {
        "id": f"case-{index}",
        "case": case,
        "unit": unit,
        "label": case.label,
        "params": [(str(k), human(str(k), v, "")) for k, v in case.params.items()],
        "counts": _run_counts(case),
        "stats": stats,
        "cov": case.stats.get("cov"),
        "ci": case.ci if isinstance(case.ci, Mapping) else None,
        "estimate": _estimate(case),
        "fit": _fit_rows(case.extra.get("fit")),
        "sweep": _sweep_rows(case.extra.get("sweep")),
        "extra": short,
        "texts": long,
        "analyses": rows(case.analyses, unit),
        "images": _case_figures(case, f"{index}-{safe_name(case.label)}", figs,
                                compact=compact, window=window),
    }


# ============================================================================ relative
def _executions(case: CaseResult) -> list[float] | None:
    values = execution_values(case.processes)
    return values if len(values) >= 2 else None


@dataclass
class RelativeGroup:
    """One set of variants compared in plain words."""

    heading: str
    relations: list[Relation]
    #: a parameter scan of one implementation (its growth plot says more than ratios)
    scan: bool = False

    @property
    def lines(self) -> list[str]:
        return [r.text() for r in self.relations]


#: methods whose cases are commands: at one parameter set, different commands are variants
COMMAND_METHODS = ("exec", "iters")


def relative_groups(cases: Sequence[CaseResult], confidence: float = 0.95
                    ) -> list[RelativeGroup]:
    """The sets of variants of a result, each with its relations (fastest first).

    The rule of :mod:`steadybench.output.groups` (the console's): cases with the same benchmark
    and parameters but different implementations are variants; a benchmark with one
    implementation and several parameter sets is a parameter scan. In addition, for command
    results (``exec``, ``iters``: each command is its own benchmark) the commands measured at
    the same parameters are variants.
    """
    ok = [c for c in cases if not c.errors and case_estimate(c) is not None]
    out: list[RelativeGroup] = []

    def add(heading: str, members: list[tuple[str, CaseResult]], scan: bool = False) -> None:
        variants = [Variant(name, case_estimate(c), _executions(c))  # type: ignore[arg-type]
                    for name, c in members]
        relations = relative_summary(variants, confidence)
        if relations:
            out.append(RelativeGroup(heading, relations, scan))

    by_question: dict[tuple[str, str], list[CaseResult]] = {}
    for case in ok:
        by_question.setdefault((case.benchmark, case.param_name), []).append(case)
    scanned: set[str] = set()
    for (benchmark, param_name), group in by_question.items():
        if len({c.implementation for c in group}) >= 2:
            add(benchmark + (f" [{param_name}]" if param_name else ""),
                [(c.implementation, c) for c in group])
        elif benchmark not in scanned:
            scanned.add(benchmark)
            scan = [c for c in ok if c.benchmark == benchmark and c.params]
            if len({c.implementation for c in scan}) == 1 and len(scan) >= 2:
                add(f"{benchmark} (parameter scan)", [(format_params(c.params), c)
                                                      for c in scan], scan=True)
    commands: dict[str, list[CaseResult]] = {}
    for case in ok:
        if case.method in COMMAND_METHODS and case.benchmark == case.implementation:
            commands.setdefault(case.param_name, []).append(case)
    for param_name, group in commands.items():
        if len({c.benchmark for c in group}) >= 2:
            add("commands" + (f" [{param_name}]" if param_name else ""),
                [(c.benchmark, c) for c in group])
    return out


# ============================================================================ growth
def growth_plots(cases: Sequence[CaseResult]) -> list[tuple[str, list[pd.GrowthSeries]]]:
    """Growth series of a ``run`` whose benchmarks take a numeric parameter: per parameter,
    one series per (benchmark, implementation, other parameters) with ≥ 2 values of it."""
    points = []
    for case in cases:
        est = case_estimate(case)
        if est is None or not est.ok or case.errors:
            continue
        for name, x in pd.numeric_parameter(case.params):
            others = {k: v for k, v in case.params.items() if k != name}
            group = case.benchmark
            if case.implementation != case.benchmark:
                group += f"/{case.implementation}"
            if others:
                group += f" [{format_params(others)}]"
            points.append(pd.GrowthPoint(group, name, x, est.value, est.ci_low, est.ci_high))
    by_param: dict[str, list[pd.GrowthSeries]] = {}
    for param, series in pd.growth_groups(points):
        by_param.setdefault(param, []).append(series)
    return list(by_param.items())


def _growth_text(series: pd.GrowthSeries) -> str | None:
    cx = series.complexity or {}
    if not cx.get("best"):
        return None
    coef = cx.get("coefficient")
    c = f" (c = {pd.format_value(float(coef))})" if isinstance(coef, int | float) else ""
    return f"{series.label}: time grows as {cx['best']}{c} over {series.x.size} values"


def _sweep_rows(sweep: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(sweep, Mapping):
        return []
    out = []
    cx = sweep.get("complexity")
    if isinstance(cx, Mapping):
        if "best" in cx:
            out.append(("growth class", str(cx["best"])))
        if isinstance(cx.get("coefficient"), int | float):
            out.append(("coefficient c of c·f(n)", pd.format_value(float(cx["coefficient"]))))
        cands = cx.get("candidates")
        if isinstance(cands, Mapping):
            out.append(("RMS relative error per class",
                        ", ".join(f"{k}: {_pct_text(v)}" for k, v in
                                  sorted(cands.items(), key=lambda kv: kv[1]
                                         if isinstance(kv[1], int | float) else math.inf))))
    if sweep.get("complexity_error"):
        out.append(("growth class", str(sweep["complexity_error"])))
    series = pd.sweep_series(sweep)
    if series is not None and series.r2 is not None and series.r2.size:
        out.append(("ITERS fit R² (lowest)", f"{float(min(series.r2)):.5f}"))
    return out


def _sweep_table(sweep: Mapping[str, Any]) -> list[dict[str, str]]:
    series = pd.sweep_series(sweep)
    if series is None:
        return []
    out = []
    for i, size in enumerate(series.x):
        row = {"size": _num_text(float(size)), "mean": pd.format_value(float(series.y[i]))}
        if series.low is not None and series.high is not None:
            row["stddev"] = pd.format_value(float(series.high[i] - series.y[i]))
        if series.geomean is not None:
            row["geomean"] = pd.format_value(float(series.geomean[i]))
        if series.r2 is not None:
            row["r2"] = f"{float(series.r2[i]):.5f}"
        out.append(row)
    return out


# ============================================================================ comparison
def _cases_by_key(results: Results) -> dict[tuple[str, str, str], CaseResult]:
    return {case.key: case for case in results.cases}


def simple_comparison(base: Results, new: Results) -> dict[str, Any]:
    """Pairs matched by (benchmark, implementation, parameters) with the ratio of their
    headlines (each case's Estimate, the figure every output shows; never a ratio of pooled
    per-run medians).

    A fallback when no comparison from ``steadybench compare`` is given: no test, no CI and no
    verdict are made up here; the verdict column says so.
    """
    from .format import headline

    pairs = []
    new_cases = _cases_by_key(new)
    for key, b in _cases_by_key(base).items():
        n = new_cases.get(key)
        if n is None:
            continue
        if b.unit != n.unit:  # seconds against instructions: no ratio means anything
            continue
        bm, nm = headline(b)[0], headline(n)[0]
        speed = bm / nm if bm is not None and nm else None
        pairs.append({"name": b.label, "key": list(key), "speedup": speed,
                      "verdict": "ratio of the headlines only (use steadybench compare for a "
                                 "test)"})
    return {"kind": "headline-ratio", "pairs": pairs}


def _match(cases: Sequence[CaseResult], entry: Mapping[str, Any], name: str) -> CaseResult | None:
    """The case a comparison row is about: by (benchmark, implementation, parameters), else by
    label or name."""
    if entry.get("benchmark") is not None:
        params = entry.get("params") if isinstance(entry.get("params"), Mapping) else {}
        key = (str(entry["benchmark"]), str(entry.get("implementation") or entry["benchmark"]),
               ",".join(f"{k}={v}" for k, v in params.items()))
        for case in cases:
            if case.key == key:
                return case
    key = entry.get("key")
    if isinstance(key, Sequence) and not isinstance(key, str) and len(key) == 3:
        for case in cases:
            if list(case.key) == [str(k) for k in key]:
                return case
    for case in cases:
        if name in (case.label, case.benchmark):
            return case
    return None


def _verdict_line(pair: Mapping[str, Any]) -> str:
    """"x: NEW is 1.250× faster than BASE [1.1, 1.4] — faster (p < 1e-16)"."""
    sp = pair.get("speedup")
    ci = pair.get("ci")
    if isinstance(sp, int | float) and ci and ci[0] is not None and ci[1] is not None \
            and ci[0] <= 1 <= ci[1]:  # no direction beside "no difference"
        text = f"{pair['name']}: no clear difference, {ratio_text(float(sp), *ci)}"
    elif isinstance(sp, int | float):
        words, _, interval = factor_text(float(sp), *(ci or (None, None))).partition(" [")
        text = f"{pair['name']}: NEW is {words} than BASE" + (f" [{interval}" if interval
                                                             else "")
    else:
        text = f"{pair['name']}: no ratio"
    tail = []
    if pair.get("verdict"):
        tail.append(str(pair["verdict"]))
    if pair.get("p_value") is not None:
        # a raw p, named so: compare's table shows the p adjusted for multiple comparisons
        tail.append(f"unadjusted p {'= ' if pair['p_value'] >= pd.P_FLOOR else ''}"
                    f"{pd.p_value_text(pair['p_value'])}")
    return text + (f" — {', '.join(tail)}" if tail else "")


def _comparison_view(comparison: Mapping[str, Any], results_list: Sequence[Results],
                     figs: _Figures, *, with_pair_plots: bool) -> dict[str, Any]:
    from .figures.common import safe_name
    from .figures.comparison import comparison_figure, suite_figure

    pairs = cd.comparison_pairs(comparison)
    raw_entries = cd.comparison_entries(comparison)
    gain = cd.overall_gain(comparison)
    images = []
    if any(p["speedup"] is not None for p in pairs):
        images.append(figs.add("comparison-suite", lambda: suite_figure(comparison)))
    pair_images = []
    if with_pair_plots and len(results_list) >= 2 and len(pairs) <= MAX_PAIR_PLOTS:
        base_cases, new_cases = results_list[0].cases, results_list[1].cases
        for i, (pair, raw) in enumerate(zip(pairs, raw_entries), start=1):
            b = _match(base_cases, raw, pair["name"])
            n = _match(new_cases, raw, pair["name"])
            if b is None or n is None:
                continue
            pair_images.append(figs.add(
                f"comparison-{i:03d}-{safe_name(pair['name'])}",
                lambda b=b, n=n, raw=raw, name=pair["name"]: comparison_figure(
                    b, n, raw, labels=("BASE", "NEW"), title=name)))
    other = {k: v for k, v in comparison.items()
             if k not in cd.PAIR_KEYS + ("suite", "warnings")}
    suite = comparison.get("suite")
    suite_rows = rows({k: v for k, v in suite.items() if k != "gain"}) \
        if isinstance(suite, Mapping) else []
    warnings = comparison.get("warnings")
    warnings = [str(w) for w in warnings] if isinstance(warnings, list) else []
    return {"pairs": pairs, "gain": gain, "images": images, "pair_images": pair_images,
            "rows": rows(other), "suite_rows": suite_rows, "warnings": warnings,
            "verdicts": [_verdict_line(p) for p in pairs]}


# ============================================================================ ab
def is_ab(doc: Any) -> bool:
    """Whether ``doc`` is the JSON of ``steadybench ab``."""
    return isinstance(doc, Mapping) and doc.get("kind") == "steadybench-ab"


def _ab_view(doc: Mapping[str, Any], index: int, figs: _Figures) -> dict[str, Any]:
    import numpy as np

    from .figures.ab import ab_figure

    variants = doc.get("variants") if isinstance(doc.get("variants"), Mapping) else {}
    result = doc.get("result") if isinstance(doc.get("result"), Mapping) else {}
    rounds = [r for r in doc.get("rounds") or [] if isinstance(r, Mapping)]
    a = pd.as_floats([r.get("A") for r in rounds])
    b = pd.as_floats([r.get("B") for r in rounds])
    per_variant = []
    for label, values in (("A", a), ("B", b)):
        v = values[np.isfinite(values)]
        desc = variants.get(label, {}).get("description") if isinstance(
            variants.get(label), Mapping) else None
        per_variant.append({
            "label": label, "description": desc or label, "n": int(v.size),
            "median": pd.format_value(float(np.median(v))) if v.size else "–",
            "min": pd.format_value(float(v.min())) if v.size else "–",
            "max": pd.format_value(float(v.max())) if v.size else "–"})
    settings = doc.get("settings") if isinstance(doc.get("settings"), Mapping) else {}
    summary = doc.get("summary")
    level = settings.get("confidence")
    if not summary and isinstance(result.get("ratio"), int | float):
        words, _, interval = factor_text(result["ratio"], result.get("low"),
                                         result.get("high")).partition(" [")
        summary = f"B is {words} than A" + (f" [{interval}" if interval else "")
    return {
        "id": f"ab-{index}",
        "summary": summary,
        "confidence": _pct_text(level) if isinstance(level, int | float) else None,
        "verdict": doc.get("verdict"),
        # who is faster or slower, as the console says it ("verdict: slower" beside "A is
        # 6× faster than B" read as a contradiction: the word was B's)
        "verdict_text": {"faster": "B is faster", "slower": "B is slower",
                         "no difference": "no real difference found"}.get(
                             str(doc.get("verdict")), doc.get("verdict")),
        "reason": doc.get("reason"),
        "interim": bool(doc.get("interim")),
        "rounds": len(rounds),
        "elapsed": pd.format_value(doc["elapsed"]) if isinstance(doc.get("elapsed"),
                                                                 int | float) else "–",
        "method": result.get("method"),
        "variants": per_variant,
        "warnings": [str(w) for w in doc.get("warnings") or []],
        "failures": rows(doc.get("failures") if isinstance(doc.get("failures"), Mapping)
                         else {}),
        "settings": rows(settings),
        "image": figs.add(f"ab-{index}", lambda: ab_figure(doc)),
        "profiles": _ab_profiles(doc, index),
    }


def _compared_profiles(results_list: Sequence[Results]) -> Any:
    """Two results files that both carry profiles: per case, what moved (markup) or None."""
    if len(results_list) != 2:
        return None
    import html as _html

    import markupsafe

    from ..profiles.compare import profile_pairs
    from ..profiles.flame import pair_section

    pairs = profile_pairs(results_list[0], results_list[1])
    parts = [f"<h4>{_html.escape(label)} (A = first file, B = second)</h4>"
             + pair_section(pair.to_dict(), f"cmp-{i}-profile")
             for i, (label, pair) in enumerate(pairs.items(), start=1)]
    return markupsafe.Markup("".join(parts)) if parts else None


def _ab_profiles(doc: Mapping[str, Any], index: int) -> Any:
    """``ab --profile``'s section (markup), or None (:mod:`steadybench.profiles.flame`)."""
    if not isinstance(doc.get("profiles"), Mapping):
        return None
    import markupsafe

    from ..profiles.flame import pair_section

    return markupsafe.Markup(pair_section(doc["profiles"], f"ab-{index}-profile"))


# ============================================================================ inputs
def _input_view(results: Results, name: str, r_index: int, multi: bool, figs: _Figures, *,
                compact: bool, window: int, confidence: float) -> dict[str, Any]:
    from .figures.boxplot import boxplot_figure
    from .figures.growth import growth_figure, sweep_figure
    from .figures.relative import MAX_GROUPS, relative_figure

    prefix = f"{r_index}" if multi else ""
    cases = [_case_view(case, f"{prefix}-{i:03d}".lstrip("-"), figs, compact=compact,
                        window=window)
             for i, case in enumerate(results.cases, start=1)]
    groups = relative_groups(results.cases, confidence)
    drawn = [(g.heading, g.relations) for g in groups if not g.scan][:MAX_GROUPS]
    relative_images = [figs.add(f"{prefix}relative".lstrip("-"),
                                lambda: relative_figure(drawn))] if drawn else []
    sweep = results.context.get("sweep")
    growth_lines: list[str] = []
    growth_images = []
    if isinstance(sweep, Mapping):
        series = pd.sweep_series(sweep, "sweep")
        if series is not None:
            cmd = (results.cases[0].benchmark if results.cases else "") or "sweep"
            series.label = cmd
            line = _growth_text(series)
            if line:
                growth_lines.append(line)
        title = f"size sweep of {results.cases[0].benchmark}" if results.cases else "size sweep"
        growth_images.append(figs.add(f"{prefix}sweep".lstrip("-"),
                                      lambda: sweep_figure(results, title=title)))
    else:
        for i, (param, series_list) in enumerate(growth_plots(results.cases), start=1):
            growth_lines += [t for s in series_list if (t := _growth_text(s))]
            unit = estimate_unit(results.cases[0]) if results.cases else "s"
            growth_images.append(figs.add(
                f"{prefix}growth-{i}".lstrip("-"),
                lambda p=param, s=series_list, u=unit: growth_figure(
                    s, parameter=p, unit=u, title=f"time against {p}")))
    overview = []
    for c_index, start in enumerate(range(0, min(len(results.cases),
                                                 MAX_BOX_PLOTS * BOX_CHUNK), BOX_CHUNK), start=1):
        chunk = results.cases[start:start + BOX_CHUNK]
        if not any(c.keep_samples and c.n for c in chunk):
            continue
        title = f"{results.suite} — {name}" + (
            f" (cases {start + 1}–{start + len(chunk)})" if len(results.cases) > BOX_CHUNK
            else "")
        overview.append(figs.add(f"{prefix}overview-{c_index}".lstrip("-"),
                                 lambda ch=chunk, t=title: boxplot_figure(ch, title=t)))
    kinds = sorted({c.method for c in results.cases}) or ["–"]
    return {
        "id": f"input-{r_index}",
        "index": r_index,
        "name": name,
        "results": results,
        "kind": ", ".join(kinds),
        "summary": [dict(view=c, **_summary_value(c["case"])) for c in cases],
        "environment": rows(results.environment),
        "context": _context_view(results.context),
        "overview": overview,
        "relative": [g for g in groups if not g.scan],
        "scans": [g for g in groups if g.scan],
        "relative_images": relative_images,
        "growth_lines": growth_lines,
        "growth_images": growth_images,
        "sweep_rows": _sweep_rows(sweep),
        "sweep_table": _sweep_table(sweep) if isinstance(sweep, Mapping) else [],
        "cases": cases,
        "failed": len(results.failed),
        "warnings": sum(len(c.warnings) for c in results.cases),
        "sections": _context_sections(results, figs, prefix),
    }


def _context_view(context: Mapping[str, Any]) -> dict[str, Any]:
    special = {}
    rest = {}
    for key, value in context.items():
        lk = str(key).lower()
        if lk in ("preset", "applied", "skipped", "countermeasures"):
            special[lk] = value
        elif lk != "sweep" and key not in CONTEXT_SECTIONS:  # those have their own section
            rest[key] = value
    cm = special.get("countermeasures")
    if isinstance(cm, Mapping):
        special.setdefault("applied", cm.get("applied"))
        special.setdefault("skipped", cm.get("skipped"))

    def items(value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, Mapping):
            return [f"{k}: {human(str(k), v)}" for k, v in value.items()]
        if isinstance(value, Sequence) and not isinstance(value, str):
            return [human("", v) for v in value]
        return [human("", value)]

    return {"preset": special.get("preset"), "applied": items(special.get("applied")),
            "skipped": items(special.get("skipped")), "rows": rows(rest)}


# ============================================================================ public
def write_report(results_list: list[Results], path: str | os.PathLike[str], *,
                 comparison: Comparison | Mapping[str, Any] | None = None,
                 plots_dir: str | None = None,
                 plot_format: str = "png", window: int = 10,
                 labels: Sequence[str] | None = None,
                 ab: Sequence[Mapping[str, Any]] | None = None,
                 confidence: float = 0.95) -> Path:
    """Write a self-contained HTML report; return the path.

    Args:
        results_list: Results of ``run``, ``exec``, ``iters`` or ``sweep`` (for example a
            baseline and a candidate); may be empty when a ``comparison`` or ``ab`` is given.
        path: the HTML file to write (atomically).
        comparison: a :class:`~steadybench.compare.result.Comparison`, or a comparison
            document (``steadybench compare --json``, or another tool's with the keys
            :mod:`steadybench.output.comparedata` reads); its verdicts and the
            suite overview are shown first. With two results and no comparison, the pairs are
            matched and their ratio of medians is shown, labelled as such (no test).
        plots_dir: also write every figure there as a separate file.
        plot_format: ``png`` or ``svg`` for the files in ``plots_dir`` (the report embeds PNG).
        window: moving-median window of the run-by-run series.
        labels: a name per input (file names, by default "results 1", "results 2", ...).
        ab: documents written by ``steadybench ab --json``.
        confidence: level of the intervals of the relative comparisons.
    """
    if isinstance(results_list, Results):
        results_list = [results_list]
    results_list = list(results_list)
    ab_docs = list(ab or [])
    if not all(isinstance(r, Results) for r in results_list):
        raise ConfigurationError("write_report needs a list of Results")
    if not all(is_ab(d) for d in ab_docs):
        raise ConfigurationError("write_report: ab documents must be steadybench ab JSON")
    if not results_list and comparison is None and not ab_docs:
        raise ConfigurationError("write_report needs at least one Results, a comparison or "
                                 "an ab result")
    if plot_format not in ("png", "svg"):
        raise ConfigurationError(f"plot format must be png or svg, not {plot_format!r}")
    if labels is not None and len(labels) != len(results_list):
        raise ConfigurationError("write_report: one label per results input")
    names = list(labels) if labels else [f"results {i}" for i in range(1, len(results_list) + 1)]
    if plots_dir:  # the folder asked for (not its parents, which must exist)
        Path(plots_dir).mkdir(exist_ok=True)
    figs = _Figures(Path(plots_dir) if plots_dir else None, plot_format)
    total_cases = sum(len(r.cases) for r in results_list)
    compact = total_cases > COMPACT_CASES

    comparison_view = None
    if comparison is None and len(results_list) == 2:
        comparison = simple_comparison(results_list[0], results_list[1])
    from ..compare.result import Comparison

    if isinstance(comparison, Comparison):  # the view reads the document's keys
        comparison = comparison.to_dict()
    if comparison is not None:
        if not isinstance(comparison, Mapping):
            raise ConfigurationError("comparison must be a dict (the compare JSON)")
        comparison_view = _comparison_view(comparison, results_list, figs,
                                           with_pair_plots=not compact)
        comparison_view["profiles"] = _compared_profiles(results_list)
    ab_views = [_ab_view(doc, i, figs) for i, doc in enumerate(ab_docs, start=1)]
    inputs = [_input_view(results, name, i, len(results_list) > 1, figs, compact=compact,
                          window=window, confidence=confidence)
              for i, (results, name) in enumerate(zip(results_list, names), start=1)]
    _draw_all(figs)

    kinds = []
    if comparison_view is not None:
        kinds.append("compare")
    if ab_views:
        kinds.append("ab")
    kinds += [f"results (method {i['kind']})" for i in inputs]
    title = " vs ".join(dict.fromkeys(r.suite for r in results_list)) or (
        "A/B comparison" if ab_views and comparison is None else "comparison")
    html = _environment().get_template("report.html.j2").render(
        title=title,
        version=__version__,
        kinds=", ".join(dict.fromkeys(kinds)),
        inputs=inputs,
        comparison=comparison_view,
        ab=ab_views,
        compact=compact,
        total_cases=total_cases,
        primary=PRIMARY_METRIC,
        script_src=_flame_script_source(),
    )
    return atomic_write_text(path, html)


def _flame_script_source() -> str:
    """The one script a report may run (the flame graphs'), by its hash."""
    from ..profiles.flame import CSP_SOURCE

    return CSP_SOURCE
