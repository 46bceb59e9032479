"""Plots of steadybench results: one import for every figure (PNG or SVG).

The figures live one per module in :mod:`steadybench.output.figures`; the numbers they draw are
prepared by :mod:`steadybench.output.plotdata` (pure numpy, tested on its own) and
:mod:`steadybench.output.comparedata`. This module gathers them under their historical names:

==========================  =====================================================================
function                    figure
==========================  =====================================================================
:func:`plot_histogram`      Rancid (001) Fig. 1: histogram, kernel density, median and mean
:func:`plot_boxplot`        Rancid Fig. 15: boxes at the quartiles, whiskers at p1 and p99
:func:`plot_timeseries`     Rancid Figs. 3–11: run-by-run values, moving median, frequency and
                            temperature on secondary axes
:func:`plot_fit`            Moreno & Fischmeister (002) Figs. 2–3: line fit with its CI band
:func:`plot_error_evolution`  Rancid Fig. 16: error of the running median, relative IQR
:func:`plot_sweep`          004 (``sweep_seq``): time against size, log–log, fitted class
:func:`plot_comparison`     a compared pair: both distributions and the speedup (003)
:func:`plot_suite`          speedup per benchmark with CIs and the overall gain (003)
==========================  =====================================================================

Each ``plot_*`` function writes the file (format from the suffix, atomically) and returns its
path; the matching ``*_figure`` function returns the matplotlib figure. Too little data never
raises: the figure says what is missing. Huge data is summarised (binned envelopes, subsampled
markers, a binned kernel density).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..model.results import CaseResult, Results
from .comparedata import (  # noqa: F401 - re-exported
    PAIR_KEYS,
    comparison_entries,
    comparison_pairs,
    overall_gain,
    pair_summary,
)
from .figures.boxplot import boxplot_figure, draw_boxplot, plot_boxplot  # noqa: F401
from .figures.common import (  # noqa: F401
    DPI,
    FORMATS,
    build,
    figure_bytes,
    new_figure,
    safe_name,
    save_figure,
)
from .figures.comparison import (  # noqa: F401
    comparison_figure,
    draw_comparison,
    draw_suite,
    plot_comparison,
    plot_suite,
    suite_figure,
)
from .figures.evolution import (  # noqa: F401
    draw_error_evolution,
    error_evolution_figure,
    plot_error_evolution,
)
from .figures.fit import draw_fit, fit_figure, plot_fit  # noqa: F401
from .figures.growth import draw_growth, growth_figure, plot_sweep, sweep_figure  # noqa: F401
from .figures.histogram import draw_histogram, histogram_figure, plot_histogram  # noqa: F401
from .figures.timeseries import (  # noqa: F401
    MAX_POINTS,
    draw_timeseries,
    plot_timeseries,
    timeseries_figure,
)
from .plotdata import (  # noqa: F401
    MAX_EVOLUTION_POINTS,
    MAX_MARKERS,
    box_stats,
    complexity_function,
    error_evolution,
    evolution_grid,
    fit_band,
    format_value,
    moving_average,
    running_quantiles,
    time_scale,
)


def case_figures(case: CaseResult, *, window: int = 10) -> dict[str, Any]:
    """The figures of one case: series, histogram, error evolution, and fit/sweep if any."""
    figs: dict[str, Any] = {}
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
    out.mkdir(exist_ok=True)  # the folder asked for (its parents must exist)
    written = [save_figure(boxplot_figure(results, title=results.suite), out / f"boxplot.{fmt}")]
    if isinstance(results.context.get("sweep"), Mapping):
        written.append(save_figure(sweep_figure(results), out / f"sweep.{fmt}"))
    for i, case in enumerate(results.cases, start=1):
        stem = f"{i:03d}-{safe_name(case.label)}"
        for kind, fig in case_figures(case, window=window).items():
            written.append(save_figure(fig, out / f"{stem}-{kind}.{fmt}"))
    return written
