"""Run-by-run values of one case (Rancid, seed 001, Figs. 3–11): ok runs, warm-up, removed,
flagged and failed runs, a centred moving median, and CPU frequency and temperature on
secondary axes.

The y axis is robust over the ok runs: a handful of slow runs no longer flattens the others
into a line at 0; they are drawn as triangles at the top edge with a count. Over
:data:`MAX_POINTS` runs the ok runs are drawn as a binned median with a 1–99 % envelope.

A case measured as several executions has its runs pooled in order: dotted lines mark where
each execution begins, and the moving median is cut there (it never bridges two executions'
levels). Times other than the case's own (user, system, raw wall time) are drawn in the unit
of the case's time, so that one page does not mix ns and ms.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import PRIMARY_METRIC, RUN_FAILED, RUN_OK, RUN_REMOVED, RUN_WARMUP, CaseResult
from .. import plotdata as pd
from .common import (
    C_AVG,
    C_FREQ,
    C_LOAD,
    C_OK,
    C_OUTLIER,
    C_REMOVED,
    C_TEMP,
    C_WARMUP,
    axis_label,
    build,
    column,
    esc,
    mark_outside,
    message,
    new_figure,
    save_figure,
    short,
    status_array,
    unit_of,
)

#: above this many runs a time series is drawn as a binned envelope instead of raw points
MAX_POINTS = 4000


def _secondary(ax: Any, x: np.ndarray, col: np.ndarray, color: str, label: str,
               offset: float | None) -> list[Any]:
    twin = ax.twinx()
    twin.grid(False)
    twin.spines["right"].set_visible(True)
    if offset is not None:
        twin.spines["right"].set_position(("outward", offset))
    keep = pd.subsample(np.arange(x.size), MAX_POINTS)
    (line,) = twin.plot(x[keep], col[keep], color=color, linewidth=0.9, alpha=0.8, label=label)
    twin.set_ylabel(label, color=color)
    twin.tick_params(axis="y", colors=color)
    return [line]


def draw_timeseries(axes: Sequence[Any], case: CaseResult, *, metric: str = PRIMARY_METRIC,
                    window: int = 10, secondary: bool = True, title: bool = True,
                    legend: bool = True) -> None:
    """Run-by-run values of ``metric`` on a robust y axis (see the module docs).

    ok runs are points, warm-up runs grey triangles, removed runs red crosses, runs an outlier
    filter flagged are ringed, failed runs are faint red bars; dotted lines mark where each
    execution begins; the orange line is the centred moving median of the ok runs over
    ``window`` runs, cut at each execution's ends. ``cpu_freq`` (MHz) and ``temperature``
    (°C) share the x axis on secondary y axes; ``loadavg`` goes into ``axes[1]`` when given.
    ``secondary=False`` leaves out the frequency and temperature axes.
    """
    ax = axes[0]
    if title:
        ax.set_title(short(case.label))
    col = column(case, metric) if case.keep_samples else None
    if col is None:
        message(ax, "raw samples were not kept (streaming mode):\nno run-by-run series"
                if not case.keep_samples else f"no '{esc(metric)}' values recorded")
        return
    n = min(col.size, len(case.status))
    status = status_array(case)[:n]
    col = col[:n]
    runs = np.arange(1, n + 1)
    outlier = np.asarray(case.outlier[:n], dtype=bool) if case.outlier else np.zeros(n, bool)
    finite = np.isfinite(col)
    ok = (status == RUN_OK) & finite
    if not finite.any():
        message(ax, "no successful runs to plot")
        return
    factor, unit = pd.time_scale(col[ok] if ok.any() else col[finite], unit_of(case, metric))
    if metric != PRIMARY_METRIC and unit_of(case, metric) == "s" \
            and unit_of(case, PRIMARY_METRIC) == "s":
        own = column(case, PRIMARY_METRIC)  # one unit for every time of the case
        if own is not None:
            own = own[:n][(status == RUN_OK) & np.isfinite(own[:n])]
            if own.size:
                factor, unit = pd.time_scale(own, "s")
    if unit == "B":  # memory (exec's max_rss) in KiB or MiB, not bytes with an exponent
        bulk = col[ok] if ok.any() else col[finite]
        big = bool(bulk.size) and float(np.median(np.abs(bulk))) >= 2**20
        factor, unit = (2.0**-20, "MiB") if big else (2.0**-10, "KiB")
    y = col * factor
    limits = pd.robust_limits(y[ok] if ok.sum() >= 2 else y[finite])
    spans = [(a, b) for a, b in case.execution_spans() if a < n]
    ok_all = np.flatnonzero(ok)
    avg = None
    bounds: list[tuple[int, int]] = []
    if ok_all.size >= 2:
        bounds = [(int(np.searchsorted(ok_all, a)), int(np.searchsorted(ok_all, b)))
                  for a, b in spans]
        avg = pd.moving_median(y[ok_all], window, bounds)
        # the line never leaves the robust axis: where most of a window is beyond it (a run of
        # slow runs, drawn at its edge with their count) the line is not drawn
        avg[(avg < limits.low) | (avg > limits.high)] = np.nan
    within = (y >= limits.low) & (y <= limits.high)
    handles: list[Any] = []
    ok_idx = np.flatnonzero(ok & ~outlier & within)
    if ok_idx.size > MAX_POINTS:
        cx, lo, med, hi = pd.binned(runs[ok_idx], y[ok_idx], MAX_POINTS // 4)
        band = ax.fill_between(cx, lo, hi, color=C_OK, alpha=0.25, linewidth=0,
                               label=f"ok runs, 1–99 % per bin ({ok_idx.size})")
        (mline,) = ax.plot(cx, med, color=C_OK, linewidth=0.8, label="ok runs, bin median")
        handles += [band, mline]
    elif ok_idx.size:
        handles.append(ax.scatter(runs[ok_idx], y[ok_idx], s=9, color=C_OK, alpha=0.7,
                                  linewidths=0, label=f"ok ({int(ok.sum())})"))

    def markers(mask: np.ndarray, label: str, **style: Any) -> None:
        idx = np.flatnonzero(mask & finite)
        if idx.size == 0:
            return
        inside = idx[within[idx]]
        shown = pd.subsample(inside, pd.MAX_MARKERS)
        suffix = f"{idx.size}" if shown.size == inside.size else \
            f"{idx.size}, {shown.size} drawn"
        handles.append(ax.scatter(runs[shown], y[shown], label=f"{label} ({suffix})", **style))

    markers(status == RUN_WARMUP, "warm-up", s=16, marker="^", color=C_WARMUP, alpha=0.8,
            linewidths=0)
    markers(status == RUN_REMOVED, "removed", s=18, marker="x", color=C_REMOVED, linewidths=1)
    markers(outlier & (status != RUN_REMOVED), "outlier", s=30, facecolors="none",
            edgecolors=C_OUTLIER, linewidths=1)
    failed = np.flatnonzero(status == RUN_FAILED)
    if failed.size:
        shown = pd.subsample(failed, pd.MAX_MARKERS)
        handles.append(ax.vlines(runs[shown], 0, 1, transform=ax.get_xaxis_transform(),
                                 colors=C_REMOVED, alpha=0.25, linewidth=1,
                                 label=f"failed ({failed.size})"))
    if len(spans) > 1:  # where each execution begins
        starts = np.asarray([a for a, _ in spans[1:]], dtype=float) + 0.5
        faint = len(spans) > 60
        handles.append(ax.vlines(starts, 0, 1, transform=ax.get_xaxis_transform(),
                                 colors="#777777", linestyles=":",
                                 linewidth=0.6 if faint else 0.9, alpha=0.5 if faint else 0.8,
                                 label=f"execution start ({len(spans)} executions)"))
    if avg is not None:
        keep = pd.subsample(np.arange(ok_all.size), MAX_POINTS)
        xs, ys = runs[ok_all][keep].astype(float), avg[keep]
        # a break between executions, so the line does not join their levels
        segment = np.searchsorted([b for b, _ in bounds[1:]], keep, side="right")
        cut = np.flatnonzero(np.diff(segment)) + 1
        xs, ys = np.insert(xs, cut, np.nan), np.insert(ys, cut, np.nan)
        (line,) = ax.plot(xs, ys, color=C_AVG, linewidth=1.6,
                          label=f"moving median ({min(window, ok_all.size)} runs"
                                + (", per execution)" if len(spans) > 1 else ")"))
        handles.append(line)
    else:
        ax.text(0.5, 0.92, f"too few ok runs for a moving median (n = {ok_all.size})",
                ha="center", transform=ax.transAxes, fontsize=9, color="#444444")
    ax.set_ylim(limits.low, limits.high)
    shown_all = finite & (status != RUN_FAILED)
    below = np.flatnonzero(shown_all & (y < limits.low))
    above = np.flatnonzero(shown_all & (y > limits.high))
    edge = pd.Limits(limits.low, limits.high, below.size, above.size)
    mark_outside(ax, edge, axis="y", unit=unit,
                 positions={"below": runs[pd.subsample(below, pd.MAX_MARKERS)],
                            "above": runs[pd.subsample(above, pd.MAX_MARKERS)]},
                 values_below=y[below], values_above=y[above])
    ax.set_xlim(0, n + 1)
    ax.set_xlabel("run")
    ax.set_ylabel(axis_label(metric, unit))
    offset = None
    for name, color, label in (("cpu_freq", C_FREQ, "CPU frequency (MHz)"),
                               ("temperature", C_TEMP, "temperature (°C)")):
        sec = column(case, name) if secondary else None
        if sec is None or not np.isfinite(sec[:n]).any():
            continue
        handles += _secondary(ax, runs, sec[:n], color, label, offset)
        offset = 52.0
    load = column(case, "loadavg")
    if len(axes) > 1:
        lax = axes[1]
        if load is not None and np.isfinite(load[:n]).any():
            keep = pd.subsample(np.arange(n), MAX_POINTS)
            lax.plot(runs[keep], load[:n][keep], color=C_LOAD, linewidth=0.9)
            lax.set_ylabel("load average")
            lax.set_xlabel("run")
        else:
            lax.set_visible(False)
    if legend:
        # below the plot, so it never hides runs
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                  ncols=min(len(handles), 6), frameon=False, fontsize=8.5)


def timeseries_figure(case: CaseResult, *, metric: str = PRIMARY_METRIC,
                      window: int = 10) -> Any:
    load = column(case, "loadavg") if case.keep_samples else None
    has_load = load is not None and bool(np.isfinite(load).any())

    def make() -> Any:
        fig = new_figure(11.0, 5.0 if has_load else 4.0)
        if has_load:
            top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
            draw_timeseries([top, bottom], case, metric=metric, window=window)
        else:
            draw_timeseries([fig.add_subplot()], case, metric=metric, window=window)
        return fig

    return build(make)


def plot_timeseries(case: CaseResult, path: str | os.PathLike[str], *,
                    metric: str = PRIMARY_METRIC, window: int = 10) -> Path:
    """Write the run-by-run series of one case (see :func:`draw_timeseries`)."""
    return save_figure(timeseries_figure(case, metric=metric, window=window), path)
