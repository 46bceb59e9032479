"""A straight-line fit with its confidence band (Moreno & Fischmeister, seed 002, §3,
Figs. 2–3: the slope is the time of one execution, the intercept the measurement overhead;
points far off the line are dropped and the line refitted, and both lines are drawn). Also the
ITERS regression of the Criterion-style runner (seed 004)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import CaseResult
from .. import plotdata as pd
from .common import C_AVG, C_OK, C_REMOVED, build, message, new_figure, save_figure, short


def draw_fit(ax: Any, fit: Mapping[str, Any], *, title: str = "") -> None:
    """Points, the fitted line with its CI band, dropped points, the intercept read off at 0.
    ``fit`` is ``case.extra["fit"]``."""
    if title:
        ax.set_title(short(title))
    x = pd.as_floats(fit.get("x") or [])
    y = pd.as_floats(fit.get("y") or [])
    if x.size == 0 or x.size != y.size:
        message(ax, "no fit data (x and y) recorded")
        return
    dropped_idx = [int(i) for i in (fit.get("dropped") or [])
                   if isinstance(i, int | float) and 0 <= int(i) < x.size]
    dropped = np.zeros(x.size, bool)
    dropped[dropped_idx] = True
    good = np.isfinite(x) & np.isfinite(y)
    kept = good & ~dropped
    factor, unit = pd.time_scale(y[kept] if kept.any() else y[good])
    ys = y * factor
    ax.scatter(x[kept], ys[kept], s=16, color=C_OK, label=f"points ({int(kept.sum())})",
               zorder=3)
    if (dropped & good).any():
        ax.scatter(x[dropped & good], ys[dropped & good], s=40, marker="x", color=C_REMOVED,
                   label=f"dropped ({int((dropped & good).sum())})", zorder=4)
    slope, intercept = fit.get("slope"), fit.get("intercept")
    confidence = float(fit.get("confidence") or 0.95)
    if kept.sum() < 2 or not isinstance(slope, int | float) or \
            not isinstance(intercept, int | float):
        ax.text(0.5, 0.9, f"too few points for a line fit (n = {int(kept.sum())})",
                ha="center", transform=ax.transAxes, fontsize=9, color="#444444")
    else:
        xmax = float(np.nanmax(x[good]))
        grid = np.linspace(0.0, xmax, 200)
        slope_s, icpt_s = float(slope) * factor, float(intercept) * factor
        band = pd.fit_band(x[kept], ys[kept], grid, confidence)
        if band is not None:
            ax.fill_between(grid, band[1], band[2], color=C_AVG, alpha=0.2, linewidth=0,
                            label=f"{confidence:.0%} band of the line")
        ax.plot(grid, icpt_s + slope_s * grid, color=C_AVG, linewidth=1.7,
                label=f"fit: y = {slope_s:.4g}·x + {icpt_s:.4g} {unit}")
        if (dropped & good).any() and good.sum() >= 2:
            all_fit = np.polyfit(x[good], ys[good], 1)
            ax.plot(grid, np.polyval(all_fit, grid), color="#7f7f7f", linewidth=1,
                    linestyle="--", label="fit through all points")
        ax.scatter([0.0], [icpt_s], s=44, marker="D", color=C_AVG, zorder=5,
                   label=f"intercept {icpt_s:.4g} {unit}")
        text = [f"slope {slope_s:.4g} {unit}"]
        ci = fit.get("slope_ci")
        if isinstance(ci, Sequence) and len(ci) == 2 and None not in ci:
            text[0] += f"  [{float(ci[0]) * factor:.4g}, {float(ci[1]) * factor:.4g}]"
        if isinstance(fit.get("r2"), int | float):
            text.append(f"R² = {float(fit['r2']):.5f}")
        ax.text(0.99, 0.03, "\n".join(text), ha="right", va="bottom", transform=ax.transAxes,
                fontsize=9, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "#cccccc"})
    ax.set_xlabel(short(fit.get("x_label") or "x"))
    ax.set_ylabel(f"time ({unit})")
    ax.legend(loc="upper left", fontsize=8.5, framealpha=0.85)


def fit_figure(source: CaseResult | Mapping[str, Any], *, title: str | None = None) -> Any:
    if isinstance(source, CaseResult):
        fit = source.extra.get("fit") or {}
        title = title if title is not None else f"{source.label} — {fit.get('kind', 'line fit')}"
    else:
        fit = source

    def make() -> Any:
        fig = new_figure(6.8, 4.2)
        draw_fit(fig.add_subplot(), fit if isinstance(fit, Mapping) else {}, title=title or "")
        return fig

    return build(make)


def plot_fit(source: CaseResult | Mapping[str, Any], path: str | os.PathLike[str], *,
             title: str | None = None) -> Path:
    """Write the line-fit / ITERS regression plot of a case (its ``extra["fit"]``)."""
    return save_figure(fit_figure(source, title=title), path)
