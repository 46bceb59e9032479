"""The one merge: executions pooled into one case, each with its typed record.

The pooled case holds every execution's runs (statuses and metrics concatenated, streaming
statistics merged) so processors, tables and plots work as for one execution; its
``processes`` lists one :class:`~steadybench.model.execution.Execution` per execution, whose
``value`` is that execution's own estimate (its median, slope, mean...), made here with the
execution's calibrated method at the case's confidence level.
:func:`steadybench.methods.base.build_estimate` then makes the headline across executions
(Kalibera & Jones, ISMM 2013, §3).
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..model.execution import Execution
from ..model.results import CaseResult
from .backend import Outcome


def merge_executions(merged: CaseResult, outcomes: Sequence[Outcome], planned: int, *,
                     method: Any = None, confidence: float = 0.95,
                     isolation: str = "spawned worker processes",
                     hard_limits: Mapping[str, Any] | None = None) -> CaseResult:
    """Pool ``outcomes`` into ``merged`` (appending: merging one execution at a time works)
    and list one record per execution; ``method`` makes the estimate of an execution that
    brought none of its own (None: the mean, as ``exec`` reports)."""
    from ..processors.base import finalize_case

    tracebacks = merged.extra.setdefault("tracebacks", [])
    for outcome in outcomes:
        case = outcome.case
        if outcome.error and outcome.error not in merged.errors:
            merged.errors.append(outcome.error)  # which execution: see case.processes
            entry = {"error": outcome.error, "frames": outcome.frames}
            if outcome.frames and entry not in tracebacks:
                tracebacks.append(entry)
        if case is None:
            merged.processes.append(execution_record(outcome, None))
            continue
        _append_runs(merged, case)
        for name, acc in case.stream.items():
            mine = merged.stream.get(name)
            merged.stream[name] = acc if mine is None else mine.merge(acc)
        merged.units.update(case.units)
        for text in case.warnings:
            if text not in merged.warnings:
                merged.warnings.append(text)
        for text in case.errors:
            if text not in merged.errors:
                merged.errors.append(text)
        for item in case.extra.get("tracebacks", []):
            if item not in tracebacks:
                tracebacks.append(item)
        _merge_costs(merged, case)
        merged.interrupted = merged.interrupted or case.interrupted
        # The execution's case is not used after this: its own estimate is made on it.
        own_method = outcome.method if outcome.method is not None else method
        if own_method is not None or case.estimate is None:
            try:
                finalize_case(case, (), own_method, confidence)
            except Exception as exc:  # the estimate is informative; the raw runs still count
                case.errors.append(f"{type(exc).__name__}: {exc}")
        merged.processes.append(execution_record(outcome, case))
        if outcome.method is not None and hasattr(outcome.method, "options"):
            merged.extra.setdefault("method_options", []).append(outcome.method.options())
    if not tracebacks:
        merged.extra.pop("tracebacks", None)
    done = sum(1 for record in merged.processes if record.n > 0)
    records = merged.processes
    if planned == 1 and len(records) == 1 and records[0].stop_reason:
        merged.stop_reason = records[0].stop_reason  # one execution: its own reason
    else:
        merged.stop_reason = f"{done} of {planned} executions" + summarize_reasons(
            [record.stop_reason for record in records])
    merged.extra["executions"] = {"planned": planned, "completed": done, "isolation": isolation}
    if hard_limits is not None:
        merged.extra["hard_limits"] = dict(hard_limits)
    return merged


def execution_record(outcome: Outcome, own: CaseResult | None) -> Execution:
    """The typed record of one execution, from its outcome and its finished case."""
    est = own.estimate if own is not None else None
    figures: dict[str, float] = {}
    if est is not None:
        for name in getattr(outcome.method, "execution_figures", ()):
            figure = est.figure(name)
            if isinstance(figure, int | float) and not isinstance(figure, bool):
                figures[name] = figure
    within = None
    if est is not None and est.within_cov is not None:
        within = est.within_cov
    elif own is not None:
        within = own.stats.get("cov")
    return Execution(
        index=outcome.index,
        value=est.value if est is not None and est.ok else None,
        ci_low=est.ci_low if est is not None else None,
        ci_high=est.ci_high if est is not None else None,
        confidence=est.confidence if est is not None else None,
        within_cov=within,
        n=own.n if own is not None else 0,
        calls_per_sample=est.figure("executions") if est is not None else None,
        stop_reason=own.stop_reason if own is not None else "",
        interrupted=outcome.interrupted or (own is not None and own.interrupted),
        error=outcome.error,
        layout=outcome.layout,
        spread=outcome.spread,
        host=outcome.host,
        counts=outcome.counts,
        figures=figures,
    )


def summarize_reasons(reasons: Sequence[str]) -> str:
    """Why the executions stopped, in one short clause: each distinct rule once, with how many
    executions it stopped. A reason's measured value ("CoV 2.51% <= 3.00%") differs in every
    execution, so it is left out of the summary ("CoV <= 3.00%"); each execution's own reason
    stays in its record."""
    counts = Counter(_MEASURED.sub("<= ", r) for r in reasons if r)
    if not counts:
        return ""
    if len(counts) == 1:
        return f"; each: {next(iter(counts))}"
    return "; " + ", ".join(f"{rule} ({n})" for rule, n in counts.most_common())


#: the measured figure before a stop rule's threshold: "2.51% <= " in "CoV 2.51% <= 3.00%"
_MEASURED = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?%? <= ")


def _merge_costs(merged: CaseResult, case: CaseResult) -> None:
    """Add up what the per-run countermeasures cost in each execution (cool-down, warm-up...:
    ``extra["machine"]["costs"]``, :func:`steadybench.system.actions._cost`)."""
    costs = case.extra.get("machine", {}).get("costs")
    if not isinstance(costs, dict):
        return
    into = merged.extra.setdefault("machine", {}).setdefault("costs", {})
    for name, cost in costs.items():
        have = into.setdefault(name, {"time_s": 0.0, "rounds": 0, "runs": 0, "max_s": 0.0})
        have["time_s"] = round(have["time_s"] + cost.get("time_s", 0.0), 9)
        have["rounds"] += cost.get("rounds", 0)
        have["runs"] += cost.get("runs", 0)
        have["max_s"] = max(have["max_s"], cost.get("max_s", 0.0))


def _append_runs(merged: CaseResult, case: CaseResult) -> None:
    if not (merged.keep_samples and case.keep_samples):
        return
    before = len(merged.status)
    added = len(case.status)
    if added:  # where each execution's runs begin in the pooled columns (the plots' bounds)
        merged.extra.setdefault("execution_starts", []).append(before)
    merged.status.extend(case.status)
    merged.outlier.extend(case.outlier)
    for name in set(merged.metrics) | set(case.metrics):
        column = merged.metrics.get(name)
        if column is None:
            column = merged.metrics[name] = array("d", [math.nan]) * before
        other = case.metrics.get(name)
        column.extend(other if other is not None else array("d", [math.nan]) * added)
