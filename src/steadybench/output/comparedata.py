"""Reading the JSON of ``steadybench compare`` defensively: one row per compared pair (name,
speedup, interval, verdict, p-value) and the suite's overall gain (Touati et al., seed 003,
§3). Pure Python; the report and the comparison figures use it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, Mapping):
        lo = _num(value.get("low", value.get("lo", value.get("ci_low"))))
        hi = _num(value.get("high", value.get("hi", value.get("ci_high"))))
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        lo, hi = _num(value[0]), _num(value[1])
    else:
        return None
    return (lo, hi) if lo is not None and hi is not None else None


def pair_summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Name, speedup, CI, verdict and p-value of one compared pair, read defensively.

    Reads the rows of ``steadybench compare --json`` (``name``, ``speedup`` = median ratio,
    ``speedup_ci`` = {low, high, confidence, method}, ``verdict``, ``p_value``, ``p_adjusted``,
    ``test``, ``confidence``) and a few spellings around them; missing keys give None.
    """
    name = next((str(entry[k]) for k in ("name", "label", "benchmark", "key") if entry.get(k)),
                "?")
    sp = entry.get("speedup")
    ci = None
    if isinstance(sp, Mapping):
        ci = _interval(sp.get("ci")) or _interval(sp)
        sp = sp.get("value", sp.get("median_ratio", sp.get("estimate")))
    speedup = _num(sp)
    for key in ("speedup_ci", "ci", "confidence_interval"):
        ci = ci or _interval(entry.get(key))
    if ci is None:
        ci = _interval((entry.get("ci_low"), entry.get("ci_high")))
    p = next((_num(entry[k]) for k in ("p_value", "pvalue", "p") if k in entry), None)
    verdict = entry.get("verdict")
    test = entry.get("test")
    return {"name": name, "speedup": speedup, "ci": ci, "p_value": p,
            "p_adjusted": _num(entry.get("p_adjusted")),
            "verdict": str(verdict) if verdict is not None else None,
            "test": str(test) if test else None,
            "confidence": _num(entry.get("confidence")),
            "warnings": [str(w) for w in entry.get("warnings") or [] if w]
            if isinstance(entry.get("warnings"), list) else []}


PAIR_KEYS = ("benchmarks", "pairs", "comparisons", "results", "cases")


def comparison_entries(comparison: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The raw per-pair entries of a comparison dict (``benchmarks`` in the compare JSON)."""
    if not isinstance(comparison, Mapping):
        return []
    for key in PAIR_KEYS:
        entries = comparison.get(key)
        if isinstance(entries, Sequence) and not isinstance(entries, str):
            return [e for e in entries if isinstance(e, Mapping)]
        if isinstance(entries, Mapping):
            return [{"name": k, **v} for k, v in entries.items() if isinstance(v, Mapping)]
    return []


def comparison_pairs(comparison: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The per-pair entries of a comparison dict, each through :func:`pair_summary`."""
    return [pair_summary(e) for e in comparison_entries(comparison)]


@dataclass(frozen=True)
class OverallGain:
    """A comparison's overall result on the plots' speedup scale: ``speedup`` (> 1: NEW is
    faster), the gain G when the comparison gives one, its interval ``ci`` when known,
    ``label`` (the statistic, or the key it was read from) and the interval's confidence."""

    speedup: float | None
    gain: float | None = None
    ci: tuple[float, float] | None = None
    label: str = ""
    confidence: float | None = None


def overall_gain(comparison: Mapping[str, Any] | None) -> OverallGain | None:
    """The suite's overall gain of a comparison dict, if present.

    In the compare JSON it is ``suite.gain.median.all`` = {gain G, speedup 1/(1−G)} (003 §3:
    G = 1 − Σ w·t(NEW) / Σ w·t(BASE)); other documents give an ``overall`` number or mapping.
    """
    if not isinstance(comparison, Mapping):
        return None
    suite = comparison.get("suite")
    if isinstance(suite, Mapping) and isinstance(suite.get("gain"), Mapping):
        gains = suite["gain"]
        for stat in ("median", "mean", "min"):
            entry = gains.get(stat)
            entry = entry.get("all") if isinstance(entry, Mapping) else None
            if isinstance(entry, Mapping) and _num(entry.get("gain")) is not None:
                g = _num(entry["gain"])
                sp = _num(entry.get("speedup"))
                if sp is None and g is not None and g < 1:
                    sp = 1.0 / (1.0 - g)
                return OverallGain(sp, g, None, stat, _num(suite.get("confidence")))
    for key in ("overall", "overall_gain", "gain"):
        value = comparison.get(key)
        if _num(value) is not None:
            return OverallGain(_num(value), label=key)
        if isinstance(value, Mapping):
            for vk in ("speedup", "value"):
                if _num(value.get(vk)) is not None:
                    return OverallGain(_num(value[vk]), _num(value.get("gain")),
                                       _interval(value.get("ci")), vk)
    return None
