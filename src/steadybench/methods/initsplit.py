"""The ``initsplit`` method: separate an initialisation's cost (Moreno and Fischmeister,
source ``002`` §5).

When every execution of F needs an initialisation first, timing F alone is impossible and
timing both only gives ``T_e + T_i``. Round k runs F ``N_k`` times and the initialisation
``M_k`` times (unrolled, each execution preceded by its initialisation, extra ones at the end),
so ``T_k = N_k·T_e + M_k·T_i + ε`` (eq. 6); with enough independent rounds the overdetermined
system (eq. 7) is solved by least squares (eq. 8) for ``T_e``, ``T_i`` and ε, each with a CI.
Default schedule ``N_k = k``, ``M_k = k + (k mod 4)``, k = 1..K: the number of extra
initialisations cycles through 1, 2, 3, 0. The paper's own schedule (``M_1 = N_1 = 1``,
``M_k = N_k + 1``; option ``schedule="paper"``) has one extra initialisation in every round
but the first, so ``T_i`` and ε are told apart by that single round, and T_e leans on it: on
real code (``benchmarks/initsplit_check.py``) its T_e missed linefit's in half of the
invocations, where the varied schedule agreed in all (docs/methods.md). Any schedule with more
than three rounds, distinct N_k, M_k ≥ N_k and a non-singular system can be given.

On real code the rounds carry interrupts and preemptions, so the system goes through the same
robust fit as ``linefit`` (:func:`~steadybench.stats.regression.robust_fit`, §4.1): rounds far
off the solution (against the median absolute deviation) are dropped and re-admitted until the
kept set settles. Warm-up samples run the schedule from its other end, so every cycle through
the schedule is measured whole (with the paper's schedule, the round ``N = M = 1``, the only one
without an extra initialisation, is never spent on warm-up).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from ..stats.regression import (
    DEFAULT_OUTLIER_THRESHOLD,
    robust_fit,
    try_loglog_fit,
)
from .base import Clock, Method
from .common import block_half_widths, case_confidence, fail, float_option, int_option
from .linefit import widen
from .unroll import MAX_UNROLL, Timer

if TYPE_CHECKING:
    from ..model.implementation import Implementation
    from ..model.results import CaseResult

UNKNOWNS = ("T_e", "T_i", "epsilon")


def default_schedule(rounds: int) -> list[tuple[int, int]]:
    """``(N_k, M_k)`` = ``(k, k + (k mod 4))``: the extra initialisations vary from round to
    round (0 to 3), so every cycle of four rounds separates T_i from ε (module docs)."""
    return [(k, k + k % 4) for k in range(1, rounds + 1)]


def paper_schedule(rounds: int) -> list[tuple[int, int]]:
    """``(N_k, M_k)`` = ``(k, k + 1)`` for k > 1 and ``(1, 1)`` for k = 1 (``002`` §5)."""
    return [(k, 1 if k == 1 else k + 1) for k in range(1, rounds + 1)]


def check_schedule(schedule: Sequence[Sequence[int]], method: str = "initsplit") -> \
        list[tuple[int, int]]:
    """Validate a schedule: N_k ≥ 1 distinct, M_k ≥ N_k, more than 3 rounds, non-singular."""
    try:
        rows = [(int(n), int(m)) for n, m in schedule]
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"method {method}: option 'schedule' must be a list of (N, M) pairs") from None
    if len(rows) <= 3:
        raise ConfigurationError(
            f"method {method}: option 'schedule' needs more than 3 rounds, got {len(rows)}")
    for n, m in rows:
        if n < 1 or m < n or m > MAX_UNROLL or n > MAX_UNROLL:
            raise ConfigurationError(
                f"method {method}: option 'schedule': every round needs 1 ≤ N ≤ M ≤ "
                f"{MAX_UNROLL} (each execution has its initialisation), got N={n}, M={m}")
    if len({n for n, _ in rows}) != len(rows):
        raise ConfigurationError(
            f"method {method}: option 'schedule': the execution counts N must all differ")
    a = np.array([[n, m, 1] for n, m in rows], dtype=float)
    if np.linalg.matrix_rank(a) < 3:
        raise ConfigurationError(
            f"method {method}: option 'schedule' is singular: T_e, T_i and epsilon cannot be "
            "separated (M_k must not be an affine function of N_k, e.g. not M_k = N_k + 1 for "
            "every k)")
    return rows


class InitSplitMethod(Method):
    """Least-squares split of execution, initialisation and clock overhead (``002`` §5).

    Options: ``rounds`` (K > 3, default 20, gives the default schedule), ``schedule`` (explicit
    list of ``(N_k, M_k)``, or ``"paper"`` for ``002`` §5's, or ``"varied"``, the default),
    ``init`` (the initialisation callable; default the implementation's ``init_run``),
    ``threshold`` (the robust fit's cut, × the median absolute deviation; ``inf`` keeps every
    round).

    The intervals of T_e, T_i and ε are those of the least-squares solution of the kept rounds,
    widened to the spread of the solutions of whole cycles through the schedule when that is
    larger (run-to-run variation). They describe one execution; across independent executions
    each execution's T_e, T_i and ε make the intervals.
    """

    name = "initsplit"
    variable_executions = True
    execution_figures = ("T_i", "epsilon")

    def __init__(self, rounds: int = 20, schedule: Sequence[Sequence[int]] | None = None,
                 init: Callable[[], Any] | None = None,
                 threshold: float = DEFAULT_OUTLIER_THRESHOLD) -> None:
        if schedule is None or schedule in ("paper", "varied"):
            rounds = int_option(self.name, "rounds", rounds, 4, MAX_UNROLL - 1)
            schedule = (paper_schedule if schedule == "paper" else default_schedule)(rounds)
        self.schedule = check_schedule(schedule, self.name)
        self.inits = dict(self.schedule)
        if init is not None and not callable(init):
            raise ConfigurationError(f"method {self.name}: option 'init' must be callable")
        self.init = init
        self.threshold = float_option(self.name, "threshold", threshold, 1.0, low_open=True)
        self._timer: Timer | None = None
        self._next = 0
        self._warm = 0

    def prepare(self, implementation: Implementation, clock: Clock) -> None:
        init = self.init or implementation.init_run
        self._timer = Timer(implementation, init=init)
        self._next = 0
        self._warm = 0

    def sample(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        assert self._timer is not None
        n, m = self.schedule[self._next % len(self.schedule)]
        self._next += 1
        return self._timer.time(clock, n, m), n

    def sample_warmup(self, implementation: Implementation, clock: Clock) -> tuple[int, int]:
        """A warm-up round from the end of the schedule backwards: the measured rounds still
        start with the first one (``N = M = 1``, the round that identifies T_i)."""
        assert self._timer is not None
        n, m = self.schedule[-1 - self._warm % len(self.schedule)]
        self._warm += 1
        return self._timer.time(clock, n, m), n

    def estimate(self, case: CaseResult) -> dict[str, Any]:
        confidence = case_confidence(case)
        x = case.values("executions")
        y = case.values("elapsed")
        rows = [(n, self.inits.get(int(n))) for n in x]
        if any(m is None for _, m in rows):
            return fail(case, self.name, "samples do not match the schedule")
        a = np.array([[n, m, 1.0] for n, m in rows], dtype=float)
        try:
            if len(rows) <= 3:
                raise MeasurementError(f"needs more than 3 rounds, got {len(rows)}")
            rob = robust_fit(a, y, threshold=self.threshold, confidence=confidence,
                             names=UNKNOWNS, order=list(range(len(rows))))
        except MeasurementError as exc:
            return fail(case, self.name, f"{exc} (option 'schedule')")
        sol = rob.solution
        if not sol.values[0] > 0:
            return fail(case, self.name, f"the fitted execution time is not positive "
                                         f"({sol.values[0]:.3g} s): the initialisation's cost "
                                         "and the noise hide it; use more runs, or a schedule "
                                         "whose extra initialisations vary")
        intervals = [list(ci) for ci in sol.ci]
        basis = "residuals of the fit"
        keep = np.zeros(len(rows), dtype=bool)
        keep[list(rob.kept)] = True
        cycles = block_half_widths(a, y, keep, len(self.schedule), confidence)
        within: float | None = None
        if cycles is not None:
            halves, solutions = cycles
            within = float(np.std([c[0] for c in solutions], ddof=1)) / abs(sol.values[0])
            if halves[0] > (intervals[0][1] - intervals[0][0]) / 2:
                basis = f"spread of the solutions of {len(solutions)} cycles of the schedule"
            intervals = [widen(v, ci, h) for v, ci, h in zip(sol.values, intervals, halves)]
        pooled = sum(1 for e in case.processes if e.ok) >= 2
        if not rob.straight and not pooled:
            for j in range(len(intervals)):
                bounds = rob.bounds(j)
                if bounds is not None:
                    intervals[j] = [min(intervals[j][0], bounds[0]),
                                    max(intervals[j][1], bounds[1])]
            basis += (", widened to the solutions of the other readings of the rounds (they "
                      "are not consistent)")
            for reason in rob.warnings:
                text = f"initsplit: {reason}; T_e and T_i are uncertain"
                if text not in case.warnings:
                    case.warnings.append(text)
        case.extra["system"] = {
            "kind": "initsplit",
            "columns": ["executions", "initialisations", "constant"],
            "rows": a.tolist(),
            "y": [float(v) for v in y],
            **sol.to_dict(),
            "dropped": list(rob.dropped),
            "readmitted": list(rob.readmitted),
            "iterations": rob.iterations,
            "straight": rob.straight,
            "warnings": list(rob.warnings),
            "ci_basis": basis,
        }
        loglog = try_loglog_fit(x, y)
        out: dict[str, Any] = {
            "value": sol.values[0],
            "ci_low": intervals[0][0],
            "ci_high": intervals[0][1],
            "confidence": confidence,
            "rounds": len(rows),
            "dropped": len(rob.dropped),
            "straight": rob.straight,
            "ci_basis": basis,
            "within_cov": within,
            "residual_std": sol.residual_std,
            "msd": sol.msd,
            "loglog": loglog.to_dict() if loglog else None,
        }
        for name, value, ci in zip(sol.names, sol.values, intervals):
            out[name] = value
            out[f"{name}_ci"] = ci
        return out

    def options(self) -> dict[str, Any]:
        return {"schedule": [list(r) for r in self.schedule], "threshold": self.threshold}
