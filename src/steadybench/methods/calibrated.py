"""The default method, ``auto``: calibrated samples, the median as the per-execution value.

One clock read costs ε (Moreno and Fischmeister, source ``002`` §3, eq. 2: ``T = N·T_e + ε``).
A sample of one execution is only trustworthy when that execution is long next to ε. So, like
``timeit`` and pyperf (which calibrate their "loops"), the method chooses the number of calls N
per sample at the start of each execution:

* N = 1 when one call already lasts at least :data:`READS_SHARE_FACTOR` × max(read cost,
  resolution) and :data:`MIN_SAMPLE_NS`: the clock reads are then ≤ 0.1 % of the sample and one
  call per sample keeps the most information;
* otherwise N is calibrated so that one sample lasts that long (straight-line code, see
  :mod:`steadybench.methods.unroll`, so the loop adds no per-call overhead).

Samples of a busy machine are skewed to the right (preemption, interrupts, page faults add
time, nothing removes it), so the per-execution value is the **median** of the samples, with the
distribution-free interval of the median (order statistics of the binomial, source ``000``). The
headline across executions is then the mean of the per-execution medians with a Student-t
interval (:mod:`steadybench.model.estimate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Clock
from .batch import BatchMethod
from .common import calibrate_executions, probe_clock
from .unroll import Timer

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

#: a sample lasts at least this many times max(read cost, resolution): reads ≤ 0.1 % of it
READS_SHARE_FACTOR = 1000
#: ... and at least this long (ns), so that a sample spans many calls of a fast function
MIN_SAMPLE_NS = 1_000_000.0
#: single calls timed to decide whether one call is long enough alone
PROBE_CALLS = 3


class CalibratedMethod(BatchMethod):
    """Calibrated calls per sample; the median sample (per call) is the estimate.

    Options: ``min_sample_ns`` (the shortest sample, default :data:`MIN_SAMPLE_NS`);
    ``executions`` fixes the calls per sample instead of calibrating.
    """

    name = "auto"

    def __init__(self, executions: int | None = None,
                 min_sample_ns: float = MIN_SAMPLE_NS) -> None:
        super().__init__(executions=executions, min_sample_ns=min_sample_ns)
        self.call_ns: float | None = None

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        self._timer = Timer(implementation)
        cost, resolution = probe_clock(clock)
        self.read_cost_ns = cost
        if self.fixed is not None:
            self.executions = self.fixed
        else:
            target = max(self.min_sample_ns, READS_SHARE_FACTOR * max(cost, resolution))
            single = min(self._timer.time(clock, 1) for _ in range(PROBE_CALLS))
            if single >= target:
                self.executions, self.call_ns = 1, float(single)
            else:
                self.executions, self.call_ns = calibrate_executions(self._timer, clock,
                                                                     target, cost)
        self._timer.compile_ahead(self.executions)

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        median_ci = case.analyses.get("ci_median") or {}
        median = case.stats.get("median")
        if median is None and not case.keep_samples:
            # streaming mode keeps no samples, so no median: fall back to the mean
            ci = case.ci or {}
            headline = {"value": case.stats.get("mean"), "statistic": "mean",
                        "ci_low": ci.get("low"), "ci_high": ci.get("high")}
        else:
            headline = {"value": median, "statistic": "median",
                        "ci_low": median_ci.get("low"), "ci_high": median_ci.get("high")}
        est: dict[str, Any] = {
            **headline,
            "confidence": median_ci.get("confidence") or (case.ci or {}).get("confidence"),
            "executions": self.executions,
            "mean": case.stats.get("mean"),
        }
        if self.read_cost_ns is not None and self.executions:
            est["bias_bound"] = self.read_cost_ns / self.executions / 1e9
        return est
