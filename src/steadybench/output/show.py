"""A results file read in the terminal: ``steadybench show FILE`` (pyperf's ``stats``,
``hist``, ``dump`` and ``metadata`` commands, for steadybench's own results).

Every function returns lines of at most :data:`WIDTH` characters; a number or a word is never
split. The statistics are those of :mod:`statistics` over the values the file holds (quartiles
of R's type 7, ``method="inclusive"``); the headline is the case's estimate with its
interval, and the histogram's bins are of equal width between the minimum and the maximum
(Sturges' rule for their number, at most :data:`MAX_BINS`).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from ..model.results import CaseResult, Results
from .format import (
    UNDEFINED,
    case_estimate,
    estimate_ci_text,
    estimate_value_text,
    format_percent,
    format_value,
)
from .rates import case_rates, rate_text

#: the width every line fits
WIDTH = 80
#: most bins of a histogram
MAX_BINS = 25


def _fmt(value: float | None, unit: str) -> str:
    return format_value(value, unit)


def execution_values(case: CaseResult) -> list[list[float]]:
    """The case's measured values split by execution (worker process), in the order they were
    measured; one list when the file does not say which execution made which value."""
    values = case.values()
    sizes = [int(e.n or 0) for e in case.processes]
    if len(sizes) > 1 and sum(sizes) == len(values):
        out, start = [], 0
        for size in sizes:
            out.append(values[start:start + size])
            start += size
        return out
    return [values] if values else []


def stats_lines(case: CaseResult) -> list[str]:
    """pyperf ``stats``: the headline, then the distribution of every value."""
    import statistics

    unit = case.unit
    values = case.values()
    est = case_estimate(case)
    lines = [f"{case.label}:"]
    if est is not None:
        level = (f", {est.confidence:.0%} interval"
                 if isinstance(est.confidence, (int, float)) else "")
        lines.append(f"  estimate: {estimate_value_text(est)} {estimate_ci_text(est)} "
                     f"({est.statistic}{level})")
    rates = case_rates(case)
    if rates:
        lines.append("  rate: " + ", ".join(
            f"{r.text()}" + (f" [{rate_text(r.kind, r.low)}, {rate_text(r.kind, r.high)}]"
                             if r.low is not None and r.high is not None else "")
            for r in rates))
    if case.errors:
        lines.append(f"  error: {case.errors[0]}")
    execs = execution_values(case)
    lines.append(f"  values: {len(values)} in {len(execs)} execution(s); method {case.method}")
    if not values:
        return lines
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if len(values) > 1 else None
    # R's type 7, as numpy's default percentile
    q1, _, q3 = (statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1
                 else (values[0],) * 3)
    lines += [f"  minimum: {_fmt(min(values), unit)}",
              f"  Q1: {_fmt(q1, unit)}",
              f"  median: {_fmt(statistics.median(values), unit)}",
              f"  Q3: {_fmt(q3, unit)}",
              f"  maximum: {_fmt(max(values), unit)}",
              f"  mean ± stdev: {_fmt(mean, unit)} ± {_fmt(stdev, unit)}"
              + (f" (CoV {format_percent(stdev / mean)})" if stdev is not None and mean
                 else "")]
    if len(execs) > 1:
        medians = [statistics.median(xs) for xs in execs if xs]
        spread = (statistics.stdev(medians) / statistics.fmean(medians)
                  if len(medians) > 1 and statistics.fmean(medians) else None)
        lines.append(f"  medians of the executions: {_fmt(min(medians), unit)} to "
                     f"{_fmt(max(medians), unit)} (CoV {format_percent(spread)})")
    outliers = case.analyses.get("outliers") if isinstance(case.analyses, dict) else None
    if isinstance(outliers, dict) and outliers.get("count") is not None:
        lines.append(f"  outliers (beyond {outliers.get('k', 1.5)} IQR): {outliers['count']}")
    if case.stop_reason:
        lines.append(f"  stopped: {case.stop_reason}")
    return [fitted for line in lines for fitted in _fit(line)]


def histogram_lines(values: Sequence[float], unit: str, width: int = WIDTH,
                    bins: int | None = None) -> list[str]:
    """pyperf ``hist``: one line per bin, ``centre: count ####``, the bars scaled so the
    longest fills the line."""
    if not values:
        return ["  (no values)"]
    low, high = min(values), max(values)
    if bins is None:
        bins = min(MAX_BINS, max(1, math.ceil(math.log2(len(values))) + 1))  # Sturges
    if high == low:
        bins = 1
    step = (high - low) / bins if high > low else 1.0
    counts = [0] * bins
    for x in values:
        counts[min(bins - 1, int((x - low) / step)) if high > low else 0] += 1
    labels = [_fmt(low + (i + 0.5) * step if high > low else low, unit) for i in range(bins)]
    label_width = max(len(label) for label in labels)
    count_width = len(str(max(counts)))
    room = max(1, width - label_width - count_width - 5)
    top = max(counts)
    return [f"  {label:>{label_width}}: {n:>{count_width}} {'#' * round(n / top * room)}"
            .rstrip() for label, n in zip(labels, counts, strict=True)]


def _common_unit(values: Sequence[float], unit: str) -> tuple[float, str]:
    """One unit for a list of values (that of their median), so a number is never apart from
    its unit: (the scale to divide by, its name)."""
    if unit != "s" or not values:
        return 1.0, unit or "value"
    middle = sorted(abs(x) for x in values)[len(values) // 2]
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if middle >= scale:
            return scale, name
    return 1e-9, "ns"


def dump_lines(case: CaseResult) -> list[str]:
    """pyperf ``dump``: every value, by execution, with the execution's hash seed."""
    lines = [f"{case.label}:"]
    execs = execution_values(case)
    processes = list(case.processes)
    for k, xs in enumerate(execs, 1):
        execution = processes[k - 1] if len(processes) == len(execs) else None
        layout = execution.layout if execution is not None else None
        seed = layout.hash_seed if layout is not None else None
        head = f"  execution {k}: {len(xs)} values" + (f" (hash seed {seed})"
                                                        if seed is not None else "")
        lines.append(head)
        scale, label = _common_unit(xs, case.unit)
        body = ", ".join(f"{x / scale:.4g}" for x in xs)
        lines += textwrap.wrap(f"({label}) {body}", WIDTH, initial_indent="    ",
                               subsequent_indent="    ", break_long_words=False,
                               break_on_hyphens=False)
    if not execs:
        lines.append("  (no values)")
    return lines


def _flat(prefix: str, value: Any) -> Iterable[tuple[str, str]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flat(f"{prefix}.{key}" if prefix else str(key), inner)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, inner in enumerate(value):
            yield from _flat(f"{prefix}[{i}]", inner)
    else:
        text = UNDEFINED if value is None else (", ".join(map(str, value))
                                                if isinstance(value, list) else str(value))
        yield prefix, text


def metadata_lines(results: Results) -> list[str]:
    """pyperf ``metadata``: the machine, the environment and the command, as ``key: value``."""
    lines = [f"created: {results.created}", f"suite: {results.suite}"]
    if results.interrupted:
        lines.append("interrupted: yes (partial results)")
    for section, data in (("environment", results.environment),
                          ("context", results.context)):
        lines.append(f"{section}:")
        for key, text in _flat("", data):
            lines += _fit(f"  {key}: {text}")
    return lines


def _fit(line: str) -> list[str]:
    """A line of at most :data:`WIDTH` characters, continued with an indent, never inside a
    word (a word longer than the line stays whole)."""
    if len(line) <= WIDTH:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    return textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False, initial_indent="")


def show_lines(results: Results, *, stats: bool = True, hist: bool = False, dump: bool = False,
               metadata: bool = False, pattern: str | None = None) -> list[str]:
    """Everything asked for, case by case (those whose label contains ``pattern``)."""
    cases = [c for c in results.cases if pattern is None or pattern in c.label]
    lines: list[str] = []
    if metadata:
        lines += metadata_lines(results)
    for case in cases:
        if lines:
            lines.append("")
        if stats:
            lines += stats_lines(case)
        if hist:
            if not stats:
                lines.append(f"{case.label}:")
            lines += histogram_lines(case.values(), case.unit)
        if dump:
            lines += dump_lines(case)[0 if not (stats or hist) else 1:]
    return lines
