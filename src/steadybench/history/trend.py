"""A benchmark's trend over its records: a compact text view and a plot for the report.

The text view is one sparkline (eight block heights between the series' minimum and maximum)
with the first, last, minimum and maximum values, then one line per record; change points found
by :mod:`steadybench.history.regressions` are marked. The plot (matplotlib, Agg) shows each
record's value with its interval, the per-execution values as dots, and the change points as
vertical lines; the y axis is scaled to the bulk of the data as criterion.rs does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..output.format import format_value
from .changes import confidence_text

if TYPE_CHECKING:
    from .changes import Change
    from .store import Point

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float]) -> str:
    """One block character per value, scaled between the minimum and the maximum."""
    if not values:
        return ""
    low, high = min(values), max(values)
    if high <= low:
        return BLOCKS[3] * len(values)
    return "".join(BLOCKS[min(len(BLOCKS) - 1, int((v - low) / (high - low) * len(BLOCKS)))]
                   for v in values)


def _value(v: float, unit: str) -> str:
    return format_value(v, unit)


def trend_lines(points: Sequence[Point], changes: Sequence[Change] = (), width: int = 60
                ) -> list[str]:
    """The text view: a header with the sparkline (the last ``width`` records), then a line per
    record, newest last."""
    if not points:
        return ["no records"]
    shown = list(points)[-width:]
    unit = shown[0].unit
    values = [p.value for p in shown]
    first, last = values[0], values[-1]
    change_at = {c.after_record: c for c in changes}
    lines = [f"{shown[0].label}  {sparkline(values)}",
             f"  {len(points)} records; first {_value(first, unit)}, last {_value(last, unit)} "
             f"({last / first - 1:+.1%}), min {_value(min(values), unit)}, "
             f"max {_value(max(values), unit)}"]
    for p in shown:
        ci = (f" [{_value(p.ci_low, unit)}, {_value(p.ci_high, unit)}]"
              if p.ci_low is not None and p.ci_high is not None else "")
        commit = p.commit[:10] if p.commit else "no commit"
        dirty = "+dirty" if p.dirty else ""
        mark = ""
        if p.record_id in change_at:
            c = change_at[p.record_id]
            mark = (f"  ← {c.direction} {c.magnitude:+.1%} (confidence "
                    f"{confidence_text(c.confidence)})")
        name = f" {p.name}" if p.name else ""
        lines.append(f"  #{p.record_id:<5} {commit}{dirty:<6} {p.created[:19]}{name}  "
                     f"{_value(p.value, unit)}{ci} n={len(p.executions)}{mark}")
    return lines


def trend_plot(points: Sequence[Point], path: str | os.PathLike[str],
               changes: Sequence[Change] = ()) -> None:
    """Write the trend plot (PNG or SVG by the file's suffix) atomically."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ..fileio import atomic_write_bytes

    unit = points[0].unit if points else "s"
    scale, suffix = (1.0, unit)
    if unit == "s" and points:
        top = max(p.value for p in points)
        scale, suffix = next(((f, s) for f, s in ((1e9, "ns"), (1e6, "µs"), (1e3, "ms"))
                              if top * f < 1000), (1.0, "s"))
    x = np.arange(len(points))
    y = np.asarray([p.value for p in points]) * scale
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    for i, p in enumerate(points):
        if len(p.executions) > 1:
            ax.plot([i] * len(p.executions), np.asarray(p.executions) * scale, ".",
                    color="0.65", markersize=3, zorder=1)
    low = [(p.value - p.ci_low) * scale if p.ci_low is not None else 0.0 for p in points]
    high = [(p.ci_high - p.value) * scale if p.ci_high is not None else 0.0 for p in points]
    ax.errorbar(x, y, yerr=[low, high], fmt="o-", color="C0", markersize=4, capsize=2,
                linewidth=1, zorder=2, label="estimate and interval")
    for c in changes:
        ax.axvline(c.index - 0.5, color="C3" if c.direction == "slower" else "C2",
                   linestyle="--", linewidth=1)
        ax.annotate(f"{c.magnitude:+.1%}", (c.index - 0.5, ax.get_ylim()[1]),
                    textcoords="offset points", xytext=(3, -12), fontsize=8,
                    color="C3" if c.direction == "slower" else "C2")
    if len(y):
        lo, hi = np.percentile(y, [2, 98])
        pad = max((hi - lo) * 0.25, abs(hi) * 0.02, 1e-12)
        ax.set_ylim(max(0.0, lo - pad), hi + pad)
    labels = [(p.commit[:7] if p.commit else f"#{p.record_id}") for p in points]
    step = max(1, len(points) // 12)
    ax.set_xticks(x[::step], labels[::step], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(f"time ({suffix})" if unit == "s" else unit)
    ax.set_title(points[0].label if points else "", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fmt = "svg" if str(path).lower().endswith(".svg") else "png"
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def trend_report(points: Sequence[Point], path: str | os.PathLike[str],
                 changes: Sequence[Change] = ()) -> None:
    """A self-contained HTML page: the trend plot (inline SVG) above the text view's records
    and the change points, every user text escaped."""
    import html
    import tempfile
    from pathlib import Path

    from ..fileio import atomic_write_text

    with tempfile.TemporaryDirectory() as tmp:
        svg_path = Path(tmp) / "trend.svg"
        trend_plot(points, svg_path, changes)
        svg = svg_path.read_text(encoding="utf-8")
    svg = svg[svg.find("<svg"):]
    label = html.escape(points[0].label if points else "")
    rows = "\n".join(f"<li>{html.escape(line.strip())}</li>"
                     for line in trend_lines(points, changes, width=len(points))[2:])
    found = "\n".join(
        f"<li><b>{html.escape(c.direction)}</b> {c.magnitude:+.1%} in "
        f"<code>{html.escape(c.commit_range)}</code>, confidence "
        f"{confidence_text(c.confidence)}</li>"
        for c in changes) or "<li>no change point at 95% confidence</li>"
    page = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>steadybench trend: {label}</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;"
            "padding:0 1rem}li{font-family:ui-monospace,monospace;font-size:.85rem}"
            "svg{max-width:100%;height:auto}</style></head><body>"
            f"<h1>{label}</h1><h2>Changes</h2><ul>{found}</ul>{svg}"
            f"<h2>Records</h2><ul>{rows}</ul></body></html>\n")
    atomic_write_text(path, page)
