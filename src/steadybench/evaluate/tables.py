"""Tables 2 and 3 as text for the terminal (80 columns), from the evaluation's JSON form.

Each row is a case; the columns are the performance improvement (reduction of the median) and
the precision improvement (reduction of the standard deviation), absolute and relative to the
baseline. A ``*`` marks a change over both thresholds (the paper's 1 ms and 1 %).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..output.format import COUNT_UNITS, format_percent, format_seconds, format_value
from .levels import Level

WIDTH = 80
LABEL_WIDTH = 26
COLUMN = 12


def _wrap(text: str, indent: str = "  ") -> list[str]:
    """``text`` in lines of at most :data:`WIDTH` characters (long words broken)."""
    import textwrap

    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def _abs(value: Any, unit: str = "s") -> str:
    if value is None:
        return "—"
    if unit in COUNT_UNITS:  # the cell is narrow: the number, the unit is in the header
        return f"{value:,.0f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"
    text = format_value(abs(value), unit)
    return ("-" if value < 0 else "") + text


def _row(label: str, row: Mapping[str, Any] | None, unit: str = "s") -> list[str]:
    if row is None:
        return [f"{label}  (not measured for both presets)"]
    cells = []
    for key in ("performance", "precision"):
        imp = row[key]
        mark = "*" if imp["highlight"] else " "
        cells.append(f"{_abs(imp['absolute'], unit):>{COLUMN - 1}}{mark}")
        cells.append(f"{format_percent(imp['relative']):>{COLUMN}}")
    name = label if len(label) <= LABEL_WIDTH else label[:LABEL_WIDTH - 1] + "…"
    lines = [f"{name:<{LABEL_WIDTH}}" + "".join(cells)]
    if len(label) > LABEL_WIDTH:
        lines.insert(0, label)
        lines[1] = f"{'':<{LABEL_WIDTH}}" + "".join(cells)
    return lines


def _header() -> list[str]:
    return [f"{'':<{LABEL_WIDTH}}{'performance (median)':^{2 * COLUMN}}"
            f"{'precision (std)':^{2 * COLUMN}}".rstrip(),
            f"{'case':<{LABEL_WIDTH}}" + "".join(f"{h:>{COLUMN}}" for h in
                                                 ("absolute", "relative") * 2)]


def table_lines(evaluation: Mapping[str, Any]) -> list[str]:
    """Table 2, then Table 3, then the level flags, as lines of at most 80 characters."""
    options = evaluation["options"]
    cases = evaluation["cases"]
    out: list[str] = []
    sources = {(c.get("table2") or {}).get("source") for c in cases} - {None}
    what = ("the launches' runs pooled (no --long)" if "pooled launches" in sources
            else "one long execution each")
    out += _wrap(f"Table 2. Baseline ({options['baseline']}) vs managed "
                 f"({options['managed']}), {what}")
    out += _header()
    for case in cases:
        out += _row(case["label"], case.get("table2"), case.get("unit", "s"))
    out.append("")
    counted = any(c.get("unit", "s") in COUNT_UNITS for c in cases)
    each = "one counted process" if counted else f"{options['runs']} runs"
    out.append(f"Table 3. Reproducibility: {options['launches']} launches × {each}; "
               "median and std")
    out.append("of the per-launch medians")
    out += _header()
    for case in cases:
        out += _row(case["label"], case.get("table3"), case.get("unit", "s"))
    out += _wrap("improvement = baseline − managed (positive: managed is faster / steadier); "
                 f"* = over both {format_seconds(options['highlight_abs_s'])} and "
                 f"{format_percent(options['highlight_rel'], 0)}")
    units = sorted({c.get("unit", "s") for c in cases} & set(COUNT_UNITS))
    if units:
        out += _wrap(f"absolute columns in {', '.join(units)} per call; counts are "
                     "highlighted by the relative threshold alone")
        out.append("")
        out.append("Counts across the presets (what the evaluation measured):")
        for case in cases:
            if case.get("finding"):
                out += _wrap(f"{case['label']}: {case['finding']}")
        from ..counts.backend import NOT_TIME

        out += _wrap(f"note: {NOT_TIME}")
    relations = [(c["label"], c["relation"]) for c in cases if c.get("relation")]
    if relations:
        out.append("")
        out.append("Each preset's launches as one estimate, as run reports it:")
        for label, text in relations:
            out += _wrap(f"{label}: {text}")
    flagged = [(c["label"], f) for c in cases for f in c.get("levels", [])]
    if flagged:
        out.append("")
        out.append("Executions with discrete levels (§VI-D):")
        for label, flag in flagged:
            values = ", ".join(format_seconds(Level.from_dict(lv).value)
                               for lv in flag["levels"])
            where = "long" if flag["series"] == "long" else f"launch {flag['launch'] + 1}"
            out += _wrap(f"  {label} {flag['preset']} {where}: {flag['kind']} between "
                         f"{values} ({flag['transitions']} changes)", indent="    ")
    return out
