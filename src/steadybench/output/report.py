"""A self-contained HTML report of one or several results files.

:func:`write_report` writes one HTML file: the environment and preset of each session, a
summary table, an overview box plot, then one section per case with its plots, statistics,
warnings and stop reason; when a comparison is given (two results files, or ``compare``), its
verdicts and the suite overview come first. The plots of :mod:`steadybench.output.plots` are
embedded as ``data:`` URIs and the style sheet is inline, so the file needs no network and
works from a ``file://`` URL; a Content-Security-Policy forbids every fetch and every script.

Every text that comes from the measured benchmarks (names, parameters, commands, program output,
warnings) goes through jinja2's autoescaping; ids and anchors are made from indices, never from
names.

Huge results are kept to a reasonable size: beyond :data:`COMPACT_CASES` cases, each case gets
one small figure (series and histogram side by side) instead of three, and the plots draw
summaries where raw points would be too many (see :mod:`steadybench.output.plots`).
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from .. import __version__
from ..errors import ConfigurationError
from ..fileio import atomic_write_bytes, atomic_write_text
from ..model.results import (
    PRIMARY_METRIC,
    RUN_FAILED,
    RUN_OK,
    RUN_REMOVED,
    RUN_WARMUP,
    CaseResult,
    Results,
)
from . import plots as pl
from .format import (
    case_estimate,
    confidence_text,
    estimate_ci_text,
    estimate_unit,
    estimate_value_text,
)

TEMPLATES = Path(__file__).with_name("templates")
#: more cases than this (over all inputs) → one compact figure per case
COMPACT_CASES = 24
#: at most this many cases per overview box plot
BOX_CHUNK = 30
#: per-pair comparison plots are drawn for at most this many pairs
MAX_PAIR_PLOTS = 40
#: longest text shown for one value of the environment, context or extra fields
MAX_VALUE_CHARS = 600
#: sections drawn from a key of a results file's context: key -> "module:function", called
#: with the context value and ``image(figure, name)``; returns ``{"title", "html"}`` (markup)
CONTEXT_SECTIONS = {"evaluate": "steadybench.evaluate.figures:report_section"}


# ============================================================================ helpers
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["value"] = pl.format_value
    env.filters["num"] = _num_text
    env.filters["pct"] = _pct_text
    env.filters["factor"] = _factor_text
    return env


def _num_text(value: Any, digits: int = 4) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else str(value)
    if isinstance(value, int | float):
        return f"{value:.{digits}g}" if math.isfinite(float(value)) else "–"
    return str(value)


def _pct_text(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"{value * 100:.2f} %"
    return "–"


def _plain(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A JSON-ish value as short text (strings as they are, the rest as compact JSON)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, float | int) and not isinstance(value, bool):
        text = _num_text(value, 6)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rows(mapping: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(key, text) rows of a mapping, nested mappings flattened with dotted keys."""
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any, depth: int) -> None:
        if isinstance(value, Mapping) and value and depth < 2:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v, depth + 1)
        else:
            rows.append((prefix, _plain(value)))

    for key, value in (mapping or {}).items():
        walk(str(key), value, 0)
    return rows


def _image(fig: Any, name: str, plots_dir: Path | None, plot_format: str,
           written: list[Path]) -> dict[str, str]:
    """Embed a figure as a PNG data URI (and write it to ``plots_dir`` when asked)."""
    png = pl.figure_bytes(fig, "png")
    if plots_dir is not None:
        data = png if plot_format == "png" else pl.figure_bytes(fig, plot_format)
        written.append(atomic_write_bytes(plots_dir / f"{name}.{plot_format}", data))
    fig.clear()
    return {"src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
            "name": name}


def _run_counts(case: CaseResult) -> dict[str, int]:
    return {
        "ok": case.count(RUN_OK) if case.keep_samples else case.n,
        "warmup": case.count(RUN_WARMUP),
        "removed": case.count(RUN_REMOVED),
        "failed": case.count(RUN_FAILED),
        "outliers": sum(1 for f in case.outlier if f),
    }


def _extra_rows(case: CaseResult) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(short rows, long texts) of ``case.extra``, leaving out the fit and sweep (plotted)."""
    short, long = [], []
    for key, value in case.extra.items():
        if key in ("fit", "sweep"):
            continue
        if isinstance(value, str) and ("\n" in value or len(value) > 120):
            long.append((key, value[-20_000:]))
        else:
            short.append((key, _plain(value)))
    return short, long


def _fit_rows(fit: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(fit, Mapping):
        return []
    rows = []
    for key in ("kind", "slope", "intercept", "slope_ci", "confidence", "r2"):
        if key in fit:
            value = fit[key]
            if key in ("slope", "intercept") and isinstance(value, int | float):
                rows.append((key, pl.format_value(float(value))))
            elif key == "slope_ci" and isinstance(value, Sequence) and len(value) == 2:
                rows.append((key, f"[{pl.format_value(value[0])}, {pl.format_value(value[1])}]"))
            else:
                rows.append((key, _plain(value)))
    if fit.get("dropped"):
        rows.append(("dropped points", _plain(fit["dropped"])))
    if isinstance(fit.get("loglog"), Mapping):
        rows.append(("log-log fit", _plain(fit["loglog"])))
    return rows


def _sweep_rows(sweep: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if not isinstance(sweep, Mapping):
        return []
    rows = []
    cx = sweep.get("complexity")
    if isinstance(cx, Mapping):
        for key in ("best", "coefficient"):
            if key in cx:
                rows.append((f"complexity {key}", _plain(cx[key])))
        if cx.get("candidates"):
            rows.append(("candidates", _plain(cx["candidates"])))
    if "r2" in sweep:
        rows.append(("R²", _plain(sweep["r2"])))
    return rows


def _estimate(case: CaseResult) -> dict[str, Any] | None:
    """The case's :class:`~steadybench.model.estimate.Estimate` for the template: the same
    texts as the console (``value_text``, ``ci_text``, ``confidence_text``), the interval's
    bounds, what it stands on, and the method's figures; None when the case has no estimate."""
    est = case_estimate(case)
    if est is None:
        return None
    if est.independent:
        level = f"across {est.n_executions} independent executions"
    else:
        level = f"across the runs of {est.n_executions or 'no'} execution" \
            + ("s" if est.n_executions > 1 else "")
    rows = [("statistic", est.statistic or "–"), ("level", level), ("runs", str(est.n_runs))]
    if est.within_cov is not None:
        rows.append(("CoV within an execution", _pct_text(est.within_cov)))
    if est.between_cov is not None:
        rows.append(("CoV between executions", _pct_text(est.between_cov)))
    rows += [(k, _plain(v)) for k, v in est.fields.items()]
    return {"value": est.value, "low": est.ci_low, "high": est.ci_high,
            "confidence": est.confidence, "unit": est.unit, "method": est.method,
            "value_text": estimate_value_text(est), "ci_text": estimate_ci_text(est),
            "confidence_text": confidence_text(est), "error": est.error, "rest": rows}


def _case_view(case: CaseResult, index: str, *, figures: bool, compact: bool,
               plots_dir: Path | None, plot_format: str, written: list[Path],
               window: int) -> dict[str, Any]:
    images: list[dict[str, str]] = []
    if figures:
        stem = f"{index}-{pl._safe_name(case.label)}"
        if compact:
            figs = {"runs": _compact_figure(case, window)}
            for kind in ("fit", "sweep"):
                if isinstance(case.extra.get(kind), Mapping):
                    figs[kind] = (pl.fit_figure(case) if kind == "fit"
                                  else pl.sweep_figure(case))
        else:
            figs = pl.case_figures(case, window=window)
        images = [_image(fig, f"{stem}-{kind}", plots_dir, plot_format, written)
                  for kind, fig in figs.items()]
    short, long = _extra_rows(case)
    unit = estimate_unit(case)
    return {
        "id": f"case-{index}",
        "case": case,
        "unit": unit,
        "label": case.label,
        "params": [(str(k), _plain(v)) for k, v in case.params.items()],
        "counts": _run_counts(case),
        "stats": [(k, case.stats.get(k)) for k in ("mean", "median", "stdev", "min", "max",
                                                   "q1", "q3", "iqr")
                  if k in case.stats],
        "cov": case.stats.get("cov"),
        "ci": case.ci if isinstance(case.ci, Mapping) else None,
        "estimate": _estimate(case),
        "fit": _fit_rows(case.extra.get("fit")),
        "sweep": _sweep_rows(case.extra.get("sweep")),
        "extra": short,
        "texts": long,
        "analyses": [(k, _plain(v)) for k, v in case.analyses.items()],
        "images": images,
    }


def _compact_figure(case: CaseResult, window: int) -> Any:
    """Series and histogram of one case side by side, small: the per-case figure of huge
    reports."""

    def build() -> Any:
        fig = pl.new_figure(8.0, 2.6, layout=None)  # fixed margins: fast for many cases
        fig.subplots_adjust(left=0.08, right=0.98, bottom=0.17, top=0.9, wspace=0.25)
        left, right = fig.subplots(1, 2, width_ratios=[2, 1])
        pl.draw_timeseries([left], case, window=window, secondary=False)
        pl.draw_histogram(right, case)
        return fig

    return pl._build(build)


def _summary_value(case: CaseResult) -> dict[str, Any]:
    """The summary row's headline: the Estimate, as the console prints it (no fallback to
    another statistic: a case without an estimate shows the dash everywhere)."""
    est = case_estimate(case)
    return {"value": est.value if est is not None and est.ok else None,
            "low": est.ci_low if est is not None else None,
            "high": est.ci_high if est is not None else None,
            "value_text": estimate_value_text(est), "ci_text": estimate_ci_text(est),
            "confidence_text": confidence_text(est)}


def _context_view(context: Mapping[str, Any]) -> dict[str, Any]:
    special = {}
    rest = {}
    for key, value in context.items():
        lk = str(key).lower()
        if lk in ("preset", "applied", "skipped", "countermeasures"):
            special[lk] = value
        elif key in CONTEXT_SECTIONS:
            continue  # shown as its own section
        else:
            rest[key] = value
    cm = special.get("countermeasures")
    if isinstance(cm, Mapping):
        special.setdefault("applied", cm.get("applied"))
        special.setdefault("skipped", cm.get("skipped"))

    def items(value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, Mapping):
            return [f"{k}: {_plain(v, 200)}" for k, v in value.items()]
        if isinstance(value, Sequence) and not isinstance(value, str):
            return [_plain(v, 200) for v in value]
        return [_plain(value)]

    return {"preset": special.get("preset"), "applied": items(special.get("applied")),
            "skipped": items(special.get("skipped")), "rows": _rows(rest)}


def _cases_by_key(results: Results) -> dict[tuple[str, str, str], CaseResult]:
    return {case.key: case for case in results.cases}


def _factor_text(ratio: Any, ci: Any = None) -> str:
    """A BASE/NEW ratio in words ("1.25× faster [1.1, 1.4]"), the way people say it."""
    from .format import factor_text

    if not isinstance(ratio, int | float):
        return "–"
    low, high = (ci[0], ci[1]) if ci else (None, None)
    return factor_text(float(ratio), low, high)


def simple_comparison(base: Results, new: Results) -> dict[str, Any]:
    """Pairs matched by (benchmark, implementation, parameters) with the ratio of medians.

    A fallback when no comparison from ``steadybench compare`` is given: no test, no CI and no
    verdict are made up here; the verdict column says so.
    """
    pairs = []
    new_cases = _cases_by_key(new)
    for key, b in _cases_by_key(base).items():
        n = new_cases.get(key)
        if n is None:
            continue
        bm, nm = b.stats.get("median"), n.stats.get("median")
        speed = bm / nm if isinstance(bm, int | float) and isinstance(nm, int | float) and nm \
            else None
        pairs.append({"name": b.label, "key": list(key), "speedup": speed,
                      "verdict": "ratio of medians only (use steadybench compare for a test)"})
    return {"kind": "median-ratio", "pairs": pairs}


def _comparison_view(comparison: Mapping[str, Any], results_list: Sequence[Results], *,
                     plots_dir: Path | None, plot_format: str, written: list[Path],
                     with_pair_plots: bool) -> dict[str, Any]:
    pairs = pl.comparison_pairs(comparison)
    raw_entries = pl.comparison_entries(comparison)
    gain = pl.overall_gain(comparison)
    images = []
    if pairs:
        images.append(_image(pl.suite_figure(comparison), "comparison-suite", plots_dir,
                             plot_format, written))
    pair_images = []
    if with_pair_plots and len(results_list) >= 2 and len(pairs) <= MAX_PAIR_PLOTS:
        base_cases = results_list[0].cases
        new_cases = results_list[1].cases
        for i, (pair, raw) in enumerate(zip(pairs, raw_entries), start=1):
            b = _match(base_cases, raw, pair["name"])
            n = _match(new_cases, raw, pair["name"])
            if b is None or n is None:
                continue
            fig = pl.comparison_figure(b, n, raw, title=pair["name"])
            pair_images.append(_image(fig, f"comparison-{i:03d}-{pl._safe_name(pair['name'])}",
                                      plots_dir, plot_format, written))
    other = {k: v for k, v in comparison.items() if k not in pl.PAIR_KEYS + ("suite",)}
    suite = comparison.get("suite")
    suite_rows = _rows({k: v for k, v in suite.items() if k != "gain"}) \
        if isinstance(suite, Mapping) else []
    warnings = comparison.get("warnings")
    warnings = [str(w) for w in warnings] if isinstance(warnings, list) else []
    other.pop("warnings", None)
    return {"pairs": pairs, "gain": gain, "images": images, "pair_images": pair_images,
            "rows": _rows(other), "suite_rows": suite_rows, "warnings": warnings}


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


def _context_sections(results: Results, image: Any) -> list[dict[str, Any]]:
    import importlib

    sections = []
    for key, target in CONTEXT_SECTIONS.items():
        data = results.context.get(key)
        if isinstance(data, Mapping):
            module, _, name = target.partition(":")
            sections.append(getattr(importlib.import_module(module), name)(data, image))
    return sections


# ============================================================================ public
def write_report(results_list: list[Results], path: str | os.PathLike[str], *,
                 comparison: dict[str, Any] | None = None, plots_dir: str | None = None,
                 plot_format: str = "png", window: int = 10,
                 labels: Sequence[str] | None = None) -> Path:
    """Write a self-contained HTML report of ``results_list`` to ``path``; return the path.

    Args:
        results_list: one or more Results (for example the baseline and the candidate); may be
            empty when a ``comparison`` is given (a suite compared from sample files).
        path: the HTML file to write (atomically).
        comparison: a comparison dict (``steadybench compare --json``); its verdicts and the
            suite overview are shown first. With two results and no comparison, the pairs are
            matched and their ratio of medians is shown, labelled as such (no test).
        plots_dir: also write every figure there as a separate file.
        plot_format: ``png`` or ``svg`` for the files in ``plots_dir`` (the report embeds PNG).
        window: moving-average window of the run-by-run series.
        labels: a name per input (file names, by default "results 1", "results 2", ...).
    """
    if isinstance(results_list, Results):
        results_list = [results_list]
    results_list = list(results_list)
    if not all(isinstance(r, Results) for r in results_list):
        raise ConfigurationError("write_report needs a list of Results")
    if not results_list and comparison is None:
        raise ConfigurationError("write_report needs at least one Results or a comparison")
    if plot_format not in pl.FORMATS.values():
        raise ConfigurationError(f"plot format must be png or svg, not {plot_format!r}")
    if labels is not None and len(labels) != len(results_list):
        raise ConfigurationError("write_report: one label per results input")
    names = list(labels) if labels else [f"results {i}" for i in range(1, len(results_list) + 1)]
    pdir = Path(plots_dir) if plots_dir else None
    written: list[Path] = []
    total_cases = sum(len(r.cases) for r in results_list)
    compact = total_cases > COMPACT_CASES

    comparison_view = None
    if comparison is None and len(results_list) == 2:
        comparison = simple_comparison(results_list[0], results_list[1])
    if comparison is not None:
        if not isinstance(comparison, Mapping):
            raise ConfigurationError("comparison must be a dict (the compare JSON)")
        comparison_view = _comparison_view(comparison, results_list, plots_dir=pdir,
                                           plot_format=plot_format, written=written,
                                           with_pair_plots=not compact)

    inputs = []
    for r_index, (results, name) in enumerate(zip(results_list, names), start=1):
        prefix = f"{r_index}" if len(results_list) > 1 else ""
        overview = []
        for c_index, start in enumerate(range(0, len(results.cases), BOX_CHUNK), start=1):
            chunk = results.cases[start:start + BOX_CHUNK]
            if not any(c.keep_samples and c.n for c in chunk):
                continue
            title = f"{results.suite} — {name}" + (
                f" (cases {start + 1}–{start + len(chunk)})" if len(results.cases) > BOX_CHUNK
                else "")
            overview.append(_image(pl.boxplot_figure(chunk, title=title),
                                   f"{prefix}overview-{c_index}".lstrip("-"), pdir,
                                   plot_format, written))
        sweep_image = None
        if isinstance(results.context.get("sweep"), Mapping):
            sweep_image = _image(pl.sweep_figure(results), f"{prefix}sweep", pdir, plot_format,
                                 written)
        cases = [
            _case_view(case, f"{prefix}-{i:03d}".lstrip("-"), figures=True, compact=compact,
                       plots_dir=pdir, plot_format=plot_format, written=written, window=window)
            for i, case in enumerate(results.cases, start=1)
        ]
        inputs.append({
            "id": f"input-{r_index}",
            "name": name,
            "results": results,
            "summary": [dict(view=c, **_summary_value(c["case"])) for c in cases],
            "environment": _rows(results.environment),
            "context": _context_view(results.context),
            "overview": overview,
            "sweep_image": sweep_image,
            "sweep_rows": _sweep_rows(results.context.get("sweep")),
            "cases": cases,
            "failed": len(results.failed),
            "sections": _context_sections(
                results, lambda fig, name, p=prefix: _image(fig, f"{p}{name}", pdir,
                                                            plot_format, written)),
        })

    html = _environment().get_template("report.html.j2").render(
        title=" vs ".join(dict.fromkeys(r.suite for r in results_list)) or "comparison",
        version=__version__,
        inputs=inputs,
        comparison=comparison_view,
        compact=compact,
        total_cases=total_cases,
        primary=PRIMARY_METRIC,
    )
    return atomic_write_text(path, html)

