"""The ``batch`` method: N executions per sample, value = time / N.

Timing N executions divides the systematic error ε (the clock reads, Moreno and Fischmeister,
source ``002`` §3, eq. 2: ``T = N·T_e + ε``) by N; it does not remove it. N is calibrated so
that one sample lasts at least ``1000 ×`` the larger of the clock's read cost and resolution
(or ``min_sample_ns``), which bounds the remaining bias ``ε/N`` to about 0.1 % of the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Clock, Method, estimate_from_stats
from .common import calibrate_executions, float_option, int_option, probe_clock
from .unroll import Timer

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

#: a calibrated sample lasts at least this many times max(read cost, resolution)
BATCH_FACTOR = 1000


class BatchMethod(Method):
    """N executions per sample (unrolled straight-line code), N fixed or calibrated.

    Options: ``executions`` (N, ≥ 1; default calibrated), ``min_sample_ns`` (a lower bound on
    one sample's length used by calibration, default 0).
    """

    name = "batch"

    def __init__(self, executions: int | None = None, min_sample_ns: float = 0.0) -> None:
        self.fixed = None if executions is None else int_option(self.name, "executions",
                                                               executions, 1)
        self.min_sample_ns = float_option(self.name, "min_sample_ns", min_sample_ns, 0.0)
        self.executions = self.fixed
        self.read_cost_ns: float | None = None
        self._timer: Timer | None = None

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        self._timer = Timer(implementation)
        cost, resolution = probe_clock(clock)
        self.read_cost_ns = cost
        if self.fixed is None:
            target = max(self.min_sample_ns, BATCH_FACTOR * max(cost, resolution))
            self.executions, _ = calibrate_executions(self._timer, clock, target, cost)
        else:
            self.executions = self.fixed
        self._timer.compile_ahead(self.executions)

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        assert self._timer is not None and self.executions is not None
        return self._timer.time(clock, self.executions), self.executions

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        est = estimate_from_stats(case)
        est["executions"] = self.executions
        if self.read_cost_ns is not None and self.executions:
            # what is left of the clock-read error after dividing by N (002 §3, eq. 2)
            est["bias_bound"] = self.read_cost_ns / self.executions / 1e9
        return est

    def options(self) -> dict[str, Any]:
        return {"executions": self.executions, "min_sample_ns": self.min_sample_ns}
