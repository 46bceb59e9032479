"""Histogram of one case's samples with its kernel density, median and mean (Rancid, seed 001,
§III, Fig. 1: the shape of the distribution — several modes under frequency changes, a drift
under heating — is what the mean and standard deviation hide).

The axis is robust (:func:`~steadybench.output.plotdata.robust_limits`): the bulk of the
samples fills it and the values beyond are counted at its edge. The density is reflected at the
data's ends (:func:`~steadybench.output.plotdata.density`), so it never reaches below the
smallest time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import PRIMARY_METRIC, CaseResult
from .. import plotdata as pd
from .common import (
    C_AVG,
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


def draw_histogram(ax: Any, case: CaseResult, *, metric: str = PRIMARY_METRIC,
                   bins: int | str = "auto", title: bool = True,
                   legend: bool = True) -> None:
    """Histogram (density) of the ok samples on a robust axis, the reflected kernel density,
    and median/mean lines."""
    values = samples(case, metric)
    if title:
        ax.set_title(short(case.label))
    if not case.keep_samples:
        message(ax, "raw samples were not kept (streaming mode):\nno histogram")
        return
    if values.size < 2:
        message(ax, f"too few samples for a histogram (n = {values.size})")
        return
    factor, unit = pd.time_scale(values, unit_of(case, metric))
    x = values * factor
    limits = pd.robust_limits(x)
    dens, edges = pd.histogram(x, limits, bins)
    ax.stairs(dens, edges, fill=True, color=C_OK, alpha=0.45, label=f"{values.size} runs")
    kde = pd.density(x, low=limits.low, high=limits.high)
    if kde is not None:
        ax.plot(kde.grid, kde.values, color="#333333", linewidth=1.3, label="kernel density")
    median, mean = float(np.median(x)), float(np.mean(x))
    ax.axvline(median, color=C_AVG, linewidth=1.8, label=f"median {median:.4g} {unit}")
    if limits.low <= mean <= limits.high:
        ax.axvline(mean, color=C_REMOVED, linewidth=1.3, linestyle="--",
                   label=f"mean {mean:.4g} {unit}")
    ax.set_xlim(limits.low, limits.high)
    top = max(float(dens.max()) if dens.size else 0.0,
              float(kde.values.max()) if kde is not None else 0.0)
    ax.set_ylim(0, top * 1.45 or 1.0)  # room for the legend above the bars
    _, below, above = pd.split_outside(x, limits)
    mark_outside(ax, limits, axis="x", unit=unit,
                 positions={"below": [0.0] if below.any() else [],
                            "above": [0.0] if above.any() else []},
                 values_below=x[below], values_above=x[above])
    ax.set_xlabel(axis_label(metric, unit))
    ax.set_ylabel("density")
    ax.set_yticklabels([])
    if legend:
        ax.legend(loc="upper left", framealpha=0.85)


def histogram_figure(case: CaseResult, *, metric: str = PRIMARY_METRIC,
                     bins: int | str = "auto") -> Any:
    def make() -> Any:
        fig = new_figure(6.4, 3.8)
        draw_histogram(fig.add_subplot(), case, metric=metric, bins=bins)
        return fig

    return build(make)


def plot_histogram(case: CaseResult, path: str | os.PathLike[str], *,
                   metric: str = PRIMARY_METRIC, bins: int | str = "auto") -> Path:
    """Write the histogram of one case (see :func:`draw_histogram`); return the path."""
    return save_figure(histogram_figure(case, metric=metric, bins=bins), path)
