"""What the HTML report works out from the results before it shows them: which cases are
compared (the one rule of :mod:`steadybench.output.groups`), the growth series of parameter
scans, the meters worth a time series, and which case a comparison row is about.

Statistics are not computed here: every ratio and interval comes from
:mod:`steadybench.output.relative` (through :mod:`~steadybench.output.groups`), the cases'
:class:`~steadybench.model.estimate.Estimate` and ``steadybench compare``'s document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..model.execution import execution_values
from ..model.results import PRIMARY_METRIC, CaseResult, Results
from . import plotdata as pd
from .format import case_estimate, format_params
from .groups import Comparison as VariantGroup
from .groups import comparisons
from .relative import Variant, relative_summary

#: methods whose cases are commands: at one parameter set, different commands are variants
COMMAND_METHODS = ("exec", "iters")


def variant_groups(cases: Sequence[CaseResult], confidence: float = 0.95
                   ) -> list[VariantGroup]:
    """The sets of variants of a result, each with its relations (fastest first): the rule of
    :mod:`steadybench.output.groups` (the console's), with the commands of an ``exec`` or
    ``iters`` result (each command its own benchmark) as the variants at one parameter set."""
    commands = bool(cases) and all(c.method in COMMAND_METHODS
                                   and c.benchmark == c.implementation for c in cases)
    out = comparisons(cases, confidence, commands=commands)
    if commands:  # the console leaves a comparison of commands without a heading
        from dataclasses import replace

        out = [replace(g, heading="commands" + g.heading) if not g.scan else g for g in out]
    return out


#: meters drawn per case at most (each its own time series), and the ones never drawn
MAX_METER_PLOTS = 6
UNDRAWN_METERS = ("timestamp", "loadavg")  # loadavg: drawn under the time series


def meter_metrics(case: CaseResult) -> list[str]:
    """The other metrics the case's meters recorded per run (energy, devfreq frequencies,
    temperatures...) that have at least one finite value: each gets a time series in the
    report, like the time (Rancid's Figs. 3–14 plot such meters against the runs)."""
    names = []
    for name, column in case.metrics.items():
        if name == PRIMARY_METRIC or name in UNDRAWN_METERS:
            continue
        if name == "exit_code" and not any(math.isfinite(v) and v != 0 for v in column):
            continue  # exec's exit codes: drawn only when one was not 0
        if any(math.isfinite(v) for v in column):
            names.append(name)
    return names[:MAX_METER_PLOTS]


def growth_plots(cases: Sequence[CaseResult]) -> list[tuple[str, list[pd.GrowthSeries]]]:
    """Growth series of a ``run`` whose benchmarks take a numeric parameter: per parameter,
    one series per (benchmark, implementation, other parameters) with ≥ 2 values of it."""
    points = []
    for case in cases:
        est = case_estimate(case)
        if est is None or not est.ok or case.errors:
            continue
        for name, x in pd.numeric_parameter(case.params):
            others = {k: v for k, v in case.params.items() if k != name}
            group = case.benchmark
            if case.implementation != case.benchmark:
                group += f"/{case.implementation}"
            if others:
                group += f" [{format_params(others)}]"
            points.append(pd.GrowthPoint(group, name, x, est.value, est.ci_low, est.ci_high))
    by_param: dict[str, list[pd.GrowthSeries]] = {}
    for param, series in pd.growth_groups(points):
        by_param.setdefault(param, []).append(series)
    return list(by_param.items())


def growth_text(series: pd.GrowthSeries) -> str | None:
    cx = series.complexity or {}
    if not cx.get("best"):
        return None
    coef = cx.get("coefficient")
    c = f" (c = {pd.format_value(float(coef))})" if isinstance(coef, int | float) else ""
    return f"{series.label}: time grows as {cx['best']}{c} over {series.x.size} values"


def headline_comparison(base: Results, new: Results, confidence: float = 0.95
                        ) -> dict[str, Any]:
    """Pairs matched by (benchmark, implementation, parameters), each BASE/NEW ratio of their
    headlines (each case's Estimate, the figure every output shows; never a ratio of pooled
    per-run medians) as :func:`steadybench.output.relative.relative_summary` computes it for
    the variants of one result: its interval from the independent executions when both sides
    have two or more, else from the estimates' intervals, else none.

    A fallback when no comparison from ``steadybench compare`` is given: no test and no p-value
    are made up here (those are ``compare``'s); the verdict column says so.
    """
    pairs = []
    new_cases = {case.key: case for case in new.cases}
    for b in base.cases:
        n = new_cases.get(b.key)
        if n is None:
            continue
        if b.unit != n.unit:  # seconds against instructions: no ratio means anything
            continue
        pair: dict[str, Any] = {"name": b.label, "key": list(b.key), "speedup": None,
                                "verdict": "ratio of the headlines only (use steadybench "
                                           "compare for a test)"}
        eb, en = case_estimate(b), case_estimate(n)
        relations = relative_summary([Variant("BASE", eb, _executions(b)),
                                      Variant("NEW", en, _executions(n))], confidence) \
            if eb is not None and en is not None else []
        if relations:
            r = relations[0]  # the slower's time over the faster's
            if r.fastest == "NEW":
                pair["speedup"], low, high = r.ratio, r.low, r.high
            else:
                pair["speedup"] = 1.0 / r.ratio
                low, high = ((1.0 / r.high, 1.0 / r.low) if r.low and r.high
                             else (None, None))
            if low is not None and high is not None:
                pair["speedup_ci"] = {"low": low, "high": high, "confidence": confidence,
                                      "method": f"from the {r.basis}"}
        pairs.append(pair)
    return {"kind": "headline-ratio", "pairs": pairs}


def _executions(case: CaseResult) -> list[float] | None:
    values = execution_values(case.processes)
    return values if len(values) >= 2 else None


def match_case(cases: Sequence[CaseResult], entry: Mapping[str, Any], name: str
               ) -> CaseResult | None:
    """The case a comparison row is about: by (benchmark, implementation, parameters), else by
    label or name."""
    if entry.get("benchmark") is not None:
        params = entry.get("params") if isinstance(entry.get("params"), Mapping) else {}
        key = (str(entry["benchmark"]), str(entry.get("implementation") or entry["benchmark"]),
               ",".join(f"{k}={v}" for k, v in params.items()))
        for case in cases:
            if case.key == key:
                return case
    key = entry.get("key")
    if isinstance(key, Sequence) and not isinstance(key, str) and len(key) == 3:
        for case in cases:
            if list(case.key) == [str(k) for k in key]:
                return case
    for case in cases:
        if name in (case.label, case.benchmark):
            return case
    return None
