"""``exec`` results in hyperfine's export formats (``--export-json``, ``--export-csv``,
``--export-markdown``), so hyperfine's scripts and the tools built around it read them.

The field names and meanings follow hyperfine's own source (sharkdp/hyperfine,
``src/benchmark/benchmark_result.rs``, ``src/export/json.rs``, ``csv.rs`` and ``markup.rs``):

* JSON: ``{"results": [{command, mean, stddev, median, user, system, min, max, times,
  memory_usage_byte, exit_codes, parameters}]}``; times in seconds; ``stddev`` null with fewer
  than two runs; ``user``/``system`` the mean CPU times; ``times``, ``exit_codes`` and
  ``memory_usage_byte`` one entry per measured run; ``parameters`` (name → value as text) only
  when there are any.
* CSV: ``command,mean,stddev,median,user,system,min,max`` then ``parameter_<name>`` columns.
* Markdown: ``| Command | Mean [unit] | Min [unit] | Max [unit] | Relative |`` with
  ``mean ± stddev`` and the ratio to the fastest (``1.00`` for it).

Like hyperfine's, the times are the wall-clock times of the runs with the process start-up
subtracted (hyperfine subtracts its shell's spawning time; steadybench the calibrated start-up
of a trivial process, unless ``--no-correction``). Failed and warm-up runs are left out, as
hyperfine leaves out its warm-up runs. Extra steadybench fields are not added: a reader written
for hyperfine sees only what it expects.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..fileio import atomic_write_text
from ..model.results import PRIMARY_METRIC, RUN_OK, CaseResult, Results
from ..output.sanitize import csv_text, terminal_text


def _mean(values: Sequence[float]) -> float:
    return float(statistics.fmean(values)) if values else 0.0


def _run_values(case: CaseResult, metric: str) -> list[float | None]:
    """One value per measured ok run of ``metric`` (None where it was not recorded)."""
    column = case.metrics.get(metric)
    out: list[float | None] = []
    for i, status in enumerate(case.status):
        if status != RUN_OK:
            continue
        value = column[i] if column is not None and i < len(column) else math.nan
        out.append(None if math.isnan(value) else float(value))
    return out


def result_entry(case: CaseResult) -> dict[str, Any]:
    """One element of hyperfine's ``results`` list for an ``exec`` case."""
    times = case.values(PRIMARY_METRIC)
    user = [v for v in _run_values(case, "user_time") if v is not None]
    system = [v for v in _run_values(case, "sys_time") if v is not None]
    codes = _run_values(case, "exit_code")
    entry: dict[str, Any] = {
        "command": case.benchmark,
        "mean": _mean(times),
        "stddev": float(statistics.stdev(times)) if len(times) >= 2 else None,
        "median": float(statistics.median(times)) if times else 0.0,
        "user": _mean(user),
        "system": _mean(system),
        "min": min(times) if times else 0.0,
        "max": max(times) if times else 0.0,
        "times": list(times),
    }
    rss = _run_values(case, "max_rss")
    if any(v is not None for v in rss):
        entry["memory_usage_byte"] = [int(v) if v is not None else 0 for v in rss]
    entry["exit_codes"] = [int(c) if c is not None else None for c in codes]
    if case.params:
        entry["parameters"] = {str(k): str(v) for k, v in sorted(case.params.items())}
    return entry


def to_json(results: Results) -> str:
    """hyperfine's JSON export of ``results``."""
    doc = {"results": [result_entry(c) for c in results.cases if c.n]}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def to_csv(results: Results) -> str:
    """hyperfine's CSV export (no per-run lists, as in hyperfine)."""
    entries = [result_entry(c) for c in results.cases if c.n]
    names = list(entries[0].get("parameters", {})) if entries else []
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["command", "mean", "stddev", "median", "user", "system", "min", "max",
                     *(f"parameter_{n}" for n in names)])
    for e in entries:  # text cells made inert: no escape sequence, no spreadsheet formula
        writer.writerow([csv_text(e["command"]), e["mean"], e["stddev"] or 0.0, e["median"],
                         e["user"], e["system"], e["min"], e["max"],
                         *(csv_text(e.get("parameters", {}).get(n, "")) for n in names)])
    return buf.getvalue()


_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))


def _unit(seconds: float) -> tuple[float, str]:
    for scale, name in _UNITS:
        if seconds >= scale:
            return scale, name
    return 1e-6, "µs"


def to_markdown(results: Results) -> str:
    """hyperfine's Markdown table: mean ± stddev, min, max in one unit (the fastest mean's),
    and the mean relative to the fastest."""
    from ..output.markdown import markdown_table

    align = ["left", "right", "right", "right", "right"]
    entries = [result_entry(c) for c in results.cases if c.n]
    if not entries:
        return markdown_table(["Command", "Mean", "Min", "Max", "Relative"], [], align)
    fastest = min(e["mean"] for e in entries)
    scale, unit = _unit(fastest)
    rows = []
    for e in entries:
        mean = f"{e['mean'] / scale:.1f}"
        if e["stddev"] is not None:
            mean += f" ± {e['stddev'] / scale:.1f}"
        rel = e["mean"] / fastest if fastest > 0 else math.nan
        rows.append([code_span(e["command"]), mean, f"{e['min'] / scale:.1f}",
                     f"{e['max'] / scale:.1f}", f"{rel:.2f}"])
    return markdown_table(["Command", f"Mean [{unit}]", f"Min [{unit}]", f"Max [{unit}]",
                           "Relative"], rows, align)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span in a table cell, as hyperfine writes commands: one line
    (line breaks become spaces), control characters shown escaped, ``|`` escaped (GFM tables),
    fenced with one backtick more than the longest run inside."""
    body = terminal_text(re.sub(r"\r\n|[\n\r]", " ", str(text))).replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


WRITERS = {"json": to_json, "csv": to_csv, "markdown": to_markdown}


def write_export(results: Results, fmt: str, path: str) -> None:
    """Write one hyperfine-format export (``-``: standard output), atomically."""
    text = WRITERS[fmt](results)
    if path == "-":
        import sys

        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(Path(path), text)
