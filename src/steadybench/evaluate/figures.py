"""Figures 15 and 16 of Rancid's evaluation, and the ``evaluate`` section of the HTML report.

Both figures are drawn from the evaluation's JSON form (``Results.context["evaluate"]``), so
the report shows exactly the numbers the JSON holds and ``steadybench report`` redraws them
from a results file:

- :func:`fig15_figure`: per case, the baseline and managed boxes side by side, boxes at the
  quartiles with the median, whiskers at the 1st and 99th percentiles, each subplot scaled to
  the minimum and maximum of its pair (the paper's Fig. 15).
- :func:`fig16_figure`: per case, the relative error of the running median against the
  reference and the running IQR relative to the median, baseline and managed on one figure
  (the paper's Fig. 16).

:func:`report_section` is the hook :mod:`steadybench.output.report` calls for a results file
that holds an evaluation: the tables as HTML and the figures as images.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: at most this many cases per Fig. 15 figure
FIG15_CHUNK = 12
FIG15_COLUMNS = 4
COLORS = {"baseline": "#d62728", "managed": "#1f77b4"}


def _esc(text: Any) -> str:
    return str(text).replace("$", r"\$")


def _short(text: Any, limit: int = 38) -> str:
    text = str(text)
    return _esc(text if len(text) <= limit else text[:limit - 1] + "…")


def _scale(values: Sequence[float]) -> tuple[float, str]:
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    magnitude = sorted(finite)[len(finite) // 2] if finite else 1.0
    for factor, unit in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms"), (1.0, "s")):
        if magnitude * factor < 1000:
            return factor, unit
    return 1.0, "s"


def fig15_figure(cases: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None
                 ) -> Any:
    """The Fig. 15 boxes of ``cases`` (the evaluation's case dicts), one subplot per case."""
    from ..output.plots import new_figure

    names = names or {"baseline": "baseline", "managed": "managed"}
    count = max(len(cases), 1)
    cols = min(FIG15_COLUMNS, count)
    rows = math.ceil(count / cols)
    fig = new_figure(2.6 * cols + 0.6, 2.5 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False)
    for index, ax in enumerate(axes.flat):
        if index >= len(cases):
            ax.set_visible(False)
            continue
        case = cases[index]
        boxes = case.get("fig15") or {}
        present = [(role, boxes.get(role)) for role in ("baseline", "managed")
                   if boxes.get(role)]
        ax.set_title(_short(case.get("label", "")), fontsize=8)
        if not present:
            ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        factor, unit = _scale([b["median"] for _, b in present])
        stats = [{"label": _esc(names.get(role, role)), "whislo": b["p1"] * factor,
                  "q1": b["q1"] * factor, "med": b["median"] * factor, "q3": b["q3"] * factor,
                  "whishi": b["p99"] * factor, "fliers": []} for role, b in present]
        artists = ax.bxp(stats, showfliers=False, patch_artist=True, widths=0.55)
        for patch, (role, _) in zip(artists["boxes"], present):
            patch.set_facecolor(COLORS[role])
            patch.set_alpha(0.35)
        low = min(b["min"] for _, b in present) * factor
        high = max(b["max"] for _, b in present) * factor
        pad = (high - low) * 0.04 or abs(high) * 0.01 or 1.0
        ax.set_ylim(low - pad, high + pad)
        ax.set_ylabel(unit, fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle("Fig. 15: runs per preset\nbox: quartiles, median; whiskers: p1–p99; "
                 "axes: the pair's min–max", fontsize=8)
    return fig


def fig16_figure(case: Mapping[str, Any], names: Mapping[str, str] | None = None) -> Any:
    """The Fig. 16 error evolution of one case: relative error of the running median against
    the reference (top) and IQR / median (bottom), baseline and managed."""
    from ..output.plots import new_figure

    names = names or {"baseline": "baseline", "managed": "managed"}
    fig = new_figure(6.5, 4.4)
    err_ax, iqr_ax = fig.subplots(2, 1, sharex=True)
    data = case.get("fig16") or {}
    reference = data.get("reference")
    drawn = False
    for role in ("baseline", "managed"):
        curve = data.get(role) or {}
        n = curve.get("n") or []
        if not n:
            continue
        drawn = True
        err = [math.nan if v is None else v * 100 for v in curve.get("error", [])]
        iqr = [math.nan if v is None else v * 100 for v in curve.get("iqr", [])]
        label = _esc(names.get(role, role))
        err_ax.plot(n, err, color=COLORS[role], linewidth=1.3, label=label)
        iqr_ax.plot(n, iqr, color=COLORS[role], linewidth=1.3, label=label)
    if not drawn or reference is None:
        err_ax.text(0.5, 0.5, "no runs, or no reference: no error evolution", ha="center",
                    va="center", transform=err_ax.transAxes)
    err_ax.axhline(0, color="#333333", linewidth=0.8)
    factor, unit = _scale([reference] if reference else [])
    ref_text = f"{reference * factor:.4g} {unit}" if reference else "—"
    err_ax.set_title(f"Fig. 16: {_short(case.get('label', ''), 50)} — running median vs "
                     f"reference {ref_text}", fontsize=9)
    err_ax.set_ylabel("relative error (%)")
    iqr_ax.set_ylabel("IQR / median (%)")
    iqr_ax.set_xlabel("runs n")
    if drawn:
        err_ax.legend(fontsize=7, loc="best")
    return fig


#: the section's template, beside the report's own (package data of output/templates)
SECTION_TEMPLATE = "evaluate-section.html.j2"


def _cells(row: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    from ..output.format import format_percent, format_seconds

    def signed(v: Any) -> str:
        return "—" if v is None else ("-" if v < 0 else "") + format_seconds(abs(v))

    if row is None:
        return [{"text": "—", "bold": False}] * 8
    cells = []
    for role in ("baseline", "managed"):
        cells.append({"text": format_seconds(row[role]["median"]), "bold": False})
        cells.append({"text": format_seconds(row[role]["std"]), "bold": False})
    for key in ("performance", "precision"):
        imp = row[key]
        cells.append({"text": signed(imp["absolute"]), "bold": imp["highlight"]})
        cells.append({"text": format_percent(imp["relative"]), "bold": imp["highlight"]})
    return cells


def section_html(evaluation: Mapping[str, Any],
                 image: Callable[[Any, str], Mapping[str, str]]) -> str:
    """The ``evaluate`` report section: tables, relations, level flags and the figures
    (``image(figure, name)`` embeds a figure and returns ``{"src", "name"}``)."""
    import jinja2

    from ..output.format import format_percent, format_seconds
    from .levels import Level

    options = evaluation.get("options") or {}
    cases = list(evaluation.get("cases") or [])
    names = {"baseline": str(options.get("baseline", "baseline")),
             "managed": str(options.get("managed", "managed"))}
    sources = sorted({(c.get("table2") or {}).get("source") for c in cases} - {None})
    tables = [
        {"title": "Table 2: baseline vs managed, "
                  + ("the launches' runs pooled (no --long)" if "pooled launches" in sources
                     else "one long execution each") + " (median and std of the runs)",
         "rows": [{"label": c.get("label"), "cells": _cells(c.get("table2"))} for c in cases],
         "note": "Without --long the launches' runs are pooled: their spread then includes "
                 "the spread between launches." if "pooled launches" in sources else ""},
        {"title": f"Table 3: reproducibility over {options.get('launches')} launches "
                  f"(median and std of the per-launch medians)",
         "rows": [{"label": c.get("label"), "cells": _cells(c.get("table3"))} for c in cases],
         "note": ""},
    ]
    levels = []
    for c in cases:
        for f in c.get("levels") or []:
            levels.append({"label": c.get("label"), "preset": f.get("preset"),
                           "where": "long" if f.get("series") == "long"
                           else f"launch {int(f.get('launch', 0)) + 1}",
                           "kind": f.get("kind"), "transitions": f.get("transitions"),
                           "level_values": ", ".join(format_seconds(Level.from_dict(lv).value)
                                               for lv in f.get("levels") or [])})
    presets = []
    for role in ("baseline", "managed"):
        rec = (evaluation.get("presets") or {}).get(role) or {}
        presets.append({"role": role, "name": rec.get("preset", names[role]),
                        "applied": ", ".join(a.get("name", "") for a in rec.get("applied", [])),
                        "skipped": ", ".join(f"{s.get('name')} ({s.get('reason')})"
                                             for s in rec.get("skipped", []))})
    fig15 = [image(fig15_figure(cases[i:i + FIG15_CHUNK], names), f"evaluate-fig15-{n}")
             for n, i in enumerate(range(0, len(cases), FIG15_CHUNK), start=1)]
    fig16 = [image(fig16_figure(c, names), f"evaluate-fig16-{i:03d}")
             for i, c in enumerate(cases, start=1)]
    templates = Path(__file__).resolve().parent.parent / "output" / "templates"
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=True,
                             undefined=jinja2.ChainableUndefined)
    return env.get_template(SECTION_TEMPLATE).render(
        ev=evaluation, presets=presets, tables=tables, levels=levels, fig15=fig15,
        fig16=fig16, relations=[f"{c['label']}: {c['relation']}" for c in cases
                                if c.get("relation")],
        abs_text=format_seconds(options.get("highlight_abs_s")),
        rel_text=format_percent(options.get("highlight_rel"), 0))


def report_section(evaluation: Mapping[str, Any],
                   image: Callable[[Any, str], Mapping[str, str]],
                   results: Any = None) -> dict[str, Any]:
    """The hook of :mod:`steadybench.output.report`: ``{"title", "html"}`` (markup)."""
    import markupsafe

    title = "Evaluation: baseline vs managed (Rancid §VI)"
    try:
        html = section_html(evaluation, image)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # a hand-edited or truncated results file: the rest of the report still stands
        text = markupsafe.escape(f"{type(exc).__name__}: {exc}")
        html = f'<p class="bad">The evaluation data of this file is malformed: {text}</p>'
    return {"title": title, "html": markupsafe.Markup(html)}
