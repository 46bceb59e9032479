"""How many times slower than the fastest each variant is, with the ratio's interval: the
figure beside the plain-words summary of :mod:`steadybench.output.relative`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..relative import Relation
from .common import C_FREQ, C_OK, build, new_figure, short

#: at most this many sets of variants in one figure
MAX_GROUPS = 12


def draw_relative(ax: Any, relations: Sequence[Relation], *, title: str = "") -> None:
    """One bar per variant: time / time of the fastest (the fastest is 1), with intervals."""
    if title:
        ax.set_title(short(title, 90))
    if not relations:
        return
    names = [relations[0].fastest] + [r.other for r in relations]
    ratios = [1.0] + [r.ratio for r in relations]
    ys = np.arange(len(names))[::-1]
    colors = [C_FREQ] + [C_OK] * len(relations)
    ax.barh(ys, ratios, color=colors, alpha=0.75, height=0.6)
    for y, r in zip(ys[1:], relations):
        if r.low is not None and r.high is not None:
            ax.errorbar([r.ratio], [y], xerr=[[max(r.ratio - r.low, 0)],
                                               [max(r.high - r.ratio, 0)]],
                        fmt="none", color="#222222", capsize=4)
    ends = [1.0] + [max(r.ratio, r.high or r.ratio) for r in relations]
    for y, ratio, end in zip(ys, ratios, ends):
        ax.text(end, y, f"  {ratio:.3g}×" if ratio != 1.0 else "  fastest", va="center",
                fontsize=9.5)
    ax.set_yticks(ys, [short(n, 40) for n in names])
    ax.axvline(1.0, color="#333333", linewidth=0.8)
    ax.set_xlim(0, max(max(ratios), max((r.high or r.ratio) for r in relations)) * 1.25)
    ax.set_xlabel("time relative to the fastest (×)")
    ax.grid(axis="y", visible=False)


def relative_figure(groups: Sequence[tuple[str, Sequence[Relation]]]) -> Any:
    """One panel per set of variants, stacked, each as tall as its number of variants."""
    groups = [(title, rel) for title, rel in groups if rel]
    heights = [len(rel) + 1 for _, rel in groups] or [1]

    def make() -> Any:
        fig = new_figure(9.0, 0.5 + sum(0.42 * h + 0.75 for h in heights))
        axes = fig.subplots(len(heights), 1, height_ratios=heights, squeeze=False)[:, 0]
        for ax, (title, rel) in zip(axes, groups):
            draw_relative(ax, rel, title=title)
        return fig

    return build(make)
