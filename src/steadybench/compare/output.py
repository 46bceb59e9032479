"""Rendering a comparison (:class:`~steadybench.compare.result.Comparison`): terminal table
(rich), JSON, Markdown and CSV.

The CSV starts with the reference tool's columns ``Name, SpeedupMin, SpeedupMean,
IsMeanSignificant, MeanConfLevel, SpeedupMedian, IsMedianSignificant, MedianConfLevel``
(IsXSignificant: that protocol concluded "NEW faster" at its level), then steadybench's own.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from ..output.console import make_console
from ..output.format import change_text, factor_text, markdown_text
from ..output.results_io import _finite
from .protocol import BUSY, HEAVY_TAIL

if TYPE_CHECKING:
    from .result import BenchmarkComparison, Comparison

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


def speedup_text(row: BenchmarkComparison) -> str:
    """NEW against BASE in words: "1.95× faster [1.2, 3.1]" or "1.64× slower [...]"; an
    interval that holds 1 gives no direction: "1.004× [0.990, 1.020], no clear difference"."""
    ci = row.interval
    # the interval's own estimate (Hodges–Lehmann ratio, or the ratio of medians under the
    # between-run model): an interval is printed beside what it is an interval of
    return change_text(row.estimate, None if ci is None else ci.low,
                       None if ci is None else ci.high)


def p_header(comparison: Comparison) -> str:
    """The p column's name: ``p (holm)`` when the p-values are adjusted for multiple
    comparisons, so it is never confused with a raw p (the report's)."""
    correction = comparison.settings.correction
    return f"p ({correction})" if correction and correction != "none" else "p"


def times_text(row: BenchmarkComparison) -> str:
    """The medians the ratio comes from: "BASE 2.68 µs → NEW 1.42 µs"."""
    from ..output.format import format_value

    if row.base.median is None or row.new.median is None:
        return ""
    return (f"BASE {format_value(row.base.median, row.unit)} → "
            f"NEW {format_value(row.new.median, row.unit)}")


def correction_warning(comparison: Comparison) -> str | None:
    """A hyperfine file against ``steadybench exec`` results compares two start-up
    corrections, not one command (issue 28, item 8): hyperfine subtracts its shell's start-up
    (nothing with ``-N``), exec the start-up of a trivial process. Said, with how to compare
    like with like."""
    inputs = comparison.inputs
    kinds = {inputs.get("base_kind"), inputs.get("new_kind")}
    exec_rows = any("one process each" in unit for unit in comparison.column("test_unit"))
    if kinds == {"hyperfine", "steadybench"} and exec_rows:
        return ("one side is a hyperfine file, the other steadybench exec results: when the "
                "file comes from hyperfine itself, the two are corrected for start-up "
                "differently (hyperfine: its shell's, none with -N; exec: a trivial "
                "process's), so a difference of about a process start-up may be the "
                "correction, not the command; compare like with like (both from exec, or "
                "exec --no-correction against hyperfine -N)")
    return None


def to_json(comparison: Comparison) -> str:
    return json.dumps(_finite(comparison.to_dict()), indent=1, allow_nan=False,
                      ensure_ascii=False) + "\n"


#: where the rows go in the document without them (its top-level key, one space in)
_NO_ROWS = '\n "benchmarks": []'


def json_pieces(comparison: Comparison) -> Iterator[str]:
    """:func:`to_json`'s text in pieces, one row at a time: the document of 10^6 rows was
    built whole, then its text (issue 27 item 13). The document without its rows is written
    as :func:`to_json` writes it, and the rows go where its empty list is, each written as
    ``json.dumps`` writes an item two levels in (its lines indented by two more spaces; a
    JSON text has no newline inside a string)."""
    encoder = json.JSONEncoder(indent=1, allow_nan=False, ensure_ascii=False)
    head = encoder.encode(_finite(dataclasses.replace(comparison, benchmarks=()).to_dict()))
    at = head.find(_NO_ROWS)
    if not comparison.benchmarks or at < 0 or head.count(_NO_ROWS) != 1:
        yield to_json(comparison)  # (no rows, or no such key: the whole text at once)
        return
    yield head[:at] + '\n "benchmarks": ['
    for i, row in enumerate(comparison.benchmarks):
        text = encoder.encode(_finite(row.to_dict())).replace("\n", "\n  ")
        yield ("," if i else "") + "\n  " + text
    yield "\n ]" + head[at + len(_NO_ROWS):] + "\n"


def _cell(value: Any) -> Any:
    return "" if value is None else value


def to_csv(comparison: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(REFERENCE_COLUMNS + EXTRA_COLUMNS)
    for r in comparison.benchmarks:
        ci = r.interval
        pc = r.protocol_confidence
        writer.writerow([
            r.name, _cell(r.ratio_min), r.ratio_mean, r.mean_significant,
            _cell(pc.get("mean")), r.ratio, r.median_significant, _cell(pc.get("median")),
            r.verdict, r.test, r.test_unit, _cell(r.p_value), _cell(r.p_adjusted),
            _cell(r.confidence), "" if ci is None else ci.low, "" if ci is None else ci.high,
            r.base.n, r.new.n, "two-sided", comparison.settings.correction,
            comparison.settings.threshold, " | ".join(r.warnings),
        ])
    return buf.getvalue()


def _suite_lines(suite: Mapping[str, Any]) -> list[str]:
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


def to_markdown(comparison: Comparison) -> str:
    from ..output.markdown import markdown_table

    rows = []
    for r in comparison.benchmarks:
        rows.append([markdown_text(r.name), speedup_text(r), f"**{r.verdict}**",
                     f"{r.test} ({r.test_unit})", _p(r.p_adjusted), _pct(r.confidence),
                     markdown_text("; ".join(r.warnings))])
    out = [markdown_table(["Benchmark", "NEW vs BASE [CI]", "Verdict", "Test",
                           p_header(comparison), "Confidence", "Notes"], rows).rstrip("\n")]
    out.append("")
    out.append(_legend(comparison))
    if noise_lines(comparison):
        out.append("")
        out.extend(f"- {markdown_text(line)}" for line in noise_lines(comparison))
    if comparison.suite:
        out.append("")
        out.extend(f"- {line}" for line in _suite_lines(comparison.suite))
    if comparison.warnings:
        out.append("")
        out.extend(f"- ⚠ {markdown_text(w)}" for w in comparison.warnings)
    return "\n".join(out) + "\n"


def _legend(comparison: Comparison) -> str:
    o = comparison.settings
    conf = "auto (highest level in 50%..99% that finds a difference)" \
        if o.confidence is None else _pct(o.confidence)
    methods = {m for m in comparison.column("interval_method") if m is not None}
    what = ("Hodges–Lehmann ratio BASE/NEW (median of all pairwise ratios)"
            if any(m and m.startswith("Hodges") for m in methods)
            else "median(BASE)/median(NEW)")
    text = (f"NEW against BASE: {what} in words, with its interval. Unit: "
            f"independent executions. Verdicts from the {o.verdict_by} protocol, "
            f"two-sided, confidence {conf}, correction {o.correction}")
    if o.threshold:
        text += f", threshold ±{o.threshold:.2%}"
    text += "."
    if o.show_min:
        text += " The minimum-based speedup is not statistically meaningful."
    return text


def noise_lines(comparison: Comparison) -> list[str]:
    """Where the variation between runs came from and how large it is, once per distinct text
    (results of separate runs, :mod:`steadybench.compare.between`)."""
    texts = comparison.column("noise_text")
    distinct = {t for t in texts if t is not None}
    if len(distinct) == 1:
        return [f"Runs as a random effect: {next(iter(distinct))}"]
    by_text: dict[str, list[str]] = {}
    for i, text in enumerate(texts):  # the rows read only when they are named
        if text is not None:
            by_text.setdefault(text, []).append(comparison.benchmarks[i].name)
    return [f"Runs as a random effect, {', '.join(names)}: {text}"
            for text, names in by_text.items()]


#: the most benchmarks the terminal table (and the summary's list of changes) shows: a table of
#: 10^6 rows took rich minutes to lay out and is read by nobody (issue 27 item 13); the files
#: (--json, --csv, --markdown) and ``--style plain`` keep every row
TERMINAL_ROWS = 1000


def _moved(verdict: str) -> bool:
    return verdict in ("faster", "slower")  # as BenchmarkComparison.moved


def shown_rows(rows: Sequence[BenchmarkComparison], verdicts: list[str] | None = None
               ) -> Sequence[BenchmarkComparison]:
    """The rows the terminal shows: all of them up to :data:`TERMINAL_ROWS`, else the changes
    first and then the others, up to that many, in their order. ``verdicts``: the rows'
    verdicts when known without reading each row (:meth:`Comparison.column`)."""
    if len(rows) <= TERMINAL_ROWS:
        return rows
    flags = [r.moved for r in rows] if verdicts is None else [_moved(v) for v in verdicts]
    moved = [i for i, f in enumerate(flags) if f][:TERMINAL_ROWS]
    rest = [i for i, f in enumerate(flags) if not f][:TERMINAL_ROWS - len(moved)]
    return [rows[i] for i in sorted(moved + rest)]


def not_shown_line(total: int, shown: int) -> str:
    return (f"({total - shown} of {total} benchmarks not shown here; --json, --csv, "
            "--markdown or --style plain list every one)")


def summary_sentences(comparison: Comparison) -> list[str]:
    """NEW against BASE in plain words: how many benchmarks moved each way, and for each one
    that moved, "NEW is 1.645× slower than BASE [1.52, 1.78] on NAME"."""
    rows = comparison.benchmarks
    verdicts = comparison.column("verdict")
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    parts = [f"{counts[v]} {v}" for v in ("faster", "slower") if counts.get(v)]
    # inconclusive is not "no difference": said apart, by its reason
    undecided = sorted(v for v in counts if v.startswith("inconclusive"))
    parts += [f"{counts[v]} {v}" for v in undecided]
    rest = len(rows) - sum(counts.get(v, 0) for v in ("faster", "slower", *undecided))
    if rest:
        parts.append(f"{rest} without a significant difference")
    lines = [f"NEW against BASE on {len(rows)} benchmark(s): {', '.join(parts) or 'none'}"]
    busy = [i for i, v in enumerate(verdicts) if v in (BUSY, HEAVY_TAIL)][:TERMINAL_ROWS]
    for r in (rows[i] for i in busy):  # which side, how busy (how often), what can decide
        why = next((w for w in r.warnings if "busy machine" in w
                    or w.startswith("inconclusive: ")), "")
        lines.append(f"  {r.name}: {why}")
    moved = [i for i, v in enumerate(verdicts) if _moved(v)]
    for r in (rows[i] for i in moved[:TERMINAL_ROWS]):
        words, _, interval = speedup_text(r).partition(" [")
        times = times_text(r)
        lines.append(f"  {r.name}: " + (f"{times}: " if times else "")
                     + f"NEW is {words} than BASE" + (f" [{interval}" if interval else ""))
    if len(moved) > TERMINAL_ROWS:
        lines.append(f"  ... and {len(moved) - TERMINAL_ROWS} more changes (--json lists them)")
    return lines


def print_table(comparison: Comparison, console: Console | None = None,
                style: str = "table") -> None:
    """The comparison table (fitted to the terminal, or in ``style``), then the legend, the
    plain-words summary and the suite figures."""
    from ..output.tables import Column, TableSpec, render

    console = console or make_console()
    show_min = comparison.settings.show_min
    columns = [Column("Benchmark", justify="left"), Column("NEW vs BASE [CI]", justify="left"),
               Column("Verdict", justify="left", wrap=True), Column("Test (unit)", drop=3),
               Column(p_header(comparison), drop=1), Column("Conf.", drop=2)]
    if show_min:
        columns.append(Column("Min speedup*", drop=4))
    columns.append(Column("Warnings", justify="left", wrap=True, drop=5))
    spec = TableSpec(columns, title="steadybench compare: BASE → NEW")
    styles = {"faster": "green", "slower": "red"}
    rows = comparison.benchmarks if style == "plain" else shown_rows(
        comparison.benchmarks, comparison.column("verdict"))
    for r in rows:
        style_ = styles.get(r.verdict, "")
        cells = [escape(r.name), escape(speedup_text(r)),
                 f"[{style_}]{r.verdict}[/]" if style_ else r.verdict,
                 f"{r.test} ({r.test_unit})", _p(r.p_adjusted), _pct(r.confidence)]
        if show_min:
            cells.append(_num(r.ratio_min) + "×")
        cells.append(escape("; ".join(r.warnings)))
        spec.add_row(*cells)
    render(spec, console, style)
    if len(rows) < len(comparison.benchmarks):
        console.print(not_shown_line(len(comparison.benchmarks), len(rows)), highlight=False)
    console.print(_legend(comparison), highlight=False)
    for line in summary_sentences(comparison):
        console.print(escape(line), highlight=False)
    if show_min:
        console.print("* min(BASE)/min(NEW): not statistically meaningful.",
                      highlight=False)
    for line in noise_lines(comparison):
        console.print(escape(line), highlight=False)
    for r in rows:
        if r.confidence_note:
            console.print(escape(f"{r.name}: {r.confidence_note}"), highlight=False)
    if comparison.suite:
        for line in _suite_lines(comparison.suite):
            # the sources' section numbers ("(003 §3)") belong to the docs, not the answer
            console.print(_SOURCE_REF.sub("", line), highlight=False)
    mixed = correction_warning(comparison)
    for w in [*comparison.warnings, *([mixed] if mixed else [])]:
        console.print(f"[yellow]warning:[/] {escape(w)}", highlight=False)
