"""Relative error of the running median and relative IQR against the number of runs (Rancid,
seed 001, §VI-B, Fig. 16)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...model.results import PRIMARY_METRIC, CaseResult, Results
from .. import plotdata as pd
from .common import (
    SERIES_COLORS,
    build,
    cases_of,
    message,
    new_figure,
    samples,
    save_figure,
    short,
    unit_of,
)


def draw_error_evolution(axes: Sequence[Any], cases: Sequence[CaseResult], *,
                         reference: float | None = None, labels: Sequence[str] | None = None,
                         metric: str = PRIMARY_METRIC) -> None:
    """Relative error of the running median (``axes[0]``) and relative IQR (``axes[1]``).

    The reference is ``reference`` when given, otherwise the median of all ok runs of the
    *last* case (in Rancid Fig. 16 the reference is the median of a long managed run, and the
    baseline is judged against it; with one case this is its own overall median).
    """
    err_ax, iqr_ax = axes
    series = [(labels[i] if labels else c.label, samples(c, metric)) for i, c in enumerate(cases)]
    usable = [(lab, v) for lab, v in series if v.size >= 1]
    if not usable:
        message(err_ax, "no samples: no error evolution")
        iqr_ax.set_visible(False)
        return
    ref = reference if reference is not None else float(np.median(usable[-1][1]))
    if not ref:
        message(err_ax, "reference value is 0: relative error undefined")
        iqr_ax.set_visible(False)
        return
    evos = [(label, pd.error_evolution(values, ref)) for label, values in usable]
    for i, (label, evo) in enumerate(evos):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        err_ax.plot(evo["n"], evo["error"], color=color, linewidth=1.4, label=short(label, 40))
        iqr_ax.plot(evo["n"], evo["iqr"], color=color, linewidth=1.4, label=short(label, 40))
    skipped = len(series) - len(usable)
    err_ax.axhline(0, color="#333333", linewidth=0.8)
    factor, unit = pd.time_scale([ref], unit_of(cases[0], metric))
    err_ax.set_title(f"error of the running median vs reference {ref * factor:.4g} {unit}"
                     + (f" ({skipped} without samples)" if skipped else ""))
    # robust y: the first few runs can be far off; the curve after them is what matters
    for ax, key in ((err_ax, "error"), (iqr_ax, "iqr")):
        vals = np.concatenate([evo[key] for _, evo in evos])
        vals = vals[np.isfinite(vals)]
        if vals.size >= 4:
            lim = pd.robust_limits(vals)
            ax.set_ylim(min(lim.low, 0.0), max(lim.high, 0.0) or 1.0)
    err_ax.set_ylabel("relative error (%)")
    iqr_ax.set_ylabel("IQR / median (%)")
    iqr_ax.set_xlabel("runs n")
    err_ax.legend(loc="best", fontsize=8.5)
    if max(v.size for _, v in usable) < 4:
        iqr_ax.text(0.5, 0.5, "too few samples for a meaningful IQR", ha="center",
                    transform=iqr_ax.transAxes, fontsize=9, color="#444444")


def error_evolution_figure(items: Results | CaseResult | Iterable[CaseResult], *,
                           reference: float | None = None,
                           labels: Sequence[str] | None = None,
                           metric: str = PRIMARY_METRIC) -> Any:
    cases = cases_of(items)

    def make() -> Any:
        fig = new_figure(6.8, 4.8)
        axes = fig.subplots(2, 1, sharex=True)
        draw_error_evolution(axes, cases, reference=reference, labels=labels, metric=metric)
        return fig

    return build(make)


def plot_error_evolution(items: Results | CaseResult | Iterable[CaseResult],
                         path: str | os.PathLike[str], *, reference: float | None = None,
                         labels: Sequence[str] | None = None,
                         metric: str = PRIMARY_METRIC) -> Path:
    """Write the error/IQR evolution of one or several cases on the same axes (Fig. 16)."""
    return save_figure(error_evolution_figure(items, reference=reference, labels=labels,
                                              metric=metric), path)
