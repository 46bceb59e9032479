"""A comparison of counts (:class:`~steadybench.counts.verdict.CountComparison`) as the files
``compare`` writes for time: a Markdown table (the one writer, :mod:`steadybench.output.
markdown`), CSV, and the comparison the HTML report shows.

A count is exact, so the columns are the two counts, the change, the difference per call and
the share of it that layouts and the line fit explain (the allowance a change must exceed),
never an interval or a p-value; the note that counts are not time goes with every file.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from .verdict import CountComparison, CountVerdict

#: the CSV's columns, one row per case
CSV_COLUMNS = ("Name", "Unit", "Base", "New", "Change", "Difference", "LayoutPart", "FitPart",
               "Allowed", "Verdict")

#: the test the report names beside the verdicts
TEST = "exact count (valgrind): the change against the layouts' and the fit's share"


def _words(row: CountVerdict) -> str:
    """"3.10% more", "0.20% fewer", "the same"."""
    if row.difference == 0:
        return "the same"
    return f"{abs(row.change):.2%} {'more' if row.difference > 0 else 'fewer'}"


def to_markdown(comparison: CountComparison) -> str:
    from ..output.format import markdown_text
    from ..output.markdown import markdown_table

    rows = [[markdown_text(r.name), f"{r.base:,.1f}", f"{r.new:,.1f}",
             f"{_words(r)} {markdown_text(r.unit)}", f"{r.difference:+,.1f}",
             f"{r.allowed:.3%}", f"**{r.verdict}**"] for r in comparison.rows]
    out = [markdown_table(["Benchmark", "A (BASE)", "B (NEW)", "B against A", "Difference",
                           "Allowed", "Verdict"], rows,
                          ["", "right", "right", "", "right", "right", ""]).rstrip("\n")]
    out += ["", "Counts per call; a change is called only beyond the allowance: the threshold, "
            "or the layouts' and the line fit's share of A's count when larger."]
    notes = [*(f"⚠ {w}" for w in comparison.warnings), *comparison.unmatched, comparison.note]
    out += [""] + [f"- {markdown_text(n)}" for n in notes]
    return "\n".join(out) + "\n"


def to_csv(comparison: CountComparison) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in comparison.rows:
        writer.writerow([r.name, r.unit, r.base, r.new, r.change, r.difference, r.layout_part,
                         r.fit_part, r.allowed, r.verdict])
    return buf.getvalue()


def report_comparison(comparison: CountComparison) -> dict[str, Any]:
    """The comparison for :func:`steadybench.output.report.write_report`: the counts' JSON
    with, per case, the ratio of A's count to B's as the report's ratio (above 1: B executes
    fewer), no interval (a count is exact), the verdict and its sentence."""
    doc = comparison.to_dict()
    for row, raw in zip(comparison.rows, doc["benchmarks"]):
        raw.update(speedup=row.base / row.new if row.new else None, test=TEST,
                   warnings=[row.sentence])
    doc["warnings"] = [*doc["warnings"], *doc["unmatched"], doc["note"]]
    return doc
