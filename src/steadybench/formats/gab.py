"""github-action-benchmark's ``customSmallerIsBetter`` input: a JSON array of
``{name, unit, value, range?, extra?}``.

Field names and types follow the action's own parser (``src/extract.ts``, the zod object
``BenchmarkResult``: ``name`` string, ``value`` number, ``unit`` string, optional ``range`` and
``extra`` strings). Times are in nanoseconds; ``range`` is the half-width of the confidence
interval ("± 12.3"), and ``extra`` says what the interval stands on (the action shows it in the
chart's tooltip).
"""

from __future__ import annotations

import json
from typing import Any

from ..model.results import Results
from .common import headlines


def to_gab(results: Results) -> list[dict[str, Any]]:
    out = []
    for h in headlines(results, "ns"):
        entry: dict[str, Any] = {"name": h.label, "unit": h.unit, "value": h.value}
        est = h.estimate
        if h.low is not None and h.high is not None:
            entry["range"] = f"± {(h.high - h.low) / 2:.4g}"
            level = f"{est.confidence:.0%} " if est.confidence else ""
            basis = (f"across {est.n_executions} executions" if est.independent
                     else "one execution (samples of one process)")
            entry["extra"] = (f"{level}CI [{h.low:.6g}, {h.high:.6g}] {h.unit}, {basis}; "
                              f"{est.statistic or est.method}")
        out.append(entry)
    return out


def to_gab_json(results: Results) -> str:
    return json.dumps(to_gab(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
