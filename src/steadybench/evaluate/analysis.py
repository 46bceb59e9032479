"""From the executions of an evaluation to Tables 2 and 3, Figs. 15 and 16 and the level
flags (Rancid §VI), as one typed :class:`Evaluation` stored in ``Results.context["evaluate"]``.

Per case:

- **Table 3** (reproducibility, §VI-C): the median of each launch (its ok runs), then the
  median and standard deviation of those K medians per preset, and their reductions.
- **Table 2** (§VI-A): the median and standard deviation of the runs of the long execution of
  each preset. Without long executions (``--long 0``) the launches' runs are pooled in the
  order they ran instead, and ``source`` says so (``"pooled launches"``), since a pool of
  short executions mixes within- and between-execution spread.
- **Fig. 15**: the box of each preset's runs of the same series (quartiles, whiskers at the
  1st and 99th percentiles).
- **Fig. 16** (§VI-B): the running median relative to the *reference* and the running IQR
  relative to the running median, for each preset. The reference is the median of the managed
  preset's series, as the paper's is the median of two hours of its managed benchmarking.
- **Levels** (§VI-D): :func:`~steadybench.evaluate.levels.detect_levels` on every execution's
  runs; those with several levels are listed with the level values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model.results import CaseResult, Results
from ..output.format import COUNT_UNITS
from .levels import detect_levels
from .session import EvaluateOptions, ExecutionRecord, ScheduleItem, Unit, pool_cases
from .stats import (
    BoxStats,
    ComparisonRow,
    Evolution,
    box_stats,
    error_evolution,
    table2_row,
    table3_row,
)

SCHEMA = "steadybench-evaluate/1"


@dataclass
class LevelFlag:
    """An execution whose runs fall on several discrete levels."""

    preset: str
    series: str
    launch: int
    kind: str
    transitions: int
    levels: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class CaseEvaluation:
    """Everything the evaluation says about one benchmark case."""

    label: str
    benchmark: str
    implementation: str
    params: dict[str, Any]
    launches: dict[str, int]
    medians: dict[str, list[float]]
    table2: ComparisonRow | None
    table2_source: str
    table3: ComparisonRow | None
    boxes: dict[str, BoxStats | None]
    reference: float | None
    evolution: dict[str, Evolution]
    levels: list[LevelFlag]
    relation: str | None
    unit: str = "s"
    #: counts (``--measure``): what the presets did to the counts, in one line
    #: (:func:`steadybench.evaluate.counts.finding`)
    finding: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label, "benchmark": self.benchmark,
            "implementation": self.implementation, "params": self.params, "unit": self.unit,
            "launches": self.launches, "execution_medians": self.medians,
            "table2": None if self.table2 is None else
            {**self.table2.to_dict(), "source": self.table2_source},
            "table3": None if self.table3 is None else self.table3.to_dict(),
            "fig15": {k: (None if v is None else v.to_dict()) for k, v in self.boxes.items()},
            "fig16": {"reference": self.reference,
                      "reference_source": f"median of the managed {self.table2_source}",
                      **{k: v.to_dict() for k, v in self.evolution.items()}},
            "levels": [f.to_dict() for f in self.levels],
            "relation": self.relation, "finding": self.finding,
        }


@dataclass
class Evaluation:
    """The whole evaluation: settings, the schedule as run, each preset's record, the cases."""

    options: dict[str, Any]
    presets: dict[str, dict[str, Any]]
    schedule: list[dict[str, Any]]
    cases: list[CaseEvaluation] = field(default_factory=list)
    interrupted: bool = False
    executions_planned: int = 0
    executions_done: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "options": self.options, "presets": self.presets,
                "interrupted": self.interrupted,
                "executions": {"planned": self.executions_planned,
                               "done": self.executions_done},
                "schedule": self.schedule,
                "cases": [c.to_dict() for c in self.cases]}


def _options_record(options: EvaluateOptions) -> dict[str, Any]:
    return {"baseline": options.baseline, "managed": options.managed,
            "launches": options.launches, "runs": options.runs, "long": options.long_runs,
            "warmup": options.warmup, "order": options.order, "seed": options.seed,
            "highlight_abs_s": options.highlight_abs, "highlight_rel": options.highlight_rel,
            "time_limit_s": options.time_limit}


def _relation(pooled: dict[str, CaseResult], medians: dict[str, list[float]],
              confidence: float) -> str | None:
    from ..output.relative import Variant, summary_lines

    variants = [Variant(role, case.estimate, medians.get(role))
                for role, case in pooled.items() if case.estimate is not None]
    lines = summary_lines(variants, confidence)
    return lines[0] if lines else None


def _count_finding(medians: dict[str, list[float]], unit: str) -> str:
    from .counts import finding

    return finding(medians, unit)


def analyse(units: Sequence[Unit], records: Sequence[ExecutionRecord],
            schedule: Sequence[ScheduleItem], options: EvaluateOptions,
            presets: dict[str, dict[str, Any]], interrupted: bool = False
            ) -> tuple[Evaluation, list[CaseResult]]:
    """The evaluation of ``records``, and the cases for the results file: per case and preset,
    the launches pooled (one ``processes`` entry per launch) and the long execution."""
    from ..processors.base import finalize_case

    evaluation = Evaluation(_options_record(options), presets,
                            [{"position": r.position, "case": units[r.unit].label,
                              "preset": r.preset, "series": r.series, "launch": r.launch,
                              "started": r.started, "seconds": r.seconds,
                              "interrupted": r.case.interrupted,
                              "runs": r.case.n, "errors": list(r.case.errors),
                              "tuned": list((r.case.extra.get("machine") or {}).get("tuned")
                                            or [])} for r in records],
                            interrupted=interrupted, executions_planned=len(schedule),
                            executions_done=len(records))
    cases: list[CaseResult] = []
    roles = {"baseline": options.baseline, "managed": options.managed}
    for unit in units:
        mine = [r for r in records if r.unit == unit.index]
        if not mine:
            continue
        medians: dict[str, list[float]] = {}
        series: dict[str, list[float]] = {}
        long_series: dict[str, list[float]] = {}
        pooled: dict[str, CaseResult] = {}
        levels: list[LevelFlag] = []
        launches: dict[str, int] = {}
        for role, preset in roles.items():
            runs = [r for r in mine if r.role == role and r.series == "launches"]
            launches[role] = len(runs)
            medians[role] = [m for m in (r.median() for r in runs) if m is not None]
            series[role] = [v for r in runs for v in r.values()]
            longs = [r for r in mine if r.role == role and r.series == "long"]
            if longs:
                long_series[role] = longs[0].values()
            for r in runs + longs:
                found = detect_levels(r.values())
                if found.multi_level:
                    levels.append(LevelFlag(preset, r.series, r.launch, found.kind,
                                            found.transitions,
                                            [lv.to_dict() for lv in found.levels]))
            if runs:
                case = pool_cases([r.case for r in runs],
                                  {**unit.params, "preset": preset, "series": "launches"})
                # counts: the launches' mean (no time method applies to a count per call)
                method = None if case.unit in COUNT_UNITS else unit.method
                try:
                    finalize_case(case, (), method, options.confidence)
                except Exception as exc:  # informative; the runs are kept
                    case.errors.append(f"estimate: {type(exc).__name__}: {exc}")
                pooled[role] = case
                cases.append(case)
            for r in longs:
                r.case.params = {**unit.params, "preset": preset, "series": "long"}
                cases.append(r.case)
        unit_name = next((r.case.unit for r in mine), "s")
        counted = unit_name in COUNT_UNITS
        # the absolute highlight threshold is in seconds: counts are highlighted by the
        # relative one alone
        highlight_abs = 0.0 if counted else options.highlight_abs
        both_long = all(role in long_series for role in roles)
        source = "long execution" if both_long else "pooled launches"
        base_series = long_series["baseline"] if both_long else series["baseline"]
        man_series = long_series["managed"] if both_long else series["managed"]
        t2 = (table2_row(base_series, man_series, highlight_abs, options.highlight_rel)
              if base_series and man_series else None)
        t3 = (table3_row(medians["baseline"], medians["managed"], highlight_abs,
                         options.highlight_rel)
              if medians["baseline"] and medians["managed"] else None)
        reference = box_stats(man_series).median if man_series else None
        evaluation.cases.append(CaseEvaluation(
            label=unit.label, benchmark=unit.benchmark, implementation=unit.implementation,
            params=unit.params, launches=launches, medians=medians, table2=t2,
            table2_source=source, table3=t3,
            boxes={"baseline": box_stats(base_series), "managed": box_stats(man_series)},
            reference=reference,
            evolution={"baseline": error_evolution(base_series, reference),
                       "managed": error_evolution(man_series, reference)},
            levels=levels,
            # counts: the finding says it exactly (a ratio of 1.000× has no direction)
            relation=None if counted else _relation(pooled, medians, options.confidence),
            unit=unit_name,
            finding=_count_finding(medians, unit_name) if counted else None))
    return evaluation, cases


def evaluation_results(title: str, evaluation: Evaluation, cases: list[CaseResult],
                       command_line: str | None = None) -> Results:
    """The results file of an evaluation: the pooled and long cases, the evaluation in
    ``context["evaluate"]``."""
    from ..environment import capture_environment

    results = Results(suite=title, cases=cases, environment=capture_environment(None),
                      context={"command": command_line, "evaluate": evaluation.to_dict()},
                      interrupted=evaluation.interrupted)
    return results
