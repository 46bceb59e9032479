"""Rendering a comparison: terminal table (rich), JSON, Markdown and CSV.

The CSV starts with the reference tool's columns ``Name, SpeedupMin, SpeedupMean,
IsMeanSignificant, MeanConfLevel, SpeedupMedian, IsMedianSignificant, MedianConfLevel``
(IsXSignificant: that protocol concluded "NEW faster" at its level), then steadybench's own.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..output.console import make_console
from ..output.format import change_text, factor_text, markdown_text
from ..output.results_io import _finite

REFERENCE_COLUMNS = ("Name", "SpeedupMin", "SpeedupMean", "IsMeanSignificant", "MeanConfLevel",
                     "SpeedupMedian", "IsMedianSignificant", "MedianConfLevel")
EXTRA_COLUMNS = ("Verdict", "Test", "TestUnit", "PValue", "PAdjusted", "Confidence",
                 "SpeedupCILow", "SpeedupCIHigh", "NBase", "NNew", "Sides", "Correction",
                 "Threshold", "Warnings")


#: a reference to a section of the seed sources, e.g. " (003 §3)"
_SOURCE_REF = re.compile(r"\s*\(0\d\d §[\d.]+\)")


def _num(value: float | None, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}" if value * 100 == round(value * 100) \
        else f"{value:.1%}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.2g}" if value >= 1e-4 else f"{value:.1e}"


def speedup_text(row: dict[str, Any]) -> str:
    """NEW against BASE in words: "1.95× faster [1.2, 3.1]" or "1.64× slower [...]"; an
    interval that holds 1 gives no direction: "1.004× [0.990, 1.020], no clear difference"."""
    ci = row.get("speedup_ci") or {}
    # the interval's own estimate (Hodges–Lehmann ratio, or the ratio of medians under the
    # between-run model): an interval is printed beside what it is an interval of
    estimate = ci.get("estimate") if ci.get("estimate") is not None else row.get("speedup")
    return change_text(estimate, ci.get("low"), ci.get("high"))


def p_header(doc: dict[str, Any]) -> str:
    """The p column's name: ``p (holm)`` when the p-values are adjusted for multiple
    comparisons, so it is never confused with a raw p (the report's)."""
    correction = (doc.get("options") or {}).get("correction")
    return f"p ({correction})" if correction and correction != "none" else "p"


def times_text(row: dict[str, Any]) -> str:
    """The medians the ratio comes from: "BASE 2.68 µs → NEW 1.42 µs"."""
    from ..output.format import format_value

    unit = row.get("unit") or "s"
    base, new = (row.get(k) or {} for k in ("base", "new"))
    if base.get("median") is None or new.get("median") is None:
        return ""
    return f"BASE {format_value(base['median'], unit)} → NEW {format_value(new['median'], unit)}"


def correction_warning(doc: dict[str, Any]) -> str | None:
    """A hyperfine file against ``steadybench exec`` results compares two start-up
    corrections, not one command (issue 28, item 8): hyperfine subtracts its shell's start-up
    (nothing with ``-N``), exec the start-up of a trivial process. Said, with how to compare
    like with like."""
    inputs = doc.get("inputs") or {}
    kinds = {inputs.get("base_kind"), inputs.get("new_kind")}
    exec_rows = any("one process each" in str(r.get("test_unit", ""))
                    for r in doc.get("benchmarks", []))
    if kinds == {"hyperfine", "steadybench"} and exec_rows:
        return ("one side is a hyperfine file, the other steadybench exec results: when the "
                "file comes from hyperfine itself, the two are corrected for start-up "
                "differently (hyperfine: its shell's, none with -N; exec: a trivial "
                "process's), so a difference of about a process start-up may be the "
                "correction, not the command; compare like with like (both from exec, or "
                "exec --no-correction against hyperfine -N)")
    return None


def to_json(doc: dict[str, Any]) -> str:
    return json.dumps(_finite(doc), indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def to_csv(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(REFERENCE_COLUMNS + EXTRA_COLUMNS)
    for r in doc["benchmarks"]:
        ci = r.get("speedup_ci") or {}
        pc = r["protocol_confidence"]
        writer.writerow([
            r["name"], r.get("speedup_min", ""), r["speedup_mean"], r["mean_significant"],
            pc["mean"] if pc["mean"] is not None else "", r["speedup"], r["median_significant"],
            pc["median"] if pc["median"] is not None else "",
            r["verdict"], r["test"], r["test_unit"], r["p_value"] if r["p_value"] is not None
            else "", r["p_adjusted"] if r["p_adjusted"] is not None else "",
            r["confidence"] if r["confidence"] is not None else "", ci.get("low", ""),
            ci.get("high", ""), r["base"]["n"], r["new"]["n"], "two-sided",
            doc["options"]["correction"], doc["options"].get("threshold", 0.0),
            " | ".join(r["warnings"]),
        ])
    return buf.getvalue()


def _suite_lines(suite: dict[str, Any]) -> list[str]:
    lines = []
    conf = suite["confidence"]
    for stat, entry in suite["gain"].items():
        allg = entry.get("all")
        if allg:
            acc = entry.get("accelerated")
            extra = (f"; accelerated benchmarks only ({acc['benchmarks']}): "
                     f"G = {acc['gain']:.2%}") if acc else ""
            sp = (f", overall NEW is {factor_text(allg['speedup'])} than BASE"
                  if allg["speedup"] else "")
            lines.append(f"Overall gain on {stat}s ({suite['weights']} weights): "
                         f"G = {allg['gain']:.2%}{sp}{extra}")
    prop = suite.get("proportion")
    if prop:
        lines.append(
            f"Accelerated: {prop['x']} of {prop['n']} ({prop['estimate']:.1%}), "
            f"{_pct(conf)} CI [{prop['low']:.1%}, {prop['high']:.1%}] ({prop['method']}"
            + (f"; {prop['reason']}" if prop["reason"] else "") + ")")
        lines.append(f"Benchmarks needed to know that proportion within ±{suite['precision']:.0%}"
                     f" at {_pct(conf)}: {suite['benchmarks_needed']} "
                     f"({suite['benchmarks_needed_note']})")
    if conf is not None:
        lines.append(f"Suite confidence: {_pct(conf)} ({suite['confidence_note']})")
    return lines


def to_markdown(doc: dict[str, Any]) -> str:
    out = ["| Benchmark | NEW vs BASE [CI] | Verdict | Test | " + p_header(doc) + " | "
           "Confidence | Notes |",
           "|---|---|---|---|---|---|---|"]
    for r in doc["benchmarks"]:
        notes = markdown_text("; ".join(r["warnings"]))
        name = markdown_text(r["name"])
        out.append(f"| {name} | {speedup_text(r)} | **{r['verdict']}** | {r['test']} "
                   f"({r['test_unit']}) | {_p(r['p_adjusted'])} | {_pct(r['confidence'])} | "
                   f"{notes} |")
    out.append("")
    out.append(_legend(doc))
    if noise_lines(doc):
        out.append("")
        out.extend(f"- {markdown_text(line)}" for line in noise_lines(doc))
    if doc.get("suite"):
        out.append("")
        out.extend(f"- {line}" for line in _suite_lines(doc["suite"]))
    if doc["warnings"]:
        out.append("")
        out.extend(f"- ⚠ {markdown_text(w)}" for w in doc["warnings"])
    return "\n".join(out) + "\n"


def _legend(doc: dict[str, Any]) -> str:
    o = doc["options"]
    conf = "auto (highest level in 50%..99% that finds a difference)" \
        if o["confidence"] == "auto" else _pct(o["confidence"])
    methods = {(r.get("speedup_ci") or {}).get("method") for r in doc["benchmarks"]}
    what = ("Hodges–Lehmann ratio BASE/NEW (median of all pairwise ratios)"
            if any(m and m.startswith("Hodges") for m in methods)
            else "median(BASE)/median(NEW)")
    text = (f"NEW against BASE: {what} in words, with its interval. Unit: "
            f"independent executions. Verdicts from the {o['verdict_by']} protocol, "
            f"two-sided, confidence {conf}, correction {o['correction']}")
    if o.get("threshold"):
        text += f", threshold ±{o['threshold']:.2%}"
    text += "."
    if o["show_min"]:
        text += " The minimum-based speedup is not statistically meaningful."
    return text


def noise_lines(doc: dict[str, Any]) -> list[str]:
    """Where the variation between runs came from and how large it is, once per distinct text
    (results of separate runs, :mod:`steadybench.compare.between`)."""
    by_text: dict[str, list[str]] = {}
    for r in doc["benchmarks"]:
        if r.get("run_noise"):
            by_text.setdefault(r["run_noise"]["text"], []).append(r["name"])
    if len(by_text) == 1:
        return [f"Runs as a random effect: {next(iter(by_text))}"]
    return [f"Runs as a random effect, {', '.join(names)}: {text}"
            for text, names in by_text.items()]


def summary_sentences(doc: dict[str, Any]) -> list[str]:
    """NEW against BASE in plain words: how many benchmarks moved each way, and for each one
    that moved, "NEW is 1.645× slower than BASE [1.52, 1.78] on NAME"."""
    rows = doc["benchmarks"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    parts = [f"{counts[v]} {v}" for v in ("faster", "slower") if counts.get(v)]
    rest = len(rows) - sum(counts.get(v, 0) for v in ("faster", "slower"))
    if rest:
        parts.append(f"{rest} without a significant difference")
    lines = [f"NEW against BASE on {len(rows)} benchmark(s): {', '.join(parts) or 'none'}"]
    for r in rows:
        if r["verdict"] in ("faster", "slower"):
            words, _, interval = speedup_text(r).partition(" [")
            times = times_text(r)
            lines.append(f"  {r['name']}: " + (f"{times}: " if times else "")
                         + f"NEW is {words} than BASE" + (f" [{interval}" if interval else ""))
    return lines


def print_table(doc: dict[str, Any], console: Console | None = None,
                style: str = "table") -> None:
    """The comparison table (fitted to the terminal, or in ``style``), then the legend, the
    plain-words summary and the suite figures."""
    from ..output.tables import Column, TableSpec, render

    console = console or make_console()
    show_min = doc["options"]["show_min"]
    columns = [Column("Benchmark", justify="left"), Column("NEW vs BASE [CI]", justify="left"),
               Column("Verdict", justify="left", wrap=True), Column("Test (unit)", drop=3),
               Column(p_header(doc), drop=1), Column("Conf.", drop=2)]
    if show_min:
        columns.append(Column("Min speedup*", drop=4))
    columns.append(Column("Warnings", justify="left", wrap=True, drop=5))
    spec = TableSpec(columns, title="steadybench compare: BASE → NEW")
    styles = {"faster": "green", "slower": "red"}
    for r in doc["benchmarks"]:
        style_ = styles.get(r["verdict"], "")
        cells = [escape(r["name"]), escape(speedup_text(r)),
                 f"[{style_}]{r['verdict']}[/]" if style_ else r["verdict"],
                 f"{r['test']} ({r['test_unit']})", _p(r["p_adjusted"]),
                 _pct(r["confidence"])]
        if show_min:
            cells.append(_num(r.get("speedup_min")) + "×")
        cells.append(escape("; ".join(r["warnings"])))
        spec.add_row(*cells)
    render(spec, console, style)
    console.print(_legend(doc), highlight=False)
    for line in summary_sentences(doc):
        console.print(escape(line), highlight=False)
    if show_min:
        console.print("* min(BASE)/min(NEW): not statistically meaningful.",
                      highlight=False)
    for line in noise_lines(doc):
        console.print(escape(line), highlight=False)
    for r in doc["benchmarks"]:
        if r.get("confidence_note"):
            console.print(escape(f"{r['name']}: {r['confidence_note']}"), highlight=False)
    if doc.get("suite"):
        for line in _suite_lines(doc["suite"]):
            # the sources' section numbers ("(003 §3)") belong to the docs, not the answer
            console.print(_SOURCE_REF.sub("", line), highlight=False)
    mixed = correction_warning(doc)
    for w in [*doc["warnings"], *([mixed] if mixed else [])]:
        console.print(f"[yellow]warning:[/] {escape(w)}", highlight=False)
