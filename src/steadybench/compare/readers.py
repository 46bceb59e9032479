"""Reading the samples to compare: plain files, CSV columns, steadybench results, hyperfine and
pyperf JSON exports.

Each :class:`Sample` has its raw values and its **per-execution values**, the unit of the
comparison: from a steadybench results file, one value per worker process (``processes``; a case
measured in one process has one); from pyperf, the mean of each worker process; from plain, CSV
and hyperfine files, the values themselves (one per execution of a program: hyperfine starts a
process per run) and from ``steadybench exec`` results, which start a process per run too. The
headline of a steadybench case is its
:class:`~steadybench.model.estimate.Estimate` (``Sample.estimate``), the figure the run showed.

Every reader returns a :class:`SampleSet`: one :class:`Sample` per benchmark, keyed like
:attr:`steadybench.model.results.CaseResult.key` (name, implementation, parameters), so two sets
are matched benchmark by benchmark. Bad input raises :class:`SampleFormatError` naming the file
and, for text files, the line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SampleFormatError
from ..fileio import content_lines, read_user_text
from ..model.estimate import Estimate
from ..model.execution import execution_values
from ..model.results import Results
from .median import median
from .samples import Sample, SampleSet

__all__ = ["Sample", "SampleFormatError", "SampleSet", "read_samples"]


def _check_value(value: float, where: str) -> float:
    if math.isnan(value):
        raise SampleFormatError(f"{where}: NaN is not a valid time")
    if math.isinf(value):
        raise SampleFormatError(f"{where}: infinity is not a valid time")
    if value < 0:
        raise SampleFormatError(f"{where}: negative time {value:g}")
    return value


def _parse_number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SampleFormatError(f"{where}: not a number: {text!r}") from None
    return _check_value(value, where)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_csv(path: Path, lines: list[tuple[int, str]], column: str | None) -> np.ndarray:
    body = "\n".join(line for _, line in lines)
    try:
        dialect = csv.Sniffer().sniff(body.splitlines()[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(body), dialect))
    header: list[str] | None = None
    if rows and not all(_is_number(cell.strip()) for cell in rows[0] if cell.strip()):
        header = [cell.strip() for cell in rows[0]]
    width = len(rows[0])
    if column is None:
        if width != 1:
            names = ", ".join(header) if header else f"{width} unnamed columns"
            raise SampleFormatError(f"{path}: CSV file has {width} columns ({names}): choose one "
                                    "with --column NAME or --column NUMBER (1-based)")
        index = 0
    elif header is not None and column in header:
        index = header.index(column)
    elif column.isdigit() and 1 <= int(column) <= width:
        index = int(column) - 1
    else:
        have = ", ".join(header) if header else f"{width} unnamed columns"
        raise SampleFormatError(f"{path}: no column {column!r} (has {have})")
    values = []
    start = 1 if header is not None else 0
    for (number, _), row in zip(lines[start:], rows[start:]):
        where = f"{path}:{number}"
        if index >= len(row) or not row[index].strip():
            raise SampleFormatError(f"{where}: no value in column {index + 1}")
        values.append(_parse_number(row[index].strip(), where))
    return np.asarray(values, dtype=float)


def read_sample_text(path: Path, text: str, column: str | None = None) -> SampleSet:
    """A plain sample file (one time per line) or one column of a CSV file."""
    lines = content_lines(text)
    if not lines:
        raise SampleFormatError(f"{path}: no samples (the file is empty or only comments)")
    is_csv = column is not None or path.suffix.lower() in (".csv", ".tsv") or any(
        sep in lines[0][1] for sep in (",", ";", "\t"))
    if is_csv:
        values = _read_csv(path, lines, column)
        kind = "csv"
    else:
        values = np.asarray([_parse_number(line, f"{path}:{number}") for number, line in lines])
        kind = "plain"
    if values.size == 0:
        raise SampleFormatError(f"{path}: no samples")
    return SampleSet(str(path), kind, [Sample(path.stem, values, source=str(path))])


def _metric_sample(path: Path, case: Any, metric: str) -> Sample | str:
    """The values of another recorded metric (``energy``, ``cpu_time``...) of one case, or why
    there are none. Per execution: the median of each worker process's successful runs (the
    processes' run counts split the column), or of all runs for a case measured in one."""
    column = case.metrics.get(metric)
    if column is None:
        return f"no {metric} recorded"
    ok = [v for v, status in zip(column, case.status) if status == "ok"]
    values = np.asarray([v for v in ok if not math.isnan(v)], dtype=float)
    if values.size == 0:
        return f"no {metric} value in the successful runs"
    unit = case.units.get(metric, "")
    if case.method == "exec" and len(case.processes) <= 1:
        return Sample(case.benchmark, values, case.implementation, dict(case.params), unit,
                      None, str(path), None, unit_name="runs (one process each)")
    counts = [p.n for p in case.processes]
    per: list[float] = []
    if counts and sum(counts) == len(ok):
        start = 0
        for n in counts:
            chunk = [v for v in ok[start:start + n] if not math.isnan(v)]
            start += n
            if chunk:
                per.append(median(chunk))
    if not per:
        per = [median(values)]
    return Sample(case.benchmark, values, case.implementation, dict(case.params), unit,
                  np.asarray(per, dtype=float), str(path), None, unit_name="executions")


def _from_results(path: Path, results: Results, metric: str | None = None) -> SampleSet:
    samples, skipped = [], []
    if metric is not None and metric != "wall_time":
        for case in results.cases:
            got = _metric_sample(path, case, metric)
            if isinstance(got, str):
                skipped.append(f"{path}: {case.label}: skipped ({got})")
            else:
                samples.append(got)
        return SampleSet(str(path), "steadybench", samples, environment=results.environment,
                         results=results, skipped=skipped)
    for case in results.cases:
        estimate = Estimate.from_dict(case.estimate)
        processes = execution_values(case.processes)
        values = case.samples
        if len(case.processes) <= 1 and case.method == "exec" and values:
            # steadybench exec starts a process per run (as hyperfine does)
            samples.append(Sample(case.benchmark, np.asarray(values, dtype=float),
                                  case.implementation, dict(case.params), case.unit, None,
                                  str(path), estimate, unit_name="runs (one process each)",
                                  one_invocation=True, cpu_pressure=case.cpu_pressure))
            continue
        if not case.processes:  # measured in one process: one execution
            if estimate is not None and estimate.ok:
                processes = [float(estimate.value)]
            elif values:
                processes = [median(values)]
        if not values and not processes:
            why = "no successful runs" if case.keep_samples else "raw samples were not kept"
            skipped.append(f"{path}: {case.label}: skipped ({why})")
            continue
        samples.append(Sample(case.benchmark, np.asarray(values or [], dtype=float),
                              case.implementation, dict(case.params), case.unit,
                              np.asarray(processes, dtype=float), str(path), estimate,
                              unit_name="executions", one_invocation=True,
                              cpu_pressure=case.cpu_pressure))
    return SampleSet(str(path), "steadybench", samples, environment=results.environment,
                     results=results, skipped=skipped)


def _checked_list(values: Any, where: str) -> np.ndarray:
    if not isinstance(values, list):
        raise SampleFormatError(f"{where}: expected a list of times")
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise SampleFormatError(f"{where}[{i}]: not a number: {v!r}")
        out.append(_check_value(float(v), f"{where}[{i}]"))
    return np.asarray(out, dtype=float)


def _from_hyperfine(path: Path, data: dict[str, Any]) -> SampleSet:
    """hyperfine ``--export-json``: ``results[i].command`` and ``results[i].times`` (seconds)."""
    samples = []
    for i, entry in enumerate(data["results"]):
        if not isinstance(entry, dict) or "times" not in entry:
            raise SampleFormatError(f"{path}: results[{i}] has no 'times' (export with a "
                                    "hyperfine version that writes them)")
        name = str(entry.get("command", f"command {i + 1}"))
        params = entry.get("parameters") or {}
        samples.append(Sample(name, _checked_list(entry["times"], f"{path}: results[{i}].times"),
                              params=dict(params) if isinstance(params, dict) else {},
                              source=str(path), unit_name="runs (one process each)"))
    if not samples:
        raise SampleFormatError(f"{path}: hyperfine export with no results")
    return SampleSet(str(path), "hyperfine", samples)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SampleFormatError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _from_pyperf(path: Path, data: dict[str, Any]) -> SampleSet:
    """pyperf JSON: each run (a worker process) holds ``values``; calibration runs have none.

    Each worker process is an independent unit: its mean is a per-process estimate.
    """
    top_meta = _object(data.get("metadata") or {}, f"{path}: metadata")
    samples = []
    for i, bench in enumerate(data.get("benchmarks") or []):
        bench = _object(bench, f"{path}: benchmarks[{i}]")
        meta = {**top_meta, **_object(bench.get("metadata") or {}, f"{path}: benchmarks[{i}]"
                                                                     ".metadata")}
        name = str(meta.get("name", f"benchmark {i + 1}"))
        values: list[float] = []
        processes: list[float] = []
        for j, run in enumerate(bench.get("runs") or []):
            run_values = _object(run, f"{path}: benchmarks[{i}].runs[{j}]").get("values")
            if not run_values:
                continue  # calibration run
            arr = _checked_list(run_values, f"{path}: benchmarks[{i}].runs[{j}].values")
            values.extend(arr.tolist())
            processes.append(float(arr.mean()))
        unit = meta.get("unit", "second")
        samples.append(Sample(name, np.asarray(values, dtype=float),
                              unit="s" if unit == "second" else str(unit),
                              per_execution=np.asarray(processes, dtype=float),
                              source=str(path), unit_name="processes (pyperf)"))
    if not samples:
        raise SampleFormatError(f"{path}: pyperf file with no benchmarks")
    return SampleSet(str(path), "pyperf", samples)


def _imported(path: Path, data: Any) -> SampleSet | None:
    """pytest-benchmark JSON and asv result files (:mod:`steadybench.formats`): one execution
    per benchmark, read through the steadybench results they convert to."""
    from ..formats.asv import is_asv, read_asv
    from ..formats.pytest_benchmark import is_pytest_benchmark, read_pytest_benchmark

    if is_pytest_benchmark(data):
        kind, results = "pytest-benchmark", read_pytest_benchmark(path, data)
    elif is_asv(data):
        kind, results = "asv", read_asv(path, data)
    else:
        return None
    sset = _from_results(path, results)
    sset.kind = kind
    sset.skipped.extend(results.context.get("skipped") or [])
    return sset


def read_samples(path: str | os.PathLike[str], column: str | None = None,
                 metric: str | None = None) -> SampleSet:
    """Read any supported input; the format is recognised from the content. ``metric`` picks
    another metric a steadybench results file recorded per run (a meter's name, e.g.
    ``energy``); the default is the time."""
    p = Path(path)
    text = read_user_text(p, SampleFormatError)
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SampleFormatError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise SampleFormatError(f"{p}: JSON nested too deeply to read") from None
        except ValueError as exc:  # e.g. an integer with too many digits
            raise SampleFormatError(f"{p}: not valid JSON ({exc})") from None
        if isinstance(data, dict) and "schema_version" in data and "benchmarks" in data:
            from ..output.results_io import check_results_data, results_from_data

            if metric is None or metric == "wall_time":
                from .lean import lean_samples

                check_results_data(data, str(p))
                return lean_samples(p, data, text)
            results = results_from_data(data, str(p))
            del data  # the Results from here, not the document too
            return _from_results(p, results, metric)
        imported = _imported(p, data)
        if imported is not None:
            return imported
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return _from_hyperfine(p, data)
        if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
            return _from_pyperf(p, data)
        raise SampleFormatError(f"{p}: JSON file is neither steadybench results nor a hyperfine, "
                                "pyperf, pytest-benchmark or asv file")
    if metric is not None and metric != "wall_time":
        raise SampleFormatError(f"{p}: --metric {metric} needs a steadybench results file (this "
                                "one holds plain values)")
    return read_sample_text(p, text, column)
