"""asv (airspeed velocity) result files, read into ``compare`` and the history.

An asv result file (``results/<machine>/<commit>-<environment>.json``, API version 2; asv's
``asv/results.py`` ``Results.save``) holds ``commit_hash``, ``date`` (milliseconds since the
epoch), ``params`` (the machine and environment), ``result_columns`` (the names of the columns
of each row: ``result``, ``params``, ``version``, ``started_at``, ``duration``,
``stats_ci_99_a``, ``stats_ci_99_b``, ``stats_q_25``, ``stats_q_75``, ``stats_number``,
``stats_repeat``, ``samples``, ``profile``; trailing empty columns are dropped) and ``results``:
one row per benchmark. A parameterised benchmark has one entry per combination of its
parameters (the Cartesian product of the ``params`` lists, in order) in ``result``, the
``stats_*`` columns and ``samples``.

Times are seconds. asv's samples of one result are pooled over its processes without saying
which came from which, so a result is read as one execution (its value, with asv's 99%
interval ``stats_ci_99_a``..``stats_ci_99_b`` at the ``runs`` level).
"""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..model.results import Results
from .common import imported_case, one_execution_estimate


def is_asv(data: Any) -> bool:
    return (isinstance(data, dict) and isinstance(data.get("results"), dict)
            and isinstance(data.get("result_columns"), list))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _column(row: list[Any], columns: list[str], name: str) -> Any:
    return row[columns.index(name)] if name in columns and columns.index(name) < len(row) \
        else None


def read_asv(path: str | Path, data: dict[str, Any]) -> Results:
    """An asv result file as steadybench results: one case per benchmark and parameter
    combination; failed or skipped entries (``null``/NaN) are left out and listed in
    ``context["skipped"]``."""
    from ..errors import SampleFormatError

    columns = [str(c) for c in data["result_columns"]]
    if "result" not in columns:
        raise SampleFormatError(f"{path}: asv result file without a 'result' column")
    machine = data.get("params") if isinstance(data.get("params"), dict) else {}
    created = ""
    if _number(data.get("date")) is not None:
        created = datetime.fromtimestamp(float(data["date"]) / 1000.0, UTC).isoformat(
            timespec="seconds")
    results = Results(suite=f"asv {Path(path).name}", created=created, environment={
        "hostname": machine.get("machine"), "cpu_model": machine.get("cpu"),
        "cpu_count": machine.get("num_cpu"), "machine": machine.get("arch"),
        "system": machine.get("os"),
        "python": {"implementation": "CPython", "version": machine.get("python")},
        "source": "asv"})
    skipped: list[str] = []
    results.context = {"imported_from": "asv", "env_name": data.get("env_name"),
                       "git": {"commit": data.get("commit_hash"), "branch": None,
                               "dirty": None}, "skipped": skipped}
    for name, row in data["results"].items():
        if not isinstance(row, list):
            raise SampleFormatError(f"{path}: results[{name!r}] is not a list")
        values = _column(row, columns, "result")
        params = _column(row, columns, "params") or []
        combos = list(itertools.product(*params)) if params else [()]
        values = values if isinstance(values, list) else [values]
        ci_a = _column(row, columns, "stats_ci_99_a") or [None] * len(values)
        ci_b = _column(row, columns, "stats_ci_99_b") or [None] * len(values)
        samples = _column(row, columns, "samples") or [None] * len(values)
        for k, value in enumerate(values):
            combo = combos[k] if k < len(combos) else ()
            label = f"{name}({', '.join(str(c) for c in combo)})" if combo else str(name)
            v = _number(value)
            if v is None:
                skipped.append(f"{path}: {label}: no result (failed or skipped in asv)")
                continue
            raw = samples[k] if k < len(samples) and isinstance(samples[k], list) else None
            vals = [x for x in (_number(s) for s in raw or []) if x is not None] or [v]
            low = _number(ci_a[k]) if k < len(ci_a) else None
            high = _number(ci_b[k]) if k < len(ci_b) else None
            est = one_execution_estimate(vals, "s", "asv result", (low, high),
                                         0.99 if low is not None else None, "asv")
            est = type(est)(**{**est.to_dict(), "value": v, "fields": {}})
            results.cases.append(imported_case(label, vals, est,
                                               extra={"asv_name": name,
                                                      "asv_params": list(combo)}))
    if not results.cases:
        raise SampleFormatError(f"{path}: asv result file with no usable result")
    return results
