"""The report's view models: what the template (``templates/report.html.j2``) shows of each
input, case, comparison and A/B result, as typed records built from the results.

Every text here is already written for a person (:mod:`steadybench.output.reporttext`); the
figures are :class:`~steadybench.output.figurepool.Image` records, drawn later by
:func:`~steadybench.output.figurepool.draw_all`; what is worked out from the results (groups,
growth series, matched cases) comes from :mod:`steadybench.output.reportanalysis`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..model.results import (
    RUN_FAILED,
    RUN_OK,
    RUN_REMOVED,
    RUN_WARMUP,
    CaseResult,
    Results,
)
from ..model.sequences import MadeOnRead
from . import comparedata as cd
from . import plotdata as pd
from .figurepool import FigureSet, Image, eager_image
from .format import (
    case_estimate,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
    factor_text,
    ratio_text,
)
from .groups import Comparison as VariantGroup
from .reportanalysis import growth_plots, growth_text, match_case, meter_metrics, variant_groups
from .reporttext import human, num_text, pct_text, rows

#: at most this many cases per overview box plot
BOX_CHUNK = 30
#: figures of their own for the first this many cases, overview box plots for the first
#: MAX_BOX_PLOTS × BOX_CHUNK: a report of 10^6 cases drew 10^6 figures for hours (issue 27
#: item 13); the table and every case's figures in numbers stay whole
MAX_CASE_FIGURES = 40
MAX_BOX_PLOTS = 4
#: per-pair comparison plots are drawn for at most this many pairs
MAX_PAIR_PLOTS = 40
#: sections drawn from a key of a results file's context: key -> "module:function", called
#: with the context value, ``image(figure, name)`` and the Results; returns ``{"title",
#: "html"}`` (markup)
CONTEXT_SECTIONS = {"evaluate": "steadybench.evaluate.figures:report_section",
                    "fleet": "steadybench.fleet.report:report_section",
                    "counts_and_time": "steadybench.counts.report:report_section",
                    "profiles": "steadybench.profiles.flame:report_section"}

Rows = list[tuple[str, str]]


@dataclass(frozen=True)
class RunCounts:
    """How the runs of a case ended."""

    ok: int
    warmup: int
    removed: int
    failed: int
    outliers: int


@dataclass(frozen=True)
class EstimateView:
    """A case's :class:`~steadybench.model.estimate.Estimate` as the console says it."""

    value: float | None
    low: float | None
    high: float | None
    confidence: float | None
    unit: str | None
    method: str | None
    value_text: str
    ci_text: str
    confidence_text: str
    error: str | None
    rest: Rows


@dataclass(frozen=True)
class CaseView:
    """One case's details section."""

    id: str
    case: CaseResult
    unit: str
    label: str
    params: Rows
    counts: RunCounts
    stats: list[tuple[str, Any]]
    cov: Any
    ci: Mapping[str, Any] | None
    estimate: EstimateView | None
    fit: Rows
    sweep: Rows
    extra: Rows
    texts: Rows
    analyses: Rows
    images: list[Image]


@dataclass(frozen=True)
class SummaryRow:
    """One case's line of the results table: its estimate and interval in one unit, and the
    id of its details (:class:`CaseView`), made from the case alone."""

    id: str
    label: str
    case: CaseResult
    value_text: str
    ci_text: str
    interval: str
    confidence_text: str


@dataclass(frozen=True)
class ContextView:
    """The machine settings of a results file and the rest of its context, as rows."""

    preset: Any
    applied: list[str]
    skipped: list[str]
    rows: Rows


@dataclass(frozen=True)
class InputView:
    """One results file: its table, summary lines, figures and cases."""

    id: str
    index: int
    name: str
    results: Results
    kind: str
    summary: Sequence[SummaryRow]
    environment: Rows
    context: ContextView
    overview: list[Image]
    relative: list[VariantGroup]
    scans: list[VariantGroup]
    relative_images: list[Image]
    growth_lines: list[str]
    growth_images: list[Image]
    sweep_rows: Rows
    sweep_table: list[dict[str, str]]
    cases: Sequence[CaseView]
    failed: int
    warnings: int
    sections: list[Any]


@dataclass(frozen=True)
class ComparisonView:
    """A comparison document (``steadybench compare``'s, or the headline fallback)."""

    pairs: list[dict[str, Any]]
    gain: Any
    images: list[Image]
    pair_images: list[Image]
    rows: Rows
    suite_rows: Rows
    warnings: list[str]
    verdicts: list[str]
    profiles: Any = None


@dataclass(frozen=True)
class VariantSummary:
    """One variant of an A/B result."""

    label: str
    description: str
    n: int
    median: str
    min: str
    max: str


@dataclass(frozen=True)
class ABView:
    """One ``steadybench ab`` document."""

    id: str
    summary: Any
    confidence: str | None
    verdict: Any
    verdict_text: Any
    reason: Any
    interim: bool
    rounds: int
    elapsed: str
    method: Any
    variants: list[VariantSummary]
    warnings: list[str]
    failures: Rows
    settings: Rows
    image: Image
    profiles: Any


def _context_sections(results: Results, figs: FigureSet, prefix: str) -> list[dict[str, Any]]:
    """The sections of :data:`CONTEXT_SECTIONS` this results file has data for."""
    import importlib

    sections = []
    for key, target in CONTEXT_SECTIONS.items():
        data = results.context.get(key)
        if isinstance(data, Mapping):
            module, _, name = target.partition(":")
            hook = getattr(importlib.import_module(module), name)
            sections.append(hook(data, lambda fig, n: eager_image(figs, fig, f"{prefix}{n}"),
                                 results))
    return sections



def _run_counts(case: CaseResult) -> RunCounts:
    return RunCounts(
        ok=case.count(RUN_OK) if case.keep_samples else case.n,
        warmup=case.count(RUN_WARMUP),
        removed=case.count(RUN_REMOVED),
        failed=case.count(RUN_FAILED),
        outliers=sum(1 for f in case.outlier if f),
    )


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
            out.append((key, pct_text(value)))
        elif key == "r2":
            out.append(("R²", num_text(value, 5)))
        else:
            out.append((key, human(key, value)))
    if fit.get("dropped"):
        out.append(("dropped points", human("dropped", fit["dropped"])))
    if isinstance(fit.get("loglog"), Mapping):
        out += [(f"log-log {k}", v) for k, v in rows(fit["loglog"])]
    return out


def _estimate(case: CaseResult) -> EstimateView | None:
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
        extra.append(("CoV within an execution", pct_text(est.within_cov)))
    if est.between_cov is not None:
        extra.append(("CoV between executions", pct_text(est.between_cov)))
    extra += rows(est.fields, est.unit or "s")
    return EstimateView(value=est.value, low=est.ci_low, high=est.ci_high,
                        confidence=est.confidence, unit=est.unit, method=est.method,
                        value_text=estimate_value_text(est), ci_text=estimate_ci_text(est),
                        confidence_text=confidence_text(est), error=est.error, rest=extra)


def _summary_row(case: CaseResult, index: str) -> SummaryRow:
    est = case_estimate(case)
    unit = estimate_unit(case)
    interval = "—"
    if est is not None and est.ok and est.has_ci and est.ci_low is not None \
            and est.ci_high is not None:
        interval = f"[{pd.format_value(est.ci_low, unit)}, {pd.format_value(est.ci_high, unit)}]"
    return SummaryRow(id=f"case-{index}", label=case.label, value_text=estimate_value_text(est),
                      ci_text=estimate_ci_text(est), interval=interval,
                      confidence_text=confidence_text(est), case=case)


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



def _case_figures(case: CaseResult, stem: str, figs: FigureSet, *, compact: bool,
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


def _case_view(case: CaseResult, index: str, figs: FigureSet, *, compact: bool,
               window: int, draw: bool = True) -> CaseView:
    """The details of one case; its figures are added to ``figs`` only when ``draw`` (a view
    built while the page is written, after the figures were drawn, has none)."""
    from .figures.common import safe_name

    unit = estimate_unit(case)
    short, long = _extra_rows(case, unit)
    stats = [(k, case.stats.get(k)) for k in ("mean", "median", "stdev", "min", "max",
                                              "q1", "q3", "iqr") if k in case.stats]
    return CaseView(
        id=f"case-{index}",
        case=case,
        unit=unit,
        label=case.label,
        params=[(str(k), human(str(k), v, "")) for k, v in case.params.items()],
        counts=_run_counts(case),
        stats=stats,
        cov=case.stats.get("cov"),
        ci=case.ci if isinstance(case.ci, Mapping) else None,
        estimate=_estimate(case),
        fit=_fit_rows(case.extra.get("fit")),
        sweep=_sweep_rows(case.extra.get("sweep")),
        extra=short,
        texts=long,
        analyses=rows(case.analyses, unit),
        images=_case_figures(case, f"{index}-{safe_name(case.label)}", figs,
                             compact=compact, window=window) if draw else [],
    )


T = TypeVar("T")
U = TypeVar("U")


class LazyViews(MadeOnRead[U]):
    """``make(item, i)`` of every item of ``items``, made when it is read, never kept: the
    page reads each case's view once for the table and once for its details, and 10^6 views
    held at once were a gigabyte (issue 27 item 13). ``kept`` views, made before (the cases
    with figures, which must be added before the figures are drawn), are returned as made."""

    def __init__(self, items: Sequence[T], make: Callable[[T, int], U],
                 kept: Sequence[U] = ()) -> None:
        self._items = items
        self._make = make
        self._kept = list(kept)

    def __len__(self) -> int:
        return len(self._items)

    def _at(self, i: int) -> U:
        return self._kept[i] if i < len(self._kept) else self._make(self._items[i], i)

    def __bool__(self) -> bool:
        return len(self) > 0


def _case_index(prefix: str, i: int) -> str:
    """The index in the ids of the ``i``-th case (from 0) of the input ``prefix``."""
    return f"{prefix}-{i + 1:03d}".lstrip("-")


def _case_views(cases: Sequence[CaseResult], prefix: str, figs: FigureSet, *, compact: bool,
                window: int) -> Sequence[CaseView]:
    """The views of ``cases``: made now for those that still get figures
    (:data:`MAX_CASE_FIGURES` over the whole report), the rest when the page reads them."""
    def view(case: CaseResult, i: int, draw: bool = False) -> CaseView:
        return _case_view(case, _case_index(prefix, i), figs, compact=compact, window=window,
                          draw=draw)

    drawn = min(len(cases), max(0, MAX_CASE_FIGURES - figs.cases_drawn))
    return LazyViews(cases, view, [view(cases[i], i, True) for i in range(drawn)])


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
                        ", ".join(f"{k}: {pct_text(v)}" for k, v in
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
        row = {"size": num_text(float(size)), "mean": pd.format_value(float(series.y[i]))}
        if series.low is not None and series.high is not None:
            row["stddev"] = pd.format_value(float(series.high[i] - series.y[i]))
        if series.geomean is not None:
            row["geomean"] = pd.format_value(float(series.geomean[i]))
        if series.r2 is not None:
            row["r2"] = f"{float(series.r2[i]):.5f}"
        out.append(row)
    return out



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


def comparison_view(comparison: Mapping[str, Any], results_list: Sequence[Results],
                    figs: FigureSet, *, with_pair_plots: bool) -> ComparisonView:
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
            b = match_case(base_cases, raw, pair["name"])
            n = match_case(new_cases, raw, pair["name"])
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
    return ComparisonView(pairs=pairs, gain=gain, images=images, pair_images=pair_images,
                          rows=rows(other), suite_rows=suite_rows, warnings=warnings,
                          verdicts=[_verdict_line(p) for p in pairs],
                          profiles=_compared_profiles(results_list))



def ab_view(doc: Mapping[str, Any], index: int, figs: FigureSet) -> ABView:
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
        per_variant.append(VariantSummary(
            label=label, description=desc or label, n=int(v.size),
            median=pd.format_value(float(np.median(v))) if v.size else "–",
            min=pd.format_value(float(v.min())) if v.size else "–",
            max=pd.format_value(float(v.max())) if v.size else "–"))
    settings = doc.get("settings") if isinstance(doc.get("settings"), Mapping) else {}
    summary = doc.get("summary")
    level = settings.get("confidence")
    if not summary and isinstance(result.get("ratio"), int | float):
        words, _, interval = factor_text(result["ratio"], result.get("low"),
                                         result.get("high")).partition(" [")
        summary = f"B is {words} than A" + (f" [{interval}" if interval else "")
    return ABView(
        id=f"ab-{index}",
        summary=summary,
        confidence=pct_text(level) if isinstance(level, int | float) else None,
        verdict=doc.get("verdict"),
        # who is faster or slower, as the console says it ("verdict: slower" beside "A is
        # 6× faster than B" read as a contradiction: the word was B's)
        verdict_text={"faster": "B is faster", "slower": "B is slower",
                      "no difference": "no real difference found"}.get(
                          str(doc.get("verdict")), doc.get("verdict")),
        reason=doc.get("reason"),
        interim=bool(doc.get("interim")),
        rounds=len(rounds),
        elapsed=pd.format_value(doc["elapsed"]) if isinstance(doc.get("elapsed"),
                                                              int | float) else "–",
        method=result.get("method"),
        variants=per_variant,
        warnings=[str(w) for w in doc.get("warnings") or []],
        failures=rows(doc.get("failures") if isinstance(doc.get("failures"), Mapping)
                      else {}),
        settings=rows(settings),
        image=figs.add(f"ab-{index}", lambda: ab_figure(doc)),
        profiles=_ab_profiles(doc, index),
    )


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



def input_view(results: Results, name: str, r_index: int, multi: bool, figs: FigureSet, *,
               compact: bool, window: int, confidence: float) -> InputView:
    from .figures.boxplot import boxplot_figure
    from .figures.growth import growth_figure, sweep_figure
    from .figures.relative import MAX_GROUPS, relative_figure

    prefix = f"{r_index}" if multi else ""
    cases = _case_views(results.cases, prefix, figs, compact=compact, window=window)
    groups = variant_groups(results.cases, confidence)
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
            line = growth_text(series)
            if line:
                growth_lines.append(line)
        title = f"size sweep of {results.cases[0].benchmark}" if results.cases else "size sweep"
        growth_images.append(figs.add(f"{prefix}sweep".lstrip("-"),
                                      lambda: sweep_figure(results, title=title)))
    else:
        for i, (param, series_list) in enumerate(growth_plots(results.cases), start=1):
            growth_lines += [t for s in series_list if (t := growth_text(s))]
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
    return InputView(
        id=f"input-{r_index}",
        index=r_index,
        name=name,
        results=results,
        kind=", ".join(kinds),
        summary=LazyViews(results.cases, lambda case, i: _summary_row(case,
                                                                  _case_index(prefix, i))),
        environment=rows(results.environment),
        context=_context_view(results.context),
        overview=overview,
        relative=[g for g in groups if not g.scan],
        scans=[g for g in groups if g.scan],
        relative_images=relative_images,
        growth_lines=growth_lines,
        growth_images=growth_images,
        sweep_rows=_sweep_rows(sweep),
        sweep_table=_sweep_table(sweep) if isinstance(sweep, Mapping) else [],
        cases=cases,
        failed=len(results.failed),
        warnings=sum(len(c.warnings) for c in results.cases),
        sections=_context_sections(results, figs, prefix),
    )


def _context_view(context: Mapping[str, Any]) -> ContextView:
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

    return ContextView(preset=special.get("preset"), applied=items(special.get("applied")),
                       skipped=items(special.get("skipped")), rows=rows(rest))

