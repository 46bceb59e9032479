"""The ``differential`` method (Moreno and Fischmeister, source ``002`` §3.1).

Each sample reads the clock three times around one and then two executions,
``t1; F; t2; F; F; t3``, and keeps ``(t3 − t2) − (t2 − t1)``: both intervals carry the same
clock-read error ε, so the difference is one execution with ε cancelled (eq. 3 with
``N1 = 1, N2 = 2``). The differences are noisy (two intervals' noise), so the estimate is a
trimmed mean (finer than the clock's resolution, ``002`` §4.1 last paragraph) with Yuen's
confidence interval, reported next to the median and its distribution-free interval; both are
robust to the occasional interrupt.

With ``base_batch = b`` the two intervals hold ``b`` and ``2b`` executions (unrolled), and the
difference is divided by ``b`` — for code far faster than the clock's resolution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..stats.summary import ci_median
from .base import Clock, Method
from .common import case_confidence, fail, float_option, int_option
from .unroll import MAX_UNROLL, Timer, _lines, refuse_async

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult


def trimmed_mean_ci(values: Sequence[float], trim: float = 0.1,
                    confidence: float = 0.95) -> tuple[float, float, float, float]:
    """Trimmed mean, its standard error and Yuen's Student-t interval.

    ``g = ⌊trim·n⌋`` values are cut from each end; the standard error is
    ``s_w / ((1 − 2·trim)·√n)`` with ``s_w`` the standard deviation of the winsorized sample
    (Tukey and McLaughlin 1963; Yuen 1974), with ``n − 2g − 1`` degrees of freedom.
    Returns ``(mean, se, low, high)``.
    """
    from scipy import stats as sps  # here, not at the top: a worker process imports this module

    arr = np.sort(np.asarray(values, dtype=float))
    n = arr.size
    g = int(math.floor(trim * n))
    h = n - 2 * g
    if h < 2:
        raise ValueError("too few values left after trimming")
    mean = float(arr[g:n - g].mean())
    wins = arr.copy()
    wins[:g] = arr[g]
    wins[n - g:] = arr[n - g - 1]
    sw = float(wins.std(ddof=1))
    se = sw / ((1.0 - 2.0 * trim) * math.sqrt(n))
    t = float(sps.t.ppf(0.5 + confidence / 2.0, h - 1))
    return mean, se, mean - t * se, mean + t * se


class DifferentialMethod(Method):
    """``(t3 − t2) − (t2 − t1)`` per sample; trimmed mean and median of the differences.

    Options: ``trim`` (fraction cut from each end for the trimmed mean, 0 ≤ trim < 0.5, default
    0.1), ``base_batch`` (b ≥ 1 executions in the first interval, 2b in the second; default 1).
    """

    name = "differential"

    def __init__(self, trim: float = 0.1, base_batch: int = 1) -> None:
        self.trim = float_option(self.name, "trim", trim, 0.0, 0.49)
        self.base_batch = int_option(self.name, "base_batch", base_batch, 1, MAX_UNROLL // 2)
        self._body: Any = None
        self._fn: Any = None

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        refuse_async(self.name, implementation)
        timer = Timer(implementation)
        b = self.base_batch
        call = timer.statement if timer.statement is not None else "_f()"
        lines = [timer.setup if timer.statement is not None else "pass", "_t1 = _clock()"]
        lines += _lines(b, 0, call, "")
        lines.append("_t2 = _clock()")
        lines += _lines(2 * b, 0, call, "")
        lines += ["_t3 = _clock()", "return (_t3 - _t2) - (_t2 - _t1)"]
        src = "def _timed(_f, _clock):\n" + "\n".join(
            "    " + line for text in lines for line in text.splitlines()) + "\n"
        ns: dict[str, Any] = dict(timer.namespace)
        exec(compile(src, "<steadybench differential>", "exec"), ns)  # noqa: S102
        self._body, self._fn = ns["_timed"], timer.fn

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        return int(self._body(self._fn, clock)), self.base_batch

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        values = case.values()
        confidence = case_confidence(case)
        if len(values) < 3:
            return fail(case, self.name, f"needs at least 3 differences, got {len(values)} "
                                         "(raise --runs)")
        try:
            mean, se, low, high = trimmed_mean_ci(values, self.trim, confidence)
        except ValueError as exc:
            return fail(case, self.name, f"{exc} (option 'trim' = {self.trim})")
        med = float(np.median(values))
        mci = ci_median(values, confidence)
        return {
            "value": mean,
            "ci_low": low,
            "ci_high": high,
            "confidence": confidence,
            "trimmed_mean": mean,
            "trimmed_se": se,
            "trim": self.trim,
            "median": med,
            "median_ci": [mci.low, mci.high] if mci else None,
            "differences": len(values),
            "negative_differences": sum(1 for v in values if v < 0),
            "base_batch": self.base_batch,
        }

    def options(self) -> dict[str, Any]:
        return {"trim": self.trim, "base_batch": self.base_batch}
