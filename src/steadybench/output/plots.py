"""Plots of steadybench results (matplotlib, Agg backend, PNG or SVG).

Every figure of the source documents has a function here that builds it from
:class:`~steadybench.model.results.Results` or :class:`~steadybench.model.results.CaseResult`:

==========================  =====================================================================
function                    figure it reproduces
==========================  =====================================================================
:func:`plot_histogram`      Rancid (001) Fig. 1: histogram of the samples, kernel density,
                            median and mean marked
:func:`plot_boxplot`        Rancid Fig. 15: boxes at the quartiles, whiskers at the 1st and 99th
                            percentiles, the values beyond as points
:func:`plot_timeseries`     Rancid Figs. 3–11: run-by-run values with a moving average, CPU
                            frequency and temperature on secondary axes
:func:`plot_fit`            Moreno & Fischmeister (002) Figs. 2–3: straight-line fit with its CI
                            band, dropped points and the line through all points; also the
                            ITERS regression of the Criterion-style runner (004)
:func:`plot_error_evolution`  Rancid Fig. 16: relative error of the running median against a
                            reference and relative IQR, n = 1…N
:func:`plot_sweep`          004 (``sweep_seq``): time against size, log-log, with the fitted
                            complexity curve
:func:`plot_comparison`     the two distributions of a compared pair side by side and the
                            speedup with its CI (Touati et al., 003)
:func:`plot_suite`          speedup per benchmark with CIs, sorted, and the overall gain (003)
==========================  =====================================================================

Each ``plot_*`` function writes the file (format from the suffix, ``.png`` or ``.svg``,
atomically) and returns its path; the matching ``*_figure`` function returns the
:class:`matplotlib.figure.Figure` so the HTML report can embed it. Figures are created with an
explicit :class:`~matplotlib.backends.backend_agg.FigureCanvasAgg` and never through
``pyplot``, so no display and no global backend switch is involved.

Too little data never raises: the figure says what is missing ("too few samples"). Huge data
is summarised: more than :data:`MAX_POINTS` runs are drawn as a binned median and 1–99 %
envelope, markers are subsampled (the legend says how many are shown), and kernel densities
are estimated on an evenly spaced subsample.

Every text that comes from the user (names, parameters, labels) has its ``$`` escaped, so
matplotlib prints it as it is instead of reading it as TeX (mathtext).
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..errors import ConfigurationError
from ..fileio import atomic_write_bytes
from ..model.results import (
    PRIMARY_METRIC,
    RUN_FAILED,
    RUN_OK,
    RUN_REMOVED,
    RUN_WARMUP,
    CaseResult,
    Results,
)

#: above this many runs a time series is drawn as a binned envelope instead of raw points
MAX_POINTS = 4000
#: at most this many markers of one kind (warm-up, removed, outlier, box-plot fliers)
MAX_MARKERS = 1500
#: kernel densities are estimated on at most this many (evenly spaced, sorted) samples
MAX_KDE = 4000
#: at most this many values of n in an error-evolution curve
MAX_EVOLUTION_POINTS = 200
#: resolution of PNG files
DPI = 100

FORMATS = {".png": "png", ".svg": "svg"}

_RC = {
    "svg.fonttype": "none",  # text stays text in SVG files (searchable, smaller)
    "svg.hashsalt": "steadybench",  # deterministic SVG ids
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 9,
}

C_OK = "#1f77b4"
C_AVG = "#ff7f0e"
C_WARMUP = "#8c8c8c"
C_REMOVED = "#d62728"
C_OUTLIER = "#e377c2"
C_FREQ = "#2ca02c"
C_TEMP = "#9467bd"
C_LOAD = "#8c564b"
SERIES_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf")


# ============================================================================ helpers
def _format_of(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigurationError(f"{path}: plots are written as .png or .svg, not {suffix!r}")
    return FORMATS[suffix]


def new_figure(width: float = 7.0, height: float = 3.8,
               layout: str | None = "constrained") -> Figure:
    """A figure bound to the Agg canvas (no pyplot, no display).

    ``layout=None`` skips matplotlib's constrained layout (more than half of the drawing time);
    the caller then places the axes with ``subplots_adjust``.
    """
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height), dpi=DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def figure_bytes(fig: Figure, fmt: str = "png") -> bytes:
    """Render ``fig`` as PNG or SVG bytes."""
    if fmt not in FORMATS.values():
        raise ConfigurationError(f"plot format must be png or svg, not {fmt!r}")
    buf = io.BytesIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=_metadata(fmt))
    return buf.getvalue()


def _metadata(fmt: str) -> dict[str, Any]:
    # no creation date, so the same results give the same file
    if fmt == "svg":
        return {"Date": None, "Creator": "steadybench"}
    return {"Software": "steadybench"}


def save_figure(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` to ``path`` (PNG or SVG by suffix), atomically; return the path."""
    return atomic_write_bytes(path, figure_bytes(fig, _format_of(path)))


def _build(builder: Callable[..., Figure], *args: Any, **kwargs: Any) -> Figure:
    with matplotlib.rc_context(_RC):
        return builder(*args, **kwargs)


def _message(ax: Any, text: str) -> None:
    """Replace the content of ``ax`` by a centred explanation (too few samples, ...)."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True,
            color="#444444", fontsize=10)


def _esc(text: Any) -> str:
    """User text for matplotlib: a ``$`` would start mathtext (TeX), so it is escaped."""
    return str(text).replace("$", r"\$")


def _short(text: Any, limit: int = 70) -> str:
    """User text shortened to ``limit`` characters and escaped for matplotlib."""
    text = str(text)
    return _esc(text if len(text) <= limit else text[: limit - 1] + "…")


def time_scale(values: Iterable[float], unit: str = "s") -> tuple[float, str]:
    """(factor, unit) that shows seconds in ns, µs, ms or s, chosen from the median magnitude."""
    if unit != "s":
        return 1.0, unit
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    arr = np.abs(arr[np.isfinite(arr)])
    if arr.size == 0:
        return 1.0, "s"
    mag = float(np.median(arr))
    for factor, name in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms")):
        if mag * factor < 1000:
            return factor, name
    return 1.0, "s"


def format_value(value: float | None, unit: str = "s") -> str:
    """A value with a readable unit (seconds become ns/µs/ms/s); '–' when undefined."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    factor, name = time_scale([value], unit)
    return f"{value * factor:.4g} {name}".strip()


def _column(case: CaseResult, metric: str) -> np.ndarray | None:
    col = case.metrics.get(metric)
    if col is None or len(col) == 0:
        return None
    return np.frombuffer(col, dtype=float) if hasattr(col, "typecode") else np.asarray(col, float)


def _subsample(idx: np.ndarray, limit: int) -> np.ndarray:
    if idx.size <= limit:
        return idx
    return idx[np.linspace(0, idx.size - 1, limit).astype(int)]


def _samples(case: CaseResult, metric: str = PRIMARY_METRIC) -> np.ndarray:
    """The ok values of ``metric`` in run order (empty when raw samples were not kept)."""
    if not case.keep_samples:
        return np.empty(0)
    col = _column(case, metric)
    if col is None:
        return np.empty(0)
    status = np.asarray(case.status[: col.size])
    vals = col[: status.size][status == RUN_OK]
    return vals[np.isfinite(vals)]


def _cases(items: Results | CaseResult | Iterable[CaseResult]) -> list[CaseResult]:
    if isinstance(items, CaseResult):
        return [items]
    if isinstance(items, Results):
        return list(items.cases)
    return list(items)


def _unit(case: CaseResult, metric: str) -> str:
    if metric == PRIMARY_METRIC:
        return case.unit or "s"
    return case.units.get(metric, "")


# ============================================================================ histogram
def draw_histogram(ax: Any, case: CaseResult, *, metric: str = PRIMARY_METRIC,
                   bins: int | str = "auto") -> None:
    """Histogram (density) of the ok samples, a Gaussian kernel density and median/mean lines.

    Rancid (001) §III, Fig. 1: the shape of the distribution (multi-modal under frequency
    changes, drifting under temperature) is what the mean and standard deviation hide.
    """
    values = _samples(case, metric)
    ax.set_title(_short(case.label), fontsize=9)
    if not case.keep_samples:
        _message(ax, "raw samples were not kept (streaming mode):\nno histogram")
        return
    if values.size < 2:
        _message(ax, f"too few samples for a histogram (n = {values.size})")
        return
    factor, unit = time_scale(values, _unit(case, metric))
    x = values * factor
    lo, hi = float(x.min()), float(x.max())
    if isinstance(bins, str):
        edges = np.histogram_bin_edges(x, bins=bins)
        if edges.size > 101:  # cap the bin count for huge samples
            edges = np.linspace(lo, hi, 101)
    else:
        edges = np.linspace(lo, hi, int(bins) + 1) if hi > lo else np.array([lo - 0.5, lo + 0.5])
    ax.hist(x, bins=edges, density=True, color=C_OK, alpha=0.55, edgecolor="white",
            linewidth=0.4, label=f"{values.size} runs")
    if hi > lo:
        try:
            from scipy.stats import gaussian_kde

            sub = np.sort(x)[np.linspace(0, x.size - 1, min(x.size, MAX_KDE)).astype(int)]
            kde = gaussian_kde(sub)
            pad = (hi - lo) * 0.1
            grid = np.linspace(lo - pad, hi + pad, 256)
            ax.plot(grid, kde(grid), color="#333333", linewidth=1.2, label="kernel density")
        except (np.linalg.LinAlgError, ValueError):
            pass  # degenerate sample (e.g. all but one value equal): histogram only
    median, mean = float(np.median(x)), float(np.mean(x))
    ax.axvline(median, color=C_AVG, linewidth=1.6, label=f"median {median:.4g} {unit}")
    ax.axvline(mean, color=C_REMOVED, linewidth=1.2, linestyle="--",
               label=f"mean {mean:.4g} {unit}")
    ax.set_xlabel(f"{_esc(metric)} ({unit})" if unit else _esc(metric))
    ax.set_ylabel("density")
    ax.legend(fontsize=7, loc="best")


def histogram_figure(case: CaseResult, *, metric: str = PRIMARY_METRIC,
                     bins: int | str = "auto") -> Figure:
    def build() -> Figure:
        fig = new_figure(6.0, 3.6)
        draw_histogram(fig.add_subplot(), case, metric=metric, bins=bins)
        return fig

    return _build(build)


def plot_histogram(case: CaseResult, path: str | os.PathLike[str], *,
                   metric: str = PRIMARY_METRIC, bins: int | str = "auto") -> Path:
    """Write the histogram of one case (see :func:`draw_histogram`); return the path."""
    return save_figure(histogram_figure(case, metric=metric, bins=bins), path)


# ============================================================================ box plot
def box_stats(values: np.ndarray, label: str, max_fliers: int = MAX_MARKERS) -> dict[str, Any]:
    """Box-plot statistics as Rancid Fig. 15 draws them: quartiles, median, whiskers at the
    1st and 99th percentiles (linear interpolation, numpy's default), values beyond as fliers
    (evenly subsampled to ``max_fliers``)."""
    p1, q1, med, q3, p99 = (float(v) for v in np.percentile(values, [1, 25, 50, 75, 99]))
    fliers = np.sort(values[(values < p1) | (values > p99)])
    fliers = fliers[_subsample(np.arange(fliers.size), max_fliers)]
    return {"label": label, "q1": q1, "med": med, "q3": q3, "whislo": p1, "whishi": p99,
            "mean": float(np.mean(values)), "fliers": fliers}


def _bxp(ax: Any, stats: list[dict[str, Any]]) -> None:
    kwargs = dict(showfliers=True, showmeans=False, patch_artist=True,
                  flierprops={"marker": ".", "markersize": 3, "alpha": 0.5,
                              "markeredgecolor": C_REMOVED, "markerfacecolor": C_REMOVED},
                  medianprops={"color": C_AVG, "linewidth": 1.6},
                  boxprops={"facecolor": "#cfe2f3", "edgecolor": C_OK})
    try:
        artists = ax.bxp(stats, orientation="horizontal", **kwargs)
    except TypeError:  # matplotlib < 3.10
        artists = ax.bxp(stats, vert=False, **kwargs)
    del artists


def draw_boxplot(ax: Any, cases: Sequence[CaseResult], *, metric: str = PRIMARY_METRIC,
                 labels: Sequence[str] | None = None, title: str | None = None,
                 log_ratio: float = 20.0) -> None:
    """Horizontal box plots of several cases on a common axis (Rancid Fig. 15).

    When the largest median exceeds the smallest by more than ``log_ratio`` the axis is
    logarithmic, so that a case of nanoseconds is not flattened by one of milliseconds.
    """
    stats, missing = [], []
    all_values = []
    for i, case in enumerate(cases):
        label = _short(labels[i] if labels else case.label, 45)
        values = _samples(case, metric)
        if values.size == 0:
            missing.append(label)
            continue
        all_values.append(values)
        stats.append((label, values))
    if title:
        ax.set_title(_short(title, 90), fontsize=9)
    if not stats:
        _message(ax, "no samples to draw a box plot" +
                 (f"\n(no raw samples: {', '.join(missing[:5])})" if missing else ""))
        return
    unit = _unit(cases[0], metric)
    factor, unit = time_scale(np.concatenate(all_values), unit)
    bstats = [box_stats(v * factor, lab) for lab, v in stats]
    _bxp(ax, bstats[::-1])  # first case at the top
    lows = [b["whislo"] for b in bstats] + [float(np.min(f)) for b in bstats
                                            if (f := b["fliers"]).size]
    meds = [b["med"] for b in bstats]
    if min(lows) > 0 and max(meds) / min(meds) > log_ratio:
        ax.set_xscale("log")  # cases of very different magnitudes: each box stays readable
    ax.set_xlabel(f"{_esc(metric)} ({unit}; box: quartiles, whiskers: p1–p99)"
                  if unit else f"{_esc(metric)} (box: quartiles, whiskers: p1–p99)")
    if missing:
        ax.text(0.99, 0.01, f"not shown (no raw samples): {len(missing)}", ha="right",
                va="bottom", transform=ax.transAxes, fontsize=7, color="#666666")


def boxplot_figure(items: Results | CaseResult | Iterable[CaseResult], *,
                   metric: str = PRIMARY_METRIC, labels: Sequence[str] | None = None,
                   title: str | None = None) -> Figure:
    cases = _cases(items)

    def build() -> Figure:
        fig = new_figure(7.0, max(2.2, 0.9 + 0.38 * max(len(cases), 1)))
        draw_boxplot(fig.add_subplot(), cases, metric=metric, labels=labels, title=title)
        return fig

    return _build(build)


def plot_boxplot(items: Results | CaseResult | Iterable[CaseResult],
                 path: str | os.PathLike[str], *, metric: str = PRIMARY_METRIC,
                 labels: Sequence[str] | None = None, title: str | None = None) -> Path:
    """Write box plots of every case (of a Results, or of the cases given); return the path."""
    return save_figure(boxplot_figure(items, metric=metric, labels=labels, title=title), path)


# ============================================================================ time series
def moving_average(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing moving average; element i averages values[max(0, i−w+1) … i]."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values
    window = max(1, int(window))
    csum = np.concatenate([[0.0], np.cumsum(values)])
    idx = np.arange(1, values.size + 1)
    start = np.maximum(idx - window, 0)
    return (csum[idx] - csum[start]) / (idx - start)


def _binned(x: np.ndarray, y: np.ndarray, nbins: int) -> tuple[np.ndarray, ...]:
    """Per bin of consecutive points: centre x, 1st percentile, median, 99th percentile."""
    parts = np.array_split(np.arange(x.size), nbins)
    cx, lo, med, hi = [], [], [], []
    for part in parts:
        if part.size == 0:
            continue
        seg = y[part]
        p = np.percentile(seg, [1, 50, 99])
        cx.append(float(x[part].mean()))
        lo.append(p[0])
        med.append(p[1])
        hi.append(p[2])
    return np.array(cx), np.array(lo), np.array(med), np.array(hi)


def _secondary(ax: Any, x: np.ndarray, col: np.ndarray, color: str, label: str,
               offset: float | None) -> list[Any]:
    twin = ax.twinx()
    twin.grid(False)
    if offset is not None:
        twin.spines["right"].set_position(("outward", offset))
    keep = _subsample(np.arange(x.size), MAX_POINTS)
    (line,) = twin.plot(x[keep], col[keep], color=color, linewidth=0.9, alpha=0.8, label=label)
    twin.set_ylabel(label, color=color)
    twin.tick_params(axis="y", colors=color)
    return [line]


def draw_timeseries(axes: Sequence[Any], case: CaseResult, *, metric: str = PRIMARY_METRIC,
                    window: int = 10, secondary: bool = True) -> None:
    """Run-by-run values of ``metric`` (Rancid Figs. 3–11).

    ok runs are points, warm-up runs grey triangles, removed runs red crosses, runs an outlier
    filter flagged are ringed, failed runs are faint red bars; the orange line is the trailing
    moving average of the ok runs over ``window`` runs. ``cpu_freq`` (MHz) and ``temperature``
    (°C) share the x axis on secondary y axes; ``loadavg`` goes into ``axes[1]`` when given.
    Over :data:`MAX_POINTS` runs the ok runs are drawn as a binned median with a 1–99 %
    envelope. ``secondary=False`` leaves out the frequency and temperature axes.
    """
    ax = axes[0]
    ax.set_title(_short(case.label), fontsize=9)
    col = _column(case, metric) if case.keep_samples else None
    if col is None:
        _message(ax, "raw samples were not kept (streaming mode):\nno run-by-run series"
                 if not case.keep_samples else f"no '{_esc(metric)}' values recorded")
        return
    n = min(col.size, len(case.status))
    status = np.asarray(case.status[:n])
    col = col[:n]
    runs = np.arange(1, n + 1)
    outlier = np.asarray(case.outlier[:n], dtype=bool) if case.outlier else np.zeros(n, bool)
    finite = np.isfinite(col)
    ok = (status == RUN_OK) & finite
    if ok.sum() == 0 and not finite.any():
        _message(ax, "no successful runs to plot")
        return
    factor, unit = time_scale(col[ok] if ok.any() else col[finite], _unit(case, metric))
    y = col * factor
    handles: list[Any] = []
    ok_idx = np.flatnonzero(ok & ~outlier)
    if n > MAX_POINTS and ok_idx.size > MAX_POINTS:
        cx, lo, med, hi = _binned(runs[ok_idx], y[ok_idx], MAX_POINTS // 4)
        band = ax.fill_between(cx, lo, hi, color=C_OK, alpha=0.25, linewidth=0,
                               label=f"ok runs, 1–99 % per bin ({ok_idx.size})")
        (mline,) = ax.plot(cx, med, color=C_OK, linewidth=0.8, label="ok runs, bin median")
        handles += [band, mline]
    elif ok_idx.size:
        handles.append(ax.scatter(runs[ok_idx], y[ok_idx], s=7, color=C_OK, alpha=0.7,
                                  linewidths=0, label=f"ok ({ok_idx.size})"))

    def markers(mask: np.ndarray, label: str, **style: Any) -> None:
        idx = np.flatnonzero(mask & finite)
        if idx.size == 0:
            return
        shown = _subsample(idx, MAX_MARKERS)
        suffix = f"{idx.size}" if shown.size == idx.size else f"{shown.size} of {idx.size} shown"
        handles.append(ax.scatter(runs[shown], y[shown], label=f"{label} ({suffix})", **style))

    markers(status == RUN_WARMUP, "warm-up", s=14, marker="^", color=C_WARMUP, alpha=0.8,
            linewidths=0)
    markers(status == RUN_REMOVED, "removed", s=16, marker="x", color=C_REMOVED, linewidths=1)
    markers(outlier & (status != RUN_REMOVED), "outlier", s=30, facecolors="none",
            edgecolors=C_OUTLIER, linewidths=1)
    failed = np.flatnonzero(status == RUN_FAILED)
    if failed.size:
        shown = _subsample(failed, MAX_MARKERS)
        handles.append(ax.vlines(runs[shown], 0, 1, transform=ax.get_xaxis_transform(),
                                 colors=C_REMOVED, alpha=0.25, linewidth=1,
                                 label=f"failed ({failed.size})"))
    ok_all = np.flatnonzero(ok)
    if ok_all.size >= 2:
        avg = moving_average(y[ok_all], window)
        keep = _subsample(np.arange(ok_all.size), MAX_POINTS)
        (line,) = ax.plot(runs[ok_all][keep], avg[keep], color=C_AVG, linewidth=1.5,
                          label=f"moving average ({min(window, ok_all.size)} runs)")
        handles.append(line)
    elif ok_all.size < 2:
        ax.text(0.5, 0.92, f"too few ok runs for a moving average (n = {ok_all.size})",
                ha="center", transform=ax.transAxes, fontsize=8, color="#444444")
    ax.set_xlabel("run")
    ax.set_ylabel(f"{_esc(metric)} ({unit})" if unit else _esc(metric))
    offset = None
    for name, color, label in (("cpu_freq", C_FREQ, "CPU frequency (MHz)"),
                               ("temperature", C_TEMP, "temperature (°C)")):
        sec = _column(case, name) if secondary else None
        if sec is None or not np.isfinite(sec[:n]).any():
            continue
        handles += _secondary(ax, runs, sec[:n], color, label, offset)
        offset = 48.0
    load = _column(case, "loadavg")
    if len(axes) > 1:
        lax = axes[1]
        if load is not None and np.isfinite(load[:n]).any():
            keep = _subsample(np.arange(n), MAX_POINTS)
            lax.plot(runs[keep], load[:n][keep], color=C_LOAD, linewidth=0.9)
            lax.set_ylabel("load average")
            lax.set_xlabel("run")
        else:
            lax.set_visible(False)
    ax.legend(handles=handles, fontsize=7, loc="upper left", ncols=2, framealpha=0.8)


def timeseries_figure(case: CaseResult, *, metric: str = PRIMARY_METRIC,
                      window: int = 10) -> Figure:
    load = _column(case, "loadavg") if case.keep_samples else None
    has_load = load is not None and bool(np.isfinite(load).any())

    def build() -> Figure:
        fig = new_figure(7.5, 4.8 if has_load else 3.8)
        if has_load:
            top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
            draw_timeseries([top, bottom], case, metric=metric, window=window)
        else:
            draw_timeseries([fig.add_subplot()], case, metric=metric, window=window)
        return fig

    return _build(build)


def plot_timeseries(case: CaseResult, path: str | os.PathLike[str], *,
                    metric: str = PRIMARY_METRIC, window: int = 10) -> Path:
    """Write the run-by-run series of one case (see :func:`draw_timeseries`)."""
    return save_figure(timeseries_figure(case, metric=metric, window=window), path)


# ============================================================================ line fit
def fit_band(x: np.ndarray, y: np.ndarray, grid: np.ndarray,
             confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Least-squares line through (x, y) and its confidence band at ``grid``.

    The band of the fitted mean line: ŷ ± t(1−α/2, n−2)·s·√(1/n + (x−x̄)²/Sxx), the standard
    result for simple linear regression (e.g. Montgomery & Runger, §11-5). None for n < 3 or
    when all x are equal.
    """
    n = x.size
    if n < 3:
        return None
    xm = float(x.mean())
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        return None
    from scipy.stats import t as student_t

    slope = float(((x - xm) * (y - y.mean())).sum() / sxx)
    intercept = float(y.mean() - slope * xm)
    resid = y - (intercept + slope * x)
    s = math.sqrt(float((resid**2).sum()) / (n - 2))
    half = float(student_t.ppf(0.5 + confidence / 2, n - 2)) * s * np.sqrt(
        1.0 / n + (grid - xm) ** 2 / sxx)
    line = intercept + slope * grid
    return line, line - half, line + half


def _as_floats(seq: Any) -> np.ndarray:
    try:
        return np.asarray([math.nan if v is None else float(v) for v in seq], dtype=float)
    except (TypeError, ValueError):
        return np.empty(0)


def draw_fit(ax: Any, fit: Mapping[str, Any], *, title: str = "") -> None:
    """Points, the fitted line with its CI band, dropped points, the intercept read off at 0.

    Moreno & Fischmeister (002) §3, Figs. 2–3: the slope is the time of one execution, the
    intercept the measurement overhead; outliers are dropped and the line refitted, and both
    lines are drawn. ``fit`` is ``case.extra["fit"]``.
    """
    if title:
        ax.set_title(_short(title), fontsize=9)
    x = _as_floats(fit.get("x") or [])
    y = _as_floats(fit.get("y") or [])
    if x.size == 0 or x.size != y.size:
        _message(ax, "no fit data (x and y) recorded")
        return
    dropped_idx = [int(i) for i in (fit.get("dropped") or []) if 0 <= int(i) < x.size]
    dropped = np.zeros(x.size, bool)
    dropped[dropped_idx] = True
    good = np.isfinite(x) & np.isfinite(y)
    kept = good & ~dropped
    factor, unit = time_scale(y[kept] if kept.any() else y[good])
    ys = y * factor
    ax.scatter(x[kept], ys[kept], s=14, color=C_OK, label=f"points ({int(kept.sum())})", zorder=3)
    if (dropped & good).any():
        ax.scatter(x[dropped & good], ys[dropped & good], s=36, marker="x", color=C_REMOVED,
                   label=f"dropped ({int((dropped & good).sum())})", zorder=4)
    slope, intercept = fit.get("slope"), fit.get("intercept")
    confidence = float(fit.get("confidence") or 0.95)
    if kept.sum() < 2 or slope is None or intercept is None:
        ax.text(0.5, 0.9, f"too few points for a line fit (n = {int(kept.sum())})",
                ha="center", transform=ax.transAxes, fontsize=8, color="#444444")
    else:
        xmax = float(np.nanmax(x[good]))
        grid = np.linspace(0.0, xmax, 200)
        slope_s, icpt_s = float(slope) * factor, float(intercept) * factor
        band = fit_band(x[kept], ys[kept], grid, confidence)
        if band is not None:
            ax.fill_between(grid, band[1], band[2], color=C_AVG, alpha=0.2, linewidth=0,
                            label=f"{confidence:.0%} band of the line")
        ax.plot(grid, icpt_s + slope_s * grid, color=C_AVG, linewidth=1.6,
                label=f"fit: y = {slope_s:.4g}·x + {icpt_s:.4g} {unit}")
        if (dropped & good).any() and good.sum() >= 2:
            all_fit = np.polyfit(x[good], ys[good], 1)
            ax.plot(grid, np.polyval(all_fit, grid), color="#7f7f7f", linewidth=1,
                    linestyle="--", label="fit through all points")
        ax.scatter([0.0], [icpt_s], s=40, marker="D", color=C_AVG, zorder=5,
                   label=f"intercept {icpt_s:.4g} {unit}")
        text = [f"slope {slope_s:.4g} {unit}"]
        ci = fit.get("slope_ci")
        if isinstance(ci, Sequence) and len(ci) == 2 and None not in ci:
            text[0] += f"  [{float(ci[0]) * factor:.4g}, {float(ci[1]) * factor:.4g}]"
        if fit.get("r2") is not None:
            text.append(f"R² = {float(fit['r2']):.5f}")
        ax.text(0.99, 0.03, "\n".join(text), ha="right", va="bottom", transform=ax.transAxes,
                fontsize=8, bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "#cccccc"})
    ax.set_xlabel(_short(fit.get("x_label") or "x"))
    ax.set_ylabel(f"time ({unit})")
    ax.legend(fontsize=7, loc="upper left")


def fit_figure(source: CaseResult | Mapping[str, Any], *, title: str | None = None) -> Figure:
    if isinstance(source, CaseResult):
        fit = source.extra.get("fit") or {}
        title = title if title is not None else f"{source.label} — {fit.get('kind', 'line fit')}"
    else:
        fit = source

    def build() -> Figure:
        fig = new_figure(6.5, 4.0)
        draw_fit(fig.add_subplot(), fit if isinstance(fit, Mapping) else {}, title=title or "")
        return fig

    return _build(build)


def plot_fit(source: CaseResult | Mapping[str, Any], path: str | os.PathLike[str], *,
             title: str | None = None) -> Path:
    """Write the line-fit / ITERS regression plot of a case (its ``extra["fit"]``)."""
    return save_figure(fit_figure(source, title=title), path)


# ============================================================================ error evolution
def running_quantiles(values: np.ndarray, ns: np.ndarray,
                      qs: Sequence[float] = (25, 50, 75)) -> np.ndarray:
    """Percentiles ``qs`` of ``values[:n]`` for each n in ``ns``; shape (len(ns), len(qs))."""
    values = np.asarray(values, dtype=float)
    out = np.empty((len(ns), len(qs)))
    for i, n in enumerate(ns):
        out[i] = np.percentile(values[: int(n)], qs)
    return out


def evolution_grid(n: int, limit: int = MAX_EVOLUTION_POINTS) -> np.ndarray:
    """The values of n at which an error-evolution curve is evaluated (all when few)."""
    if n <= limit:
        return np.arange(1, n + 1)
    head = np.arange(1, min(n, limit // 4) + 1)
    tail = np.linspace(1, n, limit - head.size).round().astype(int)
    return np.unique(np.concatenate([head, tail]))


def error_evolution(values: np.ndarray, reference: float,
                    limit: int = MAX_EVOLUTION_POINTS) -> dict[str, np.ndarray]:
    """n, relative error (%) of the running median against ``reference``, and relative IQR (%).

    Rancid (001) §VI-B, Fig. 16: error = (median of runs 1…n − reference) / reference; the
    IQR of runs 1…n relative to their median measures the precision reached after n runs.
    """
    ns = evolution_grid(values.size, limit)
    q = running_quantiles(values, ns)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = (q[:, 1] - reference) / abs(reference) * 100.0 if reference else q[:, 1] * np.nan
        iqr = (q[:, 2] - q[:, 0]) / np.abs(q[:, 1]) * 100.0
    return {"n": ns, "error": err, "iqr": iqr}


def draw_error_evolution(axes: Sequence[Any], cases: Sequence[CaseResult], *,
                         reference: float | None = None, labels: Sequence[str] | None = None,
                         metric: str = PRIMARY_METRIC) -> None:
    """Relative error of the running median (``axes[0]``) and relative IQR (``axes[1]``).

    The reference is ``reference`` when given, otherwise the median of all ok runs of the
    *last* case (in Rancid Fig. 16 the reference is the median of a long managed run, and the
    baseline is judged against it; with one case this is its own overall median).
    """
    err_ax, iqr_ax = axes
    series = [(labels[i] if labels else c.label, _samples(c, metric)) for i, c in enumerate(cases)]
    usable = [(lab, v) for lab, v in series if v.size >= 1]
    if not usable:
        _message(err_ax, "no samples: no error evolution")
        iqr_ax.set_visible(False)
        return
    ref = reference if reference is not None else float(np.median(usable[-1][1]))
    if not ref:
        _message(err_ax, "reference value is 0: relative error undefined")
        iqr_ax.set_visible(False)
        return
    for i, (label, values) in enumerate(usable):
        evo = error_evolution(values, ref)
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        err_ax.plot(evo["n"], evo["error"], color=color, linewidth=1.3, label=_short(label, 40))
        iqr_ax.plot(evo["n"], evo["iqr"], color=color, linewidth=1.3, label=_short(label, 40))
    skipped = len(series) - len(usable)
    err_ax.axhline(0, color="#333333", linewidth=0.8)
    factor, unit = time_scale([ref], _unit(cases[0], metric))
    err_ax.set_title(f"error of the running median vs reference {ref * factor:.4g} {unit}"
                     + (f" ({skipped} without samples)" if skipped else ""), fontsize=9)
    err_ax.set_ylabel("relative error (%)")
    iqr_ax.set_ylabel("IQR / median (%)")
    iqr_ax.set_xlabel("runs n")
    err_ax.legend(fontsize=7, loc="best")
    if max(v.size for _, v in usable) < 4:
        iqr_ax.text(0.5, 0.5, "too few samples for a meaningful IQR", ha="center",
                    transform=iqr_ax.transAxes, fontsize=8, color="#444444")


def error_evolution_figure(items: Results | CaseResult | Iterable[CaseResult], *,
                           reference: float | None = None,
                           labels: Sequence[str] | None = None,
                           metric: str = PRIMARY_METRIC) -> Figure:
    cases = _cases(items)

    def build() -> Figure:
        fig = new_figure(6.5, 4.6)
        axes = fig.subplots(2, 1, sharex=True)
        draw_error_evolution(axes, cases, reference=reference, labels=labels, metric=metric)
        return fig

    return _build(build)


def plot_error_evolution(items: Results | CaseResult | Iterable[CaseResult],
                         path: str | os.PathLike[str], *, reference: float | None = None,
                         labels: Sequence[str] | None = None,
                         metric: str = PRIMARY_METRIC) -> Path:
    """Write the error/IQR evolution of one or several cases on the same axes (Fig. 16)."""
    return save_figure(error_evolution_figure(items, reference=reference, labels=labels,
                                              metric=metric), path)


# ============================================================================ size sweep
_COMPLEXITY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "1": lambda n: np.ones_like(n),
    "logn": np.log,
    "n": lambda n: n,
    "nlogn": lambda n: n * np.log(n),
    "n^2": lambda n: n**2,
    "n^3": lambda n: n**3,
    "2^n": lambda n: np.exp2(n),
    "sqrt(n)": np.sqrt,
    "n^1.5": lambda n: n**1.5,
    "n^2logn": lambda n: n**2 * np.log(n),
}


def complexity_function(name: str) -> Callable[[np.ndarray], np.ndarray] | None:
    """The function f of a complexity class written as ``O(n log n)``, ``n^2``, ``O(n²)``..."""
    key = str(name).strip()
    key = re.sub(r"^O\((.*)\)$", r"\1", key, flags=re.IGNORECASE)
    key = (key.replace("²", "^2").replace("³", "^3").replace("**", "^").replace("·", "")
           .replace("*", "").replace("√n", "sqrt(n)").replace(" ", "").lower())
    key = key.replace("log(n)", "logn").replace("lgn", "logn").replace("log2n", "logn")
    if key == "n^1":
        key = "n"
    return _COMPLEXITY.get(key)


def draw_sweep(ax: Any, sweep: Mapping[str, Any], *, title: str = "") -> None:
    """Mean time per size on log-log axes, ± stddev bars, geometric mean, complexity curve.

    The logarithmic sweep over input sizes of the Criterion-style runner (004, ``sweep_seq``);
    the curve is ``coefficient · f(n)`` of the best complexity class.
    """
    if title:
        ax.set_title(_short(title), fontsize=9)
    sizes = _as_floats(sweep.get("sizes") or [])
    mean = _as_floats(sweep.get("mean") or [])
    if sizes.size == 0 or sizes.size != mean.size:
        _message(ax, "no sweep data (sizes and mean) recorded")
        return
    good = np.isfinite(sizes) & np.isfinite(mean) & (sizes > 0) & (mean > 0)
    if good.sum() < 1:
        _message(ax, "no positive sizes and times to plot on log-log axes")
        return
    factor, unit = time_scale(mean[good])
    std = _as_floats(sweep.get("stddev") or [])
    yerr = std[good] * factor if std.size == sizes.size else None
    ax.errorbar(sizes[good], mean[good] * factor, yerr=yerr, fmt="o", color=C_OK, markersize=4,
                capsize=2, label="mean ± stddev" if yerr is not None else "mean")
    geo = _as_floats(sweep.get("geomean") or [])
    if geo.size == sizes.size and np.isfinite(geo[good]).any():
        ax.plot(sizes[good], geo[good] * factor, "s", color=C_FREQ, markersize=3,
                label="geometric mean")
    cx = sweep.get("complexity") or {}
    best = cx.get("best") if isinstance(cx, Mapping) else None
    coef = cx.get("coefficient") if isinstance(cx, Mapping) else None
    fn = complexity_function(best) if best else None
    if fn is not None and coef is not None and good.sum() >= 1:
        grid = np.geomspace(sizes[good].min(), sizes[good].max(), 200)
        with np.errstate(all="ignore"):
            curve = float(coef) * fn(grid) * factor
        ok = np.isfinite(curve) & (curve > 0)
        ax.plot(grid[ok], curve[ok], color=C_AVG, linewidth=1.5,
                label=f"{_esc(best)}: {float(coef) * factor:.3g} {unit} · f(n)")
    elif best:
        ax.text(0.02, 0.95, f"complexity: {_esc(best)}", transform=ax.transAxes, fontsize=8,
                va="top")
    if good.sum() < 2:
        ax.text(0.5, 0.5, f"too few sizes for a sweep plot (n = {int(good.sum())})",
                ha="center", transform=ax.transAxes, fontsize=8, color="#444444")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size")
    ax.set_ylabel(f"time ({unit})")
    if sweep.get("r2") is not None:
        ax.text(0.99, 0.03, f"R² = {float(sweep['r2']):.4f}", ha="right", va="bottom",
                transform=ax.transAxes, fontsize=8)
    ax.legend(fontsize=7, loc="upper left")


def _sweep_of(source: Results | CaseResult | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(source, CaseResult):
        return source.extra.get("sweep") or {}
    if isinstance(source, Results):
        sweep = source.context.get("sweep")
        if sweep:
            return sweep
        for case in source.cases:
            if case.extra.get("sweep"):
                return case.extra["sweep"]
        return {}
    return source


def sweep_figure(source: Results | CaseResult | Mapping[str, Any], *,
                 title: str | None = None) -> Figure:
    sweep = _sweep_of(source)
    if title is None:
        title = source.label if isinstance(source, CaseResult) else "size sweep"

    def build() -> Figure:
        fig = new_figure(6.5, 4.0)
        draw_sweep(fig.add_subplot(), sweep if isinstance(sweep, Mapping) else {}, title=title)
        return fig

    return _build(build)


def plot_sweep(source: Results | CaseResult | Mapping[str, Any], path: str | os.PathLike[str],
               *, title: str | None = None) -> Path:
    """Write the size-sweep plot (``results.context["sweep"]`` or ``case.extra["sweep"]``)."""
    return save_figure(sweep_figure(source, title=title), path)


# ============================================================================ comparison
def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, Mapping):
        lo = _num(value.get("low", value.get("lo", value.get("ci_low"))))
        hi = _num(value.get("high", value.get("hi", value.get("ci_high"))))
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        lo, hi = _num(value[0]), _num(value[1])
    else:
        return None
    return (lo, hi) if lo is not None and hi is not None else None


def pair_summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Name, speedup, CI, verdict and p-value of one compared pair, read defensively.

    Reads the rows of ``steadybench compare --json`` (``name``, ``speedup`` = median ratio,
    ``speedup_ci`` = {low, high, confidence, method}, ``verdict``, ``p_value``, ``p_adjusted``,
    ``test``, ``confidence``) and a few spellings around them; missing keys give None.
    """
    name = next((str(entry[k]) for k in ("name", "label", "benchmark", "key") if entry.get(k)),
                "?")
    sp = entry.get("speedup")
    ci = None
    if isinstance(sp, Mapping):
        ci = _interval(sp.get("ci")) or _interval(sp)
        sp = sp.get("value", sp.get("median_ratio", sp.get("estimate")))
    speedup = _num(sp)
    for key in ("speedup_ci", "ci", "confidence_interval"):
        ci = ci or _interval(entry.get(key))
    if ci is None:
        ci = _interval((entry.get("ci_low"), entry.get("ci_high")))
    p = next((_num(entry[k]) for k in ("p_value", "pvalue", "p") if k in entry), None)
    verdict = entry.get("verdict")
    test = entry.get("test")
    return {"name": name, "speedup": speedup, "ci": ci, "p_value": p,
            "p_adjusted": _num(entry.get("p_adjusted")),
            "verdict": str(verdict) if verdict is not None else None,
            "test": str(test) if test else None,
            "confidence": _num(entry.get("confidence")),
            "warnings": [str(w) for w in entry.get("warnings") or [] if w]
            if isinstance(entry.get("warnings"), list) else []}


PAIR_KEYS = ("benchmarks", "pairs", "comparisons", "results", "cases")


def comparison_entries(comparison: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The raw per-pair entries of a comparison dict (``benchmarks`` in the compare JSON)."""
    if not isinstance(comparison, Mapping):
        return []
    for key in PAIR_KEYS:
        entries = comparison.get(key)
        if isinstance(entries, Sequence) and not isinstance(entries, str):
            return [e for e in entries if isinstance(e, Mapping)]
        if isinstance(entries, Mapping):
            return [{"name": k, **v} for k, v in entries.items() if isinstance(v, Mapping)]
    return []


def comparison_pairs(comparison: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The per-pair entries of a comparison dict, each through :func:`pair_summary`."""
    return [pair_summary(e) for e in comparison_entries(comparison)]


def overall_gain(comparison: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The suite's overall gain of a comparison dict, if present.

    In the compare JSON it is ``suite.gain.median.all`` = {gain G, speedup 1/(1−G)} (003 §3:
    G = 1 − Σ w·t(NEW) / Σ w·t(BASE)). Returns {"value": overall speedup, "gain": G, "ci",
    "label"}; ``value`` is on the speedup scale of the plots.
    """
    if not isinstance(comparison, Mapping):
        return None
    suite = comparison.get("suite")
    if isinstance(suite, Mapping) and isinstance(suite.get("gain"), Mapping):
        gains = suite["gain"]
        for stat in ("median", "mean", "min"):
            entry = gains.get(stat)
            entry = entry.get("all") if isinstance(entry, Mapping) else None
            if isinstance(entry, Mapping) and _num(entry.get("gain")) is not None:
                g = _num(entry["gain"])
                sp = _num(entry.get("speedup"))
                if sp is None and g is not None and g < 1:
                    sp = 1.0 / (1.0 - g)
                return {"value": sp, "gain": g, "ci": None, "label": stat,
                        "confidence": _num(suite.get("confidence"))}
    for key in ("overall", "overall_gain", "gain"):
        value = comparison.get(key)
        if _num(value) is not None:
            return {"value": _num(value), "gain": None, "ci": None, "label": key}
        if isinstance(value, Mapping):
            for vk in ("speedup", "value"):
                if _num(value.get(vk)) is not None:
                    return {"value": _num(value[vk]), "gain": _num(value.get("gain")),
                            "ci": _interval(value.get("ci")), "label": vk}
    return None


def draw_comparison(axes: Sequence[Any], base: CaseResult | None, new: CaseResult | None,
                    entry: Mapping[str, Any] | None = None, *,
                    labels: Sequence[str] = ("baseline", "candidate"),
                    metric: str = PRIMARY_METRIC) -> None:
    """Left: the two distributions as box plots with their points; right: speedup and its CI."""
    dist_ax, sp_ax = axes
    cases = [c for c in (base, new) if c is not None]
    pairs = [(labels[i], _samples(c, metric)) for i, c in enumerate((base, new)) if c is not None]
    pairs = [(lab, v) for lab, v in pairs if v.size]
    if pairs:
        factor, unit = time_scale(np.concatenate([v for _, v in pairs]),
                                  _unit(cases[0], metric))
        stats = [box_stats(v * factor, _short(lab, 30)) for lab, v in pairs]
        _bxp(dist_ax, stats[::-1])
        rng = np.random.default_rng(0)
        for pos, (_lab, v) in enumerate(pairs[::-1], start=1):
            sub = v[_subsample(np.arange(v.size), MAX_MARKERS)] * factor
            jitter = pos + rng.uniform(-0.18, 0.18, sub.size)
            dist_ax.scatter(sub, jitter, s=4, alpha=0.35, color=C_OK, linewidths=0)
        dist_ax.set_xlabel(f"{_esc(metric)} ({unit})" if unit else _esc(metric))
    else:
        _message(dist_ax, "no raw samples of the pair to draw")
    summary = pair_summary(entry or {})
    speedup, ci = summary["speedup"], summary["ci"]
    if speedup is None and len(pairs) == 2:
        speedup = float(np.median(pairs[0][1]) / np.median(pairs[1][1]))
        summary["verdict"] = summary["verdict"] or "median ratio (no test)"
    sp_ax.set_title("speedup (baseline / candidate)", fontsize=9)
    sp_ax.axvline(1.0, color="#333333", linewidth=0.8)
    if speedup is None:
        _message(sp_ax, "no speedup available")
        return
    xerr = None
    if ci is not None:
        xerr = [[max(speedup - ci[0], 0)], [max(ci[1] - speedup, 0)]]
    color = C_FREQ if speedup > 1 else C_REMOVED if speedup < 1 else C_OK
    sp_ax.errorbar([speedup], [0], xerr=xerr, fmt="o", color=color, capsize=4, markersize=6)
    sp_ax.set_yticks([])
    lines = [f"{speedup:.3f}×"]
    if ci is not None:
        lines.append(f"CI [{ci[0]:.3f}, {ci[1]:.3f}]")
    if summary["p_value"] is not None:
        lines.append(f"p = {summary['p_value']:.3g}")
    if summary["verdict"]:
        lines.append(_short(summary["verdict"], 40))
    sp_ax.text(0.5, 0.95, "\n".join(lines), ha="center", va="top", transform=sp_ax.transAxes,
               fontsize=8)
    lo = min(1.0, speedup, ci[0] if ci else speedup)
    hi = max(1.0, speedup, ci[1] if ci else speedup)
    pad = (hi - lo) * 0.25 or 0.05
    sp_ax.set_xlim(lo - pad, hi + pad)
    sp_ax.set_ylim(-1, 1.6)


def comparison_figure(base: CaseResult | None, new: CaseResult | None,
                      entry: Mapping[str, Any] | None = None, *,
                      labels: Sequence[str] = ("baseline", "candidate"),
                      title: str | None = None, metric: str = PRIMARY_METRIC) -> Figure:
    def build() -> Figure:
        fig = new_figure(7.5, 2.8)
        axes = fig.subplots(1, 2, width_ratios=[2.3, 1])
        draw_comparison(axes, base, new, entry, labels=labels, metric=metric)
        name = title or (pair_summary(entry)["name"] if entry else None) or \
            (base.label if base else new.label if new else "comparison")
        fig.suptitle(_short(name, 90), fontsize=9)
        return fig

    return _build(build)


def plot_comparison(base: CaseResult | None, new: CaseResult | None,
                    path: str | os.PathLike[str], entry: Mapping[str, Any] | None = None, *,
                    labels: Sequence[str] = ("baseline", "candidate"),
                    title: str | None = None, metric: str = PRIMARY_METRIC) -> Path:
    """Write the comparison plot of one pair: distributions side by side, speedup with its CI.
    Without an ``entry`` (from the comparison JSON) the speedup is the ratio of medians."""
    return save_figure(comparison_figure(base, new, entry, labels=labels, title=title,
                                         metric=metric), path)


# ============================================================================ suite overview
def draw_suite(ax: Any, comparison: Mapping[str, Any] | None) -> None:
    """Speedup per benchmark with its CI, sorted, a line at 1 and the overall gain (003)."""
    pairs = [p for p in comparison_pairs(comparison) if p["speedup"] is not None]
    ax.set_title("speedup per benchmark (baseline / candidate)", fontsize=9)
    if not pairs:
        _message(ax, "no speedups in the comparison")
        return
    pairs.sort(key=lambda p: p["speedup"])
    ys = np.arange(len(pairs))
    for y, p in zip(ys, pairs):
        color = C_FREQ if p["speedup"] > 1 else C_REMOVED if p["speedup"] < 1 else C_OK
        xerr = None
        if p["ci"] is not None:
            xerr = [[max(p["speedup"] - p["ci"][0], 0)], [max(p["ci"][1] - p["speedup"], 0)]]
        ax.errorbar([p["speedup"]], [y], xerr=xerr, fmt="o", color=color, capsize=3,
                    markersize=4)
    ax.set_yticks(ys, [_short(p["name"], 40) for p in pairs])
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    gain = overall_gain(comparison)
    if gain is not None and gain["value"] is not None:
        text = f"overall speedup {gain['value']:.3f}×"
        if gain.get("gain") is not None:
            text += f" (gain {gain['gain'] * 100:.2f} %)"
        ax.axvline(gain["value"], color=C_AVG, linestyle="--", linewidth=1.3, label=text)
        if gain.get("ci"):
            ax.axvspan(gain["ci"][0], gain["ci"][1], color=C_AVG, alpha=0.12, linewidth=0)
        ax.legend(fontsize=7, loc="lower right")
    ax.set_xlabel("speedup (> 1: candidate faster)")


def suite_figure(comparison: Mapping[str, Any] | None) -> Figure:
    count = len(comparison_pairs(comparison))

    def build() -> Figure:
        fig = new_figure(7.0, max(2.2, 0.9 + 0.3 * count))
        draw_suite(fig.add_subplot(), comparison)
        return fig

    return _build(build)


def plot_suite(comparison: Mapping[str, Any] | None, path: str | os.PathLike[str]) -> Path:
    """Write the suite overview: speedup per benchmark with CIs, sorted, and the overall gain."""
    return save_figure(suite_figure(comparison), path)


# ============================================================================ all at once
def _safe_name(text: str, limit: int = 60) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "case"
    return name[:limit]


def case_figures(case: CaseResult, *, window: int = 10) -> dict[str, Figure]:
    """The figures of one case the report shows: series, histogram, and fit/sweep if any."""
    figs: dict[str, Figure] = {}
    if case.keep_samples and case.runs_recorded:
        figs["timeseries"] = timeseries_figure(case, window=window)
        figs["histogram"] = histogram_figure(case)
        if case.n >= 2:
            figs["evolution"] = error_evolution_figure(case)
    if isinstance(case.extra.get("fit"), Mapping):
        figs["fit"] = fit_figure(case)
    if isinstance(case.extra.get("sweep"), Mapping):
        figs["sweep"] = sweep_figure(case)
    if not figs:
        figs["histogram"] = histogram_figure(case)  # says why there is nothing to draw
    return figs


def plot_all(results: Results, directory: str | os.PathLike[str], *, fmt: str = "png",
             window: int = 10) -> list[Path]:
    """Write every figure of ``results`` into ``directory``; return the paths written.

    Files: ``boxplot.<fmt>``, ``sweep.<fmt>`` (when the session was a sweep) and, per case,
    ``<index>-<name>-<kind>.<fmt>`` with kind in timeseries, histogram, evolution, fit, sweep.
    """
    if fmt not in FORMATS.values():
        raise ConfigurationError(f"plot format must be png or svg, not {fmt!r}")
    out = Path(directory)
    written = [save_figure(boxplot_figure(results, title=results.suite), out / f"boxplot.{fmt}")]
    if isinstance(results.context.get("sweep"), Mapping):
        written.append(save_figure(sweep_figure(results), out / f"sweep.{fmt}"))
    for i, case in enumerate(results.cases, start=1):
        stem = f"{i:03d}-{_safe_name(case.label)}"
        for kind, fig in case_figures(case, window=window).items():
            written.append(save_figure(fig, out / f"{stem}-{kind}.{fmt}"))
    return written
