"""Bencher Metric Format (BMF) JSON: ``{benchmark: {measure: {value, lower_value,
upper_value}}}``.

Field names and shape follow Bencher's published schema (``https://bencher.dev/bmf.json``,
"Bencher Metric Format" in Bencher's reference docs): ``value`` is required, ``lower_value`` and
``upper_value`` are optional numbers. Times go to the built-in ``latency`` measure, whose unit is
the nanosecond; ``lower_value``/``upper_value`` carry the estimate's confidence interval (so
Bencher's thresholds see steadybench's uncertainty). Other units go to a measure named after the
unit.
"""

from __future__ import annotations

import json
from typing import Any

from ..model.results import Results
from .common import headlines, slug


def to_bmf(results: Results) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for h in headlines(results, "ns"):
        measure = "latency" if h.unit == "ns" else slug(h.unit)
        metric: dict[str, float] = {"value": h.value}
        if h.low is not None and h.high is not None:
            metric["lower_value"] = h.low
            metric["upper_value"] = h.high
        out.setdefault(h.label, {})[measure] = metric
    return out


def to_bmf_json(results: Results) -> str:
    data: Any = to_bmf(results)
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
