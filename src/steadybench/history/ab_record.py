"""An ``ab`` comparison as steadybench results, so ``ab --history`` records both variants.

Each variant becomes one case whose executions are its rounds' executions (each a fresh
process); its headline is the centre of those values with the interval across them
(:func:`steadybench.stats.summary.across_executions`, as ``run`` makes it). The verdict of the
comparison is kept in the results' context.
"""

from __future__ import annotations

from typing import Any

from ..model.estimate import LEVEL_EXECUTIONS, LEVEL_RUNS, Estimate
from ..model.execution import Execution
from ..model.results import CaseResult, Results


def results_from_ab(res: Any, command: str | None = None) -> Results:
    from ..environment import capture_environment
    from ..stats.summary import across_executions

    confidence = res.settings.confidence
    cases = []
    names = {label: str((res.variants.get(label) or {}).get("description") or label)
             for label in ("A", "B")}
    if names["A"] == names["B"]:  # the same code twice (an A/A check): keep them apart
        names = {label: f"{name} ({label})" for label, name in names.items()}
    for label in ("A", "B"):
        info = res.variants.get(label) or {}
        name = names[label]
        values = [float(r.outcomes[label].value) for r in res.rounds
                  if label in r.outcomes and r.outcomes[label].value is not None
                  and r.outcomes[label].value > 0]
        if not values:
            continue
        spread = across_executions(values, confidence)
        case = CaseResult(name, name, {}, unit="s", method="ab")
        for v in values:
            case.add_run("ok", {"wall_time": v})
            case.accumulate({"wall_time": v})
        case.processes = [Execution(index=i, value=v) for i, v in enumerate(values)]
        case.estimate = Estimate(
            value=spread.centre, ci_low=spread.low, ci_high=spread.high, confidence=confidence,
            unit="s", method="ab", statistic=f"{spread.statistic} of executions",
            level=LEVEL_EXECUTIONS if len(values) >= 2 else LEVEL_RUNS,
            n_executions=len(values), n_runs=len(values), between_cov=spread.cov,
            fields={"variant": label, "revision": info.get("revision")})
        case.stop_reason = res.reason or "ab"
        cases.append(case)
    return Results(suite="ab", cases=cases, environment=capture_environment(),
                   context={"command": command, "ab_verdict": res.verdict,
                            "interrupted": bool(res.interim)}, interrupted=bool(res.interim))
