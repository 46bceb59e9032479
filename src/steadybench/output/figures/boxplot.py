"""Box plots of several cases on one axis (Rancid, seed 001, Fig. 15): boxes at the quartiles,
whiskers at the 1st and 99th percentiles, the values beyond as points.

The axis is robust over all cases: values beyond it are drawn as triangles at its edge, on the
row of their case, with a count. When the medians differ by more than ``log_ratio`` the axis is
logarithmic, so a case of nanoseconds keeps a readable box beside one of milliseconds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import PRIMARY_METRIC, CaseResult, Results
from .. import plotdata as pd
from .common import (
    C_AVG,
    C_OK,
    C_REMOVED,
    axis_label,
    build,
    cases_of,
    mark_outside,
    message,
    new_figure,
    samples,
    save_figure,
    short,
    unit_of,
)


def bxp(ax: Any, stats: list[dict[str, Any]], *, colors: Sequence[str] | None = None) -> None:
    """Horizontal boxes from precomputed statistics (first entry at the bottom)."""
    kwargs: dict[str, Any] = dict(
        showfliers=True, showmeans=False, patch_artist=True, widths=0.6,
        flierprops={"marker": ".", "markersize": 3, "alpha": 0.5,
                    "markeredgecolor": C_REMOVED, "markerfacecolor": C_REMOVED},
        medianprops={"color": C_AVG, "linewidth": 2.2},
        whiskerprops={"color": "#555555"}, capprops={"color": "#555555"},
        boxprops={"facecolor": "#cfe2f3", "edgecolor": C_OK, "linewidth": 1.2})
    try:
        artists = ax.bxp(stats, orientation="horizontal", **kwargs)
    except TypeError:  # matplotlib < 3.10
        artists = ax.bxp(stats, vert=False, **kwargs)
    if colors:
        for patch, color in zip(artists["boxes"], colors):
            patch.set_facecolor(color)


def robust_box_axis(values: Sequence[np.ndarray], log_ratio: float = 20.0
                    ) -> tuple[pd.Limits, bool]:
    """(limits, log axis?) for box plots of ``values``: the union of each sample's robust
    range, logarithmic when the medians differ by more than ``log_ratio``."""
    meds = [float(np.median(v)) for v in values]
    log = min(meds) > 0 and max(meds) / min(meds) > log_ratio and all(
        float(np.min(v)) > 0 for v in values)
    parts = [pd.robust_limits(np.log10(v) if log else v, pad=0.0) for v in values]
    if log:
        lo, hi = min(p.low for p in parts), max(p.high for p in parts)
        width = hi - lo
        limits = pd.Limits(10 ** (lo - 0.04 * width), 10 ** (hi + 0.04 * width))
    else:
        limits = pd.merge_limits(parts, values)
        width = limits.high - limits.low
        limits = pd.Limits(limits.low - 0.04 * width, limits.high + 0.04 * width)
    below = sum(int(np.count_nonzero(v < limits.low)) for v in values)
    above = sum(int(np.count_nonzero(v > limits.high)) for v in values)
    return pd.Limits(limits.low, limits.high, below, above), log


def draw_boxplot(ax: Any, cases: Sequence[CaseResult], *, metric: str = PRIMARY_METRIC,
                 labels: Sequence[str] | None = None, title: str | None = None,
                 log_ratio: float = 20.0) -> None:
    """Horizontal box plots of several cases on a common robust axis (first case on top)."""
    stats, missing = [], []
    for i, case in enumerate(cases):
        label = short(labels[i] if labels else case.label, 45)
        values = samples(case, metric)
        if values.size == 0:
            missing.append(label)
            continue
        stats.append((label, values))
    if title:
        ax.set_title(short(title, 90))
    if not stats:
        message(ax, "no samples to draw a box plot" +
                (f"\n(no raw samples: {', '.join(missing[:5])})" if missing else ""))
        return
    factor, unit = pd.time_scale(np.concatenate([v for _, v in stats]),
                                 unit_of(cases[0], metric))
    scaled = [v * factor for _, v in stats]
    limits, log = robust_box_axis(scaled, log_ratio)
    rows = [pd.clip_box(pd.box_stats(v, lab), limits) for (lab, _), v in zip(stats, scaled)]
    bxp(ax, rows[::-1])
    if log:
        ax.set_xscale("log")
    ax.set_xlim(limits.low, limits.high)
    n = len(rows)
    positions: dict[str, list[float]] = {"below": [], "above": []}
    below_vals, above_vals = [], []
    for i, v in enumerate(scaled):
        y = n - i  # first case at the top
        if np.any(v < limits.low):
            positions["below"].append(y)
            below_vals.append(v[v < limits.low])
        if np.any(v > limits.high):
            positions["above"].append(y)
            above_vals.append(v[v > limits.high])
    mark_outside(ax, limits, axis="x", unit=unit, positions=positions,
                 values_below=np.concatenate(below_vals) if below_vals else None,
                 values_above=np.concatenate(above_vals) if above_vals else None)
    ax.set_xlabel(axis_label(metric, unit) + " — box: quartiles, whiskers: p1–p99")
    if missing:
        ax.text(0.99, 0.01, f"not shown (no raw samples): {len(missing)}", ha="right",
                va="bottom", transform=ax.transAxes, fontsize=8, color="#666666")


def boxplot_figure(items: Results | CaseResult | Iterable[CaseResult], *,
                   metric: str = PRIMARY_METRIC, labels: Sequence[str] | None = None,
                   title: str | None = None) -> Any:
    cases = cases_of(items)

    def make() -> Any:
        fig = new_figure(8.0, max(2.4, 1.1 + 0.42 * max(len(cases), 1)))
        draw_boxplot(fig.add_subplot(), cases, metric=metric, labels=labels, title=title)
        return fig

    return build(make)


def plot_boxplot(items: Results | CaseResult | Iterable[CaseResult],
                 path: str | os.PathLike[str], *, metric: str = PRIMARY_METRIC,
                 labels: Sequence[str] | None = None, title: str | None = None) -> Path:
    """Write box plots of every case (of a Results, or of the cases given); return the path."""
    return save_figure(boxplot_figure(items, metric=metric, labels=labels, title=title), path)
