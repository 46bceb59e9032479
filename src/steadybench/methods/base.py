"""The measurement-method interface the runner calls, and the ``direct`` method.

A method decides how one *sample* is taken: how many executions of the measured code, which
clock reads surround them, and how the samples of a case become the reported estimate. The
runner calls, for one case:

1. ``prepare(implementation, clock)`` once, after ``setup(params)``: calibration goes here;
2. ``sample(implementation, clock) -> (elapsed_ns, executions)`` once per run, innermost of all
   meters; the runner records ``elapsed_ns / executions`` seconds as the run's ``wall_time``;
3. ``finish(case)`` after the processors ran: fill ``case.estimate`` with at least ``value``,
   ``ci_low``, ``ci_high`` and ``confidence`` (and method-specific fields), and ``case.method``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

Clock = Callable[[], int]


class Method:
    """Base class of measurement methods."""

    name = "method"
    #: True when samples hold different numbers of executions; the runner then also records
    #: the raw ``elapsed`` seconds and ``executions`` of each sample.
    variable_executions = False

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        """Calibrate for this case (called once, after set-up)."""

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        raise NotImplementedError

    def finish(self, case: CaseResult) -> None:
        """Fill ``case.estimate`` from the case's samples and statistics.

        Subclasses override :meth:`estimate`; this adds the between-process spread when the
        case ran as independent processes (``case.processes``, see
        :mod:`steadybench.runner.processes`).
        """
        case.method = self.name
        case.estimate = self.estimate(case)
        if case.processes:
            from ..runner.processes import process_spread

            case.estimate.update(process_spread(case.processes, case.estimate))
            if case.estimate.get("processes_disagree"):
                case.warnings.append(
                    f"the {len(case.processes)} processes disagree "
                    f"{case.estimate['spread_ratio']:.0f}× more than their own noise predicts: "
                    "each settles on its own value, so the interval shown is the one across "
                    "processes (Touati et al. §2)"
                )

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        """The estimate of this case (default: mean per-execution time and its CI)."""
        return estimate_from_stats(case)

    def options(self) -> dict[str, Any]:
        """The method's settings, recorded with the results."""
        return {}


def estimate_from_stats(case: CaseResult) -> dict[str, Any]:
    """The default estimate: the mean per-execution time and its CI from the summary."""
    ci = case.ci or {}
    return {
        "value": case.stats.get("mean"),
        "ci_low": ci.get("low"),
        "ci_high": ci.get("high"),
        "confidence": ci.get("confidence"),
    }


class DirectMethod(Method):
    """One execution per sample, timed by a clock read on each side (source ``000``).

    Simple and what users expect, but each sample includes the cost of one clock read (the
    systematic error ε of Moreno and Fischmeister §3), which the other methods remove.
    """

    name = "direct"

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        run = implementation.run
        t0 = clock()
        run()
        t1 = clock()
        return t1 - t0, 1
