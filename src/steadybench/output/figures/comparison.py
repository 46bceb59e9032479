"""A compared pair and a compared suite (Touati et al., seed 003): the two distributions on one
robust axis with their medians marked and the ratio written out, the speedup with its interval,
and the speedup of every benchmark of a suite, sorted, with the overall gain.

The pair's axis is robust over both samples, so a 60 % difference between the medians spans
most of the plot instead of being squeezed by a few slow runs; the runs beyond the axis are
counted at its edge.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import PRIMARY_METRIC, CaseResult
from .. import plotdata as pd
from ..comparedata import comparison_pairs, overall_gain, pair_summary
from .boxplot import bxp, robust_box_axis
from .common import (
    C_AVG,
    C_FREQ,
    C_OK,
    C_REMOVED,
    axis_label,
    build,
    mark_outside,
    message,
    new_figure,
    samples,
    save_figure,
    short,
    unit_of,
)

C_BASE = "#c6dbef"
C_NEW = "#fdd0a2"


def _factor(ratio: float, low: float | None = None, high: float | None = None) -> str:
    from ..format import change_text

    return change_text(ratio, low, high)  # no direction when the interval holds 1


def draw_comparison(axes: Sequence[Any], base: CaseResult | None, new: CaseResult | None,
                    entry: Mapping[str, Any] | None = None, *,
                    labels: Sequence[str] = ("baseline", "candidate"),
                    metric: str = PRIMARY_METRIC) -> None:
    """Left: the two distributions as box plots with their runs, on one robust axis; right:
    the speedup (time of the baseline / time of the candidate) with its interval."""
    dist_ax, sp_ax = axes
    cases = [c for c in (base, new) if c is not None]
    pairs = [(labels[i], samples(c, metric)) for i, c in enumerate((base, new)) if c is not None]
    pairs = [(lab, v) for lab, v in pairs if v.size]
    if pairs:
        factor, unit = pd.time_scale(np.concatenate([v for _, v in pairs]),
                                     unit_of(cases[0], metric))
        scaled = [v * factor for _, v in pairs]
        limits, log = robust_box_axis(scaled, log_ratio=50.0)
        stats = [pd.clip_box(pd.box_stats(v, short(lab, 30)), limits)
                 for (lab, _), v in zip(pairs, scaled)]
        bxp(dist_ax, stats[::-1], colors=[C_NEW, C_BASE][-len(stats):])
        rng = np.random.default_rng(0)
        positions: dict[str, list[float]] = {"below": [], "above": []}
        below, above = [], []
        for pos, v in enumerate(scaled[::-1], start=1):
            inside = v[(v >= limits.low) & (v <= limits.high)]
            sub = inside[pd.subsample(np.arange(inside.size), pd.MAX_MARKERS)]
            jitter = pos + rng.uniform(-0.2, 0.2, sub.size)
            dist_ax.scatter(sub, jitter, s=5, alpha=0.35, color=C_OK, linewidths=0, zorder=3)
            if np.any(v < limits.low):
                positions["below"].append(pos)
                below.append(v[v < limits.low])
            if np.any(v > limits.high):
                positions["above"].append(pos)
                above.append(v[v > limits.high])
        if log:
            dist_ax.set_xscale("log")
        dist_ax.set_xlim(limits.low, limits.high)
        mark_outside(dist_ax, limits, axis="x", unit=unit, positions=positions,
                     values_below=np.concatenate(below) if below else None,
                     values_above=np.concatenate(above) if above else None)
        for pos, v in enumerate(scaled[::-1], start=1):
            med = float(np.median(v))
            dist_ax.annotate(f"median {med:.4g} {unit}", (med, pos + 0.32), ha="center",
                             va="bottom", fontsize=9, color="#222222")
        dist_ax.set_ylim(0.4, len(scaled) + 0.85)
        dist_ax.set_xlabel(axis_label(metric, unit))
    else:
        message(dist_ax, "no raw samples of the pair to draw")
    summary = pair_summary(entry or {})
    speedup, ci = summary["speedup"], summary["ci"]
    if speedup is None and len(pairs) == 2:
        speedup = float(np.median(pairs[0][1]) / np.median(pairs[1][1]))
        summary["verdict"] = summary["verdict"] or "median ratio (no test)"
    sp_ax.set_title("speedup = time(base) / time(new)", fontsize=9.5)
    sp_ax.axvline(1.0, color="#333333", linewidth=0.8)
    if speedup is None:
        message(sp_ax, "no speedup available")
        return
    xerr = None
    if ci is not None:
        xerr = [[max(speedup - ci[0], 0)], [max(ci[1] - speedup, 0)]]
    color = C_FREQ if speedup > 1 else C_REMOVED if speedup < 1 else C_OK
    sp_ax.errorbar([speedup], [0], xerr=xerr, fmt="o", color=color, capsize=5, markersize=7)
    sp_ax.set_yticks([])
    lines = [_factor(speedup, *(ci or (None, None))).replace(" [", "\n[")]
    if summary["p_value"] is not None:
        lines.append(f"p = {pd.p_value_text(summary['p_value'])}")
    if summary["verdict"]:
        lines.append(short(summary["verdict"], 40))
    sp_ax.text(0.5, 0.97, "\n".join(lines), ha="center", va="top", transform=sp_ax.transAxes,
               fontsize=9.5)
    lo = min(1.0, speedup, ci[0] if ci else speedup)
    hi = max(1.0, speedup, ci[1] if ci else speedup)
    pad = (hi - lo) * 0.25 or 0.05
    sp_ax.set_xlim(lo - pad, hi + pad)
    sp_ax.set_ylim(-1, 2.2)


def comparison_figure(base: CaseResult | None, new: CaseResult | None,
                      entry: Mapping[str, Any] | None = None, *,
                      labels: Sequence[str] = ("baseline", "candidate"),
                      title: str | None = None, metric: str = PRIMARY_METRIC) -> Any:
    def make() -> Any:
        fig = new_figure(8.5, 3.2)
        axes = fig.subplots(1, 2, width_ratios=[2.4, 1])
        draw_comparison(axes, base, new, entry, labels=labels, metric=metric)
        name = title or (pair_summary(entry)["name"] if entry else None) or \
            (base.label if base else new.label if new else "comparison")
        fig.suptitle(short(name, 90), fontsize=10.5)
        return fig

    return build(make)


def plot_comparison(base: CaseResult | None, new: CaseResult | None,
                    path: str | os.PathLike[str], entry: Mapping[str, Any] | None = None, *,
                    labels: Sequence[str] = ("baseline", "candidate"),
                    title: str | None = None, metric: str = PRIMARY_METRIC) -> Path:
    """Write the comparison plot of one pair: distributions side by side, speedup with its CI.
    Without an ``entry`` (from the comparison JSON) the speedup is the ratio of medians."""
    return save_figure(comparison_figure(base, new, entry, labels=labels, title=title,
                                         metric=metric), path)


def draw_suite(ax: Any, comparison: Mapping[str, Any] | None) -> None:
    """Speedup per benchmark with its CI, sorted, a line at 1 and the overall gain (003)."""
    pairs = [p for p in comparison_pairs(comparison) if p["speedup"] is not None]
    ax.set_title("speedup per benchmark (time of BASE / time of NEW; > 1: NEW is faster)")
    if not pairs:
        message(ax, "no speedups in the comparison")
        return
    pairs.sort(key=lambda p: p["speedup"])
    ys = np.arange(len(pairs))
    for y, p in zip(ys, pairs):
        color = C_FREQ if p["speedup"] > 1 else C_REMOVED if p["speedup"] < 1 else C_OK
        xerr = None
        if p["ci"] is not None:
            xerr = [[max(p["speedup"] - p["ci"][0], 0)], [max(p["ci"][1] - p["speedup"], 0)]]
        ax.errorbar([p["speedup"]], [y], xerr=xerr, fmt="o", color=color, capsize=3,
                    markersize=5)
    ax.set_yticks(ys, [short(p["name"], 40) for p in pairs])
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    gain = overall_gain(comparison)
    if gain is not None and gain.speedup is not None:
        text = f"overall speedup {gain.speedup:.3f}×"
        if gain.gain is not None:
            text += f" (gain {gain.gain * 100:.2f} %)"
        ax.axvline(gain.speedup, color=C_AVG, linestyle="--", linewidth=1.3, label=text)
        if gain.ci:
            ax.axvspan(gain.ci[0], gain.ci[1], color=C_AVG, alpha=0.12, linewidth=0)
        ax.legend(loc="best")
    ax.set_ylim(-0.7, len(pairs) - 0.3)
    ax.set_xlabel("speedup (> 1: NEW faster, < 1: NEW slower)")


def suite_figure(comparison: Mapping[str, Any] | None) -> Any:
    count = len(comparison_pairs(comparison))

    def make() -> Any:
        fig = new_figure(8.0, max(2.6, 1.4 + 0.36 * count))
        draw_suite(fig.add_subplot(), comparison)
        return fig

    return build(make)


def plot_suite(comparison: Mapping[str, Any] | None, path: str | os.PathLike[str]) -> Path:
    """Write the suite overview: speedup per benchmark with CIs, sorted, and the overall gain."""
    return save_figure(suite_figure(comparison), path)
