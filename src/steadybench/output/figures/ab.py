"""A live A/B comparison (``steadybench ab``, randomised multiple interleaved trials, Abedi &
Brecht, ICPE 2017): the time of A and of B in every round, and the ratio's interval at every
look of the sequential plan, narrowing until the verdict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import plotdata as pd
from .common import C_AVG, C_OK, build, mark_outside, message, new_figure


def draw_ab_rounds(ax: Any, doc: Mapping[str, Any]) -> None:
    """Time of A and B per round, one line each, on a robust axis."""
    rounds = [r for r in doc.get("rounds") or [] if isinstance(r, Mapping)]
    a = pd.as_floats([r.get("A") for r in rounds])
    b = pd.as_floats([r.get("B") for r in rounds])
    ax.set_title("A and B in each round (fresh executions)")
    if a.size == 0 or not (np.isfinite(a).any() or np.isfinite(b).any()):
        message(ax, "no rounds recorded")
        return
    idx = np.arange(1, a.size + 1)
    both = np.concatenate([a[np.isfinite(a)], b[np.isfinite(b)]])
    factor, unit = pd.time_scale(both)
    limits = pd.robust_limits(both * factor)
    positions: dict[str, list[float]] = {"below": [], "above": []}
    for label, vals, color in (("A", a, C_OK), ("B", b, C_AVG)):
        y = vals * factor
        ax.plot(idx, np.clip(y, limits.low, limits.high), "o-", color=color, markersize=4,
                linewidth=1, label=f"{label} ({int(np.isfinite(vals).sum())} executions)")
        positions["below"] += list(idx[y < limits.low])
        positions["above"] += list(idx[y > limits.high])
    ax.set_ylim(limits.low, limits.high)
    y_all = np.concatenate([a * factor, b * factor])
    mark_outside(ax, limits, axis="y", unit=unit, positions=positions,
                 values_below=y_all[y_all < limits.low], values_above=y_all[y_all > limits.high])
    ax.set_xlabel("round")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole (issue 28)
    ax.set_ylabel(f"time ({unit})")
    ax.legend(loc="best", framealpha=0.85)


def draw_ab_looks(ax: Any, doc: Mapping[str, Any]) -> None:
    """The ratio time(A)/time(B) with its interval at each look, and the line at 1."""
    looks = [lk for lk in doc.get("looks") or [] if isinstance(lk, Mapping)]
    ax.set_title("time(A) / time(B) at each look")
    pts = [(lk.get("rounds"), lk.get("ratio"), lk.get("low"), lk.get("high")) for lk in looks]
    pts = [p for p in pts if all(isinstance(v, int | float) for v in p)]
    if not pts:
        message(ax, "no look reached (too few rounds)")
        return
    x = np.array([p[0] for p in pts], dtype=float)
    r = np.array([p[1] for p in pts], dtype=float)
    lo = np.array([p[2] for p in pts], dtype=float)
    hi = np.array([p[3] for p in pts], dtype=float)
    ax.errorbar(x, r, yerr=[np.clip(r - lo, 0, None), np.clip(hi - r, 0, None)], fmt="o",
                color=C_OK, capsize=4, markersize=6)
    ax.axhline(1.0, color="#333333", linewidth=0.8)
    ax.set_xlabel("rounds at the look")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("ratio (> 1: B is faster)")
    ax.set_xlim(0, max(x) * 1.1 + 1)


def ab_figure(doc: Mapping[str, Any]) -> Any:
    def make() -> Any:
        fig = new_figure(8.5, 3.4)
        left, right = fig.subplots(1, 2, width_ratios=[1.8, 1])
        draw_ab_rounds(left, doc)
        draw_ab_looks(right, doc)
        return fig

    return build(make)
