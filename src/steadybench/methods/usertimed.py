"""``usertimed``: code that times itself (pyperf's ``Runner.bench_time_func``).

The measured callable is a *time function*: ``time_func(loops)`` runs the work ``loops`` times
and returns the seconds it took, timed as the user decides (a GPU event, a server's own
counter, a clock around only part of the call). The method never reads a clock around it;
each sample is ``(returned seconds, loops)``, so the recorded value is seconds per loop, like
every other method's.

Calibration follows ``auto``: ``loops`` starts at 1 and grows until one call reports at least
``min_sample_ns`` (1 ms by default), then is fixed for the case. The estimate is the median of
the samples with its order-statistic interval, as ``auto``'s; across independent executions
the usual per-execution summary applies (:func:`steadybench.methods.base.build_estimate`).

A time function that returns something other than a finite, non-negative number of seconds
fails the run with one line saying so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import MeasurementError
from .base import Clock, Method
from .common import float_option, int_option

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

#: default shortest sample a calibrated loop count aims at (as ``auto``'s)
MIN_SAMPLE_NS = 1e6
#: loops are never calibrated beyond this
MAX_LOOPS = 10**9


class UserTimedMethod(Method):
    """The measured callable times itself: ``time_func(loops) -> seconds``.

    Options: ``loops`` (a fixed loop count; default calibrated), ``min_sample_ns`` (the
    shortest sample calibration aims at, default 1 ms).
    """

    name = "usertimed"

    def __init__(self, loops: int | None = None, min_sample_ns: float = MIN_SAMPLE_NS) -> None:
        self.fixed = None if loops is None else int_option(self.name, "loops", loops, 1,
                                                           MAX_LOOPS)
        self.min_sample_ns = float_option(self.name, "min_sample_ns", min_sample_ns, 0.0)
        self.loops = self.fixed

    def _call(self, implementation: Implementation, loops: int) -> int:
        from .unroll import is_coroutine_function

        run = implementation.run
        if is_coroutine_function(run):
            raise MeasurementError("method 'usertimed' calls a time function; "
                                   f"{implementation.name} is async")
        seconds = run(loops)  # type: ignore[call-arg]
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) \
                or not math.isfinite(seconds) or seconds < 0:
            raise MeasurementError(f"a user-timed benchmark returns the seconds its loops "
                                   f"took; {implementation.name}({loops}) returned "
                                   f"{seconds!r}")
        return round(seconds * 1e9)

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        if self.fixed is not None:
            self.loops = self.fixed
            return
        loops = 1
        while True:
            elapsed = self._call(implementation, loops)
            if elapsed >= self.min_sample_ns or loops >= MAX_LOOPS:
                break
            grow = 10.0 if elapsed <= 0 else min(10.0, max(2.0, self.min_sample_ns / elapsed))
            loops = min(MAX_LOOPS, max(loops + 1, int(loops * grow)))
        per_loop = elapsed / loops if elapsed > 0 else 0.0
        self.loops = loops if per_loop <= 0 else max(
            1, min(MAX_LOOPS, math.ceil(self.min_sample_ns / per_loop)))

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        assert self.loops is not None
        return self._call(implementation, self.loops), self.loops

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        median_ci = case.analyses.get("ci_median") or {}
        return {
            "value": case.stats.get("median"),
            "ci_low": median_ci.get("low"),
            "ci_high": median_ci.get("high"),
            "confidence": median_ci.get("confidence") or (case.ci or {}).get("confidence"),
            "statistic": "median",
            "executions": self.loops,
            "mean": case.stats.get("mean"),
        }

    def options(self) -> dict[str, Any]:
        return {"loops": self.loops, "min_sample_ns": self.min_sample_ns}
