"""The times of a results file are checked as it is read (issue 27 item 15).

NaN, infinite, negative, text, true/false and null times used to be read as they were:
``compare`` then printed "1.000× faster" from the stored estimate, ``report`` failed with an
internal error on 1e308. A time that no measurement gives is refused in one line naming the
benchmark, the field and the value. Only the fields that hold times are checked (the
per-run samples, the ``wall_time`` of the runs, the location statistics and the estimate); a
failed run's ``null`` in the runs table and an undefined estimate (``null``) are allowed, and
so are negative times where ``exec`` took the shell's start-up off (its ``calibration``
says what it subtracted; ``wall_time_raw`` keeps the raw times).
"""

from __future__ import annotations

import math
from typing import Any

#: longest time accepted in seconds (about 116 days): no benchmark measures more, and 1e308
#: breaks every figure drawn from it
MAX_SECONDS = 1e7
#: statistics of ``stats`` that are times (others, such as skewness, may be negative)
TIME_STATS = ("mean", "median", "min", "max", "q1", "q3", "stdev", "iqr", "mad")


def _bad(value: Any, limit: float | None, nullable: bool, signed: bool = False) -> str | None:
    """Why ``value`` is not a time, or None when it is one."""
    if value is None:
        return None if nullable else "null"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{type(value).__name__} {value!r}"[:80]
    if not math.isfinite(value):
        return repr(float(value))
    if value < 0 and not signed:
        return f"negative ({value:g})"
    if limit is not None and abs(value) > limit:
        return f"{value:g} s, longer than {limit:g} s"
    return None


def time_problem(entry: dict[str, Any]) -> str | None:
    """The first field of one benchmark entry (a ``benchmarks[i]`` object of a results file)
    that does not hold a time, as ``"field[i] is …"``; None when all do."""
    unit = entry.get("unit")
    limit = MAX_SECONDS if unit in (None, "s") else None
    runs = entry.get("runs")
    metrics = runs.get("metrics") if isinstance(runs, dict) else None
    metrics = metrics if isinstance(metrics, dict) else {}
    # exec's times with the shell's start-up taken off (its calibration says what was
    # subtracted; the raw times are kept beside them) may be a little negative for a command
    # that does nothing; the raw times may not
    extra = entry.get("extra")
    calibration = extra.get("calibration") if isinstance(extra, dict) else None
    corrected = isinstance(calibration, dict) and bool(calibration.get("subtracted"))
    samples = entry.get("samples")
    if isinstance(samples, list):
        for k, value in enumerate(samples):
            why = _bad(value, limit, nullable=False, signed=corrected)
            if why:
                return f"samples[{k}] is {why}"
    for name, signed in (("wall_time", corrected), ("wall_time_raw", False)):
        values = metrics.get(name)
        if isinstance(values, list):
            for k, value in enumerate(values):
                why = _bad(value, MAX_SECONDS, nullable=True, signed=signed)
                if why:
                    return f"runs.metrics.{name}[{k}] is {why}"
    stats = entry.get("stats")
    if isinstance(stats, dict):
        for key in TIME_STATS:
            why = _bad(stats.get(key), limit, nullable=True,
                       signed=corrected and key != "stdev")
            if why:
                return f"stats.{key} is {why}"
    estimate = entry.get("estimate")
    if isinstance(estimate, dict):
        for key, signed in (("value", corrected), ("ci_low", True), ("ci_high", True)):
            why = _bad(estimate.get(key), limit, nullable=True, signed=signed)
            if why:
                return f"estimate.{key} is {why}"
    return None
