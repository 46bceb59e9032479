"""What the writers share: each case's label and headline, in nanoseconds for times."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..model.estimate import Estimate
from ..model.results import CaseResult, Results


@dataclass(frozen=True)
class Headline:
    """One case as the dashboards see it: the label, the value and its interval in ``unit``."""

    label: str
    value: float
    low: float | None
    high: float | None
    unit: str
    estimate: Estimate
    case: CaseResult


def case_label(case: CaseResult) -> str:
    from ..model.labels import case_label as label

    return label(case.benchmark, case.implementation, dict(case.params))


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def headlines(results: Results, time_unit: str = "ns") -> Iterator[Headline]:
    """Every case with a value; times converted from seconds to ``time_unit`` (ns, us, ms, s)."""
    factor = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}[time_unit]
    for case in results.cases:
        est = Estimate.from_dict(case.estimate)
        if est is None or not est.ok or est.value is None:
            continue
        scale = factor if est.unit == "s" else 1.0
        unit = time_unit if est.unit == "s" else est.unit
        low, high = _finite(est.ci_low), _finite(est.ci_high)
        yield Headline(case_label(case), est.value * scale,
                       None if low is None else low * scale,
                       None if high is None else high * scale, unit, est, case)


def slug(text: str) -> str:
    """A measure name Bencher accepts as a slug: lower case, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "value"


def one_execution_estimate(values: list[float], unit: str, statistic: str,
                           ci: tuple[float | None, float | None] = (None, None),
                           confidence: float | None = None, method: str = "") -> Estimate:
    """The headline of a result measured in one process by another tool: the value it states,
    at the ``runs`` level (its interval, when given, describes that one process only)."""
    ordered = sorted(values)
    value = ordered[len(ordered) // 2] if len(ordered) % 2 else \
        (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    return Estimate(value=value, ci_low=ci[0], ci_high=ci[1], confidence=confidence, unit=unit,
                    method=method, statistic=statistic, level="runs", n_executions=1,
                    n_runs=len(values))


def imported_case(name: str, values: list[float], estimate: Estimate,
                  extra: dict | None = None, params: dict | None = None) -> CaseResult:
    """A steadybench case holding another tool's raw values and headline."""
    case = CaseResult(name, name, dict(params or {}), unit=estimate.unit,
                      method=estimate.method or "imported")
    for v in values:
        case.add_run("ok", {"wall_time": float(v)})
        case.accumulate({"wall_time": float(v)})
    case.estimate = estimate
    case.stop_reason = "imported"
    case.extra = dict(extra or {})
    return case
