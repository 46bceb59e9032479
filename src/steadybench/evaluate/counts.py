"""``evaluate --measure instructions|cycles``: each launch of a preset is one counted process
of the case (issue 26), the preset applied around it, so the evaluation measures what the
presets do to counts.

What to expect, and why it is measured rather than assumed: a count is made on valgrind's
simulated CPU, which none of a preset's countermeasures reaches (the frequency governor, turbo,
pinning, priority, isolated cores and a quiet machine change how fast the host runs valgrind,
not what the simulated CPU executes). So the baseline and managed presets should give the same
count in the same layout, and Tables 2 and 3 should show no performance and no precision
improvement. The evaluation runs both presets anyway and reports what it found in one line
(:func:`finding`): that is the evidence a team needs before it moves a CI gate from time to
counts on a shared machine.

The design, stated:

* **launch k counts the case in layout k** (:mod:`steadybench.counts.layout`: hash seed and
  environment size, the same under both presets), so the spread across launches is the
  layout spread and both presets' launch k are directly comparable;
* each launch is one execution of the execution layer's counts backend
  (:class:`~steadybench.counts.python.PythonCountBackend`), one backend per case for the whole
  session: the call count ``n`` is sized once (by its first launch), so every launch fits its
  line over the same call counts;
* the preset's **before/after-benchmark** countermeasures are applied around each counted
  process, through the driver as for time, and restored after it; its **per-run** ones
  (cool-down, warm-up runs, GC control between runs) have no place in a counted process, which
  makes its calls in one stretch: the preset's record lists them as not applied to counts;
* ``--runs`` and ``--long`` do not apply: a launch gives one value, the count per call.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..model.results import CaseResult

if TYPE_CHECKING:
    from ..counts.python import PythonCountBackend
    from .session import EvaluateOptions, Unit

#: call counts each launch fits its line over (as ``run --measure``'s default)
POINTS = 3


def check_count_options(long_runs: int) -> None:
    """A counted evaluation has no runs to make long: ``--long`` is refused in one line."""
    if long_runs:
        raise ConfigurationError("--long with --measure instructions|cycles: a count has no "
                                 "runs to make long (each launch is one counted process); "
                                 "drop --long")


class _InLayout:
    """The counts backend asked for one execution in layout ``layout`` (the launch's)."""

    def __init__(self, backend: PythonCountBackend, layout: int) -> None:
        self.backend = backend
        self.layout = layout
        self.isolation = backend.isolation
        self.cases = backend.cases

    def execute(self, request: Any) -> Any:
        import dataclasses

        return self.backend.execute(dataclasses.replace(request, index=self.layout))


class CountedLaunches:
    """The counts backends of a file target's cases, one per case for the session."""

    def __init__(self) -> None:
        self._backends: dict[int, PythonCountBackend] = {}
        self._valgrind: Any = None
        #: (case, preset) → launches started: the next one's layout
        self._launches: dict[tuple[int, str], int] = {}

    def backend(self, unit: Unit, options: EvaluateOptions) -> PythonCountBackend:
        from ..counts.python import CountSettings, PythonCountBackend
        from ..counts.valgrind import find_valgrind

        if unit.index not in self._backends:
            if self._valgrind is None:
                self._valgrind = find_valgrind()  # missing: one line, exit 2, nothing ran
            config, params = unit.payload
            settings = CountSettings(options.measure, layouts=1, points=POINTS,
                                     time_limit=options.time_limit,
                                     confidence=options.confidence)
            self._backends[unit.index] = PythonCountBackend(
                config.implementation, params, unit.benchmark, settings, self._valgrind)
        return self._backends[unit.index]

    def execute(self, unit: Unit, preset: str, options: EvaluateOptions,
                started: Any = None) -> CaseResult:
        """The next launch k of ``unit`` under ``preset``: one counted process in layout k,
        the preset's benchmark-stage countermeasures around it. ``started(case)`` is told the
        case before anything runs (so an interrupt keeps it)."""
        from ..counts.python import CountMethod
        from ..execution.driver import StageActions, run_executions
        from ..runner.actions import RunContext, Stage
        from ..runner.runner import Runner
        from ..runner.stop import RunState, build_stop_condition
        from ..system.presets import build_preset
        from .case_parts import contained, preset_summary

        backend = self.backend(unit, options)
        launch = self._launches.get((unit.index, preset), 0)
        self._launches[(unit.index, preset)] = launch + 1
        config, params = unit.payload
        case = CaseResult(unit.benchmark, config.implementation.name, params.to_dict(),
                          unit=options.measure, method="count")
        if started is not None:
            started(case)
        runner = Runner(build_stop_condition(runs=1), method=copy.deepcopy(
            config.runner.method), processes=1, time_limit=options.time_limit)
        plan = build_preset(preset, options.root)
        per_run = [type(a).__name__ for stage, a in plan.actions
                   if stage in (Stage.BEFORE_RUN, Stage.AFTER_RUN)]
        for stage, action in plan.actions:
            runner.add_action(stage, action)
        ctx = RunContext(config.implementation, params, case, RunState(), runner.clock,
                         runner.sleep)
        stages = StageActions.of_runner(runner.actions, ctx)
        stages = StageActions(stages.before_benchmark, (), (), stages.after_benchmark, ctx)
        done: list[Any] = []
        try:
            done = run_executions(_InLayout(backend, launch), case, 1,
                                  time_limit=options.time_limit,
                                  confidence=options.confidence, actions=stages)
        finally:
            layouts = [o.case.extra["counts"]["layouts"][0] for outcomes in done
                       for o in outcomes if o.case is not None and "counts" in o.case.extra]
            if layouts:  # the launch's record and its estimate, as count_case makes them
                case.extra["counts"] = {**backend.record(), "layouts": layouts, "per": "call"}
                case.stop_reason = (f"counted at {', '.join(map(str, backend.calls or []))} "
                                    f"calls in layout {launch}")
            with contained(case):
                CountMethod(backend.settings).finish(case)
        summary = preset_summary(plan.record)
        summary["not_applied_to_counts"] = per_run
        case.extra["preset"] = summary
        return case


def finding(medians: dict[str, list[float]], unit: str) -> str:
    """What the evaluation found about counts across the presets, in one line: whether each
    launch counted the same under both, and the layout spread across launches."""
    base, managed = medians.get("baseline") or [], medians.get("managed") or []
    pairs = list(zip(base, managed, strict=False))
    if not pairs:
        return f"{unit}: not counted under both presets"
    worst = max(abs(m / b - 1.0) if b else 0.0 for b, m in pairs)
    every = [*base, *managed]
    spread = (max(every) - min(every)) / min(every) if min(every) else 0.0
    same = sum(1 for b, m in pairs if b == m)
    if same == len(pairs):
        head = (f"the presets counted the same {unit} in {same} of {len(pairs)} launches "
                "(exactly)")
    else:
        head = (f"the presets counted the same {unit} in {same} of {len(pairs)} launches; "
                f"the largest difference in one launch was {worst:.4%}")
    return f"{head}; across launches (layouts) the counts spread {spread:.4%}"
