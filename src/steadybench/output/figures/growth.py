"""Time against a parameter, log–log, with the fitted complexity class: the growth plot of a
``sweep`` (the logarithmic sweep over input sizes of seed 004, ``sweep_seq``) and of a ``run``
whose benchmarks take a numeric parameter.

The curve is ``c·f(n)`` of the best class, with f the very function the fit used
(:func:`steadybench.output.plotdata.complexity_function`; logarithms in base 2), so it passes
through the points the way the fit says it does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import CaseResult, Results
from .. import plotdata as pd
from .common import C_FREQ, SERIES_COLORS, build, esc, message, new_figure, save_figure, short


def _label(series: pd.GrowthSeries, factor: float, unit: str) -> str | None:
    cx = series.complexity or {}
    best, coef = cx.get("best"), cx.get("coefficient")
    if not best or not isinstance(coef, int | float):
        return None
    return f"fit {esc(best)}, c = {float(coef) * factor:.3g} {unit}"


def draw_growth(ax: Any, series: Sequence[pd.GrowthSeries], *, parameter: str = "size",
                unit: str = "s", title: str = "") -> None:
    """Each series as points (± its interval or stddev) on log–log axes, with the curve of its
    fitted class; the legend names the class and its coefficient."""
    if title:
        ax.set_title(short(title, 90))
    usable = []
    for s in series:
        good = np.isfinite(s.x) & np.isfinite(s.y) & (s.x > 0) & (s.y > 0)
        if good.any():
            usable.append((s, good))
    if not usable:
        message(ax, "no sweep data (positive sizes and times) to plot")
        return
    factor, unit = pd.time_scale(np.concatenate([s.y[g] for s, g in usable]), unit)
    for i, (s, good) in enumerate(usable):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        yerr = None
        if s.low is not None and s.high is not None:
            lo = np.where(np.isfinite(s.low[good]), s.y[good] - s.low[good], 0.0)
            hi = np.where(np.isfinite(s.high[good]), s.high[good] - s.y[good], 0.0)
            # a bar below zero cannot be drawn on a log axis: stop it at a tenth of the value
            lo = np.clip(lo, 0, s.y[good] * 0.9)
            yerr = np.vstack([lo, np.clip(hi, 0, None)]) * factor
        curve = s.curve()
        ax.errorbar(s.x[good], s.y[good] * factor, yerr=yerr,
                    fmt="o" if curve is not None else "o-", color=color,
                    markersize=5, capsize=2, linewidth=1,
                    label=short(s.label, 40) + (" (± interval)" if yerr is not None else ""))
        if s.geomean is not None and np.isfinite(s.geomean[good]).any():
            ax.plot(s.x[good], s.geomean[good] * factor, "s", color=C_FREQ, markersize=3.5,
                    label="geometric mean")
        if curve is not None:
            ax.plot(curve[0], curve[1] * factor, color=color, linewidth=1.6, alpha=0.8,
                    linestyle="--", label=_label(s, factor, unit))
        elif s.complexity and s.complexity.get("best"):
            ax.text(0.02, 0.95 - 0.06 * i, f"complexity: {esc(s.complexity['best'])}",
                    transform=ax.transAxes, fontsize=9, va="top")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(short(parameter, 40) + " (log scale)")
    ax.set_ylabel(f"time ({unit}, log scale)")
    if len(usable) == 1:
        s, good = usable[0]
        notes = []
        if s.r2 is not None and np.isfinite(s.r2).any():
            notes.append(f"ITERS fit R² ≥ {float(np.nanmin(s.r2)):.4f}")
        if good.sum() < 2:
            notes.append(f"too few sizes for a growth plot (n = {int(good.sum())})")
        if notes:
            ax.text(0.99, 0.03, "\n".join(notes), ha="right", va="bottom",
                    transform=ax.transAxes, fontsize=9)
    ax.legend(loc="upper left", fontsize=8.5, framealpha=0.85)


def _sweep_of(source: Results | CaseResult | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(source, CaseResult):
        return source.extra.get("sweep") or {}
    if isinstance(source, Results):
        sweep = source.context.get("sweep")
        if isinstance(sweep, Mapping):
            return sweep
        for case in source.cases:
            if isinstance(case.extra.get("sweep"), Mapping):
                return case.extra["sweep"]
        return {}
    return source if isinstance(source, Mapping) else {}


def sweep_figure(source: Results | CaseResult | Mapping[str, Any], *,
                 title: str | None = None) -> Any:
    """The growth plot of a sweep table (``results.context["sweep"]`` or
    ``case.extra["sweep"]``)."""
    sweep = _sweep_of(source)
    if title is None:
        title = source.label if isinstance(source, CaseResult) else "size sweep"
    series = pd.sweep_series(sweep, "mean per iteration")

    def make() -> Any:
        fig = new_figure(6.8, 4.2)
        ax = fig.add_subplot()
        if series is None:
            if title:
                ax.set_title(short(title, 90))
            message(ax, "no sweep data (sizes and mean) recorded")
        else:
            draw_growth(ax, [series], parameter="size",
                        unit=str(sweep.get("unit") or "s"), title=title)
        return fig

    return build(make)


def plot_sweep(source: Results | CaseResult | Mapping[str, Any], path: str | os.PathLike[str],
               *, title: str | None = None) -> Path:
    """Write the size-sweep plot (``results.context["sweep"]`` or ``case.extra["sweep"]``)."""
    return save_figure(sweep_figure(source, title=title), path)


def growth_figure(series: Sequence[pd.GrowthSeries], *, parameter: str, unit: str = "s",
                  title: str = "") -> Any:
    """The growth plot of several series over one parameter (a ``run`` parameter scan)."""

    def make() -> Any:
        fig = new_figure(6.8, 4.2)
        draw_growth(fig.add_subplot(), series, parameter=parameter, unit=unit, title=title)
        return fig

    return build(make)
