"""Counts and time side by side in the HTML report.

``steadybench report TIME.json COUNTS.json`` (one results file measured with ``--measure
time``, one with ``instructions`` or ``cycles``) does not compare the two (a ratio of seconds to
instructions means nothing); it draws each benchmark's time and count next to each other: one
panel per measure, the same benchmarks in the same order, each bar with its interval, and a
table with both figures and each benchmark's ratio to the first. This is the report's context
section ``counts_and_time`` (:data:`steadybench.output.report.CONTEXT_SECTIONS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..model.results import Results
from .backend import COUNT_MEASURES, NOT_TIME


def units_of(results: Results) -> set[str]:
    """The units of the cases' headlines."""
    return {c.estimate.unit if c.estimate is not None else c.unit for c in results.cases}


def is_counts(results: Results) -> bool:
    return bool(units_of(results)) and units_of(results) <= set(COUNT_MEASURES)


def pairing(time_results: Results, count_results: Results, time_label: str,
            count_label: str) -> dict[str, Any]:
    """The section's data: the cases both files have, each with its time and count."""
    counted = {c.key: c for c in count_results.cases}
    rows = []
    for case in time_results.cases:
        other = counted.get(case.key)
        if other is None or case.estimate is None or other.estimate is None:
            continue
        rows.append({"label": case.label,
                     "time": case.estimate.value, "time_low": case.estimate.ci_low,
                     "time_high": case.estimate.ci_high, "time_unit": case.estimate.unit,
                     "count": other.estimate.value, "count_low": other.estimate.ci_low,
                     "count_high": other.estimate.ci_high, "count_unit": other.estimate.unit})
    return {"rows": rows, "time_file": time_label, "count_file": count_label}


def _figure(rows: Sequence[Mapping[str, Any]]) -> Any:
    from ..output.figures.common import new_figure
    from ..output.plotdata import time_scale

    fig = new_figure(9.0, 0.6 + 0.5 * max(len(rows), 1))
    left, right = fig.subplots(1, 2, sharey=True)
    labels = [r["label"] for r in rows]
    positions = list(range(len(rows)))
    factor, unit = time_scale([r["time"] for r in rows if r["time"] is not None],
                              rows[0]["time_unit"])
    for axis, key, scale, name in ((left, "time", factor, f"time ({unit})"),
                                   (right, "count", 1.0, rows[0]["count_unit"])):
        values = [(r[key] or 0.0) * scale for r in rows]
        errors = [[max(0.0, (r[key] - (r[f"{key}_low"] if r[f"{key}_low"] is not None
                                        else r[key])) * scale) for r in rows],
                  [max(0.0, ((r[f"{key}_high"] if r[f"{key}_high"] is not None else r[key])
                             - r[key]) * scale) for r in rows]]
        axis.barh(positions, values, xerr=errors, color="#4c72b0" if key == "time"
                  else "#dd8452")
        axis.set_xlabel(name)
    left.set_yticks(positions, labels)
    left.invert_yaxis()
    return fig


def report_section(data: Mapping[str, Any], image: Callable[[Any, str], Mapping[str, str]],
                   results: Results) -> dict[str, Any]:
    """The hook of :mod:`steadybench.output.report`: the figure and the table."""
    import markupsafe

    from ..output.plotdata import format_value

    rows = list(data.get("rows") or [])
    esc = markupsafe.escape
    if not rows:
        return {"title": "Counts and time",
                "html": markupsafe.Markup("<p>The two files have no benchmark in common.</p>")}
    img = image(_figure(rows), "counts_and_time")
    first = rows[0]
    parts = [f"<p>time from {esc(data.get('time_file'))}, counts from "
             f"{esc(data.get('count_file'))}; not compared with each other: "
             f"{esc(NOT_TIME)}.</p>",
             f'<img alt="time and counts per benchmark" src="{img["src"]}">',
             "<table><thead><tr><th>benchmark</th><th>time</th><th>count</th>"
             "<th>time / first</th><th>count / first</th></tr></thead><tbody>"]
    for r in rows:
        time_ratio = r["time"] / first["time"] if first["time"] else None
        count_ratio = r["count"] / first["count"] if first["count"] else None
        parts.append(f"<tr><td>{esc(r['label'])}</td>"
                     f"<td>{esc(format_value(r['time'], r['time_unit']))}</td>"
                     f"<td>{esc(format_value(r['count'], r['count_unit']))}</td>"
                     f"<td>{'–' if time_ratio is None else f'{time_ratio:.3f}×'}</td>"
                     f"<td>{'–' if count_ratio is None else f'{count_ratio:.3f}×'}</td></tr>")
    parts.append("</tbody></table>")
    return {"title": "Counts and time", "html": markupsafe.Markup("".join(parts))}
