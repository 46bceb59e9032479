"""Helpers shared by the measurement methods: clock probing, calibration, option checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError, MeasurementError
from .unroll import Timer

Clock = Callable[[], int]

#: largest number of executions calibration will try for one sample
MAX_CALIBRATION_EXECUTIONS = 100_000_000
#: times each size is timed during calibration (the shortest counts)
CALIBRATION_REPEATS = 3
#: calibration gives up when this many executions still show no time beyond the read cost
INVISIBLE_AFTER = 10_000


def probe_clock(clock: Clock, reads: int = 101) -> tuple[float, float]:
    """(read cost, resolution) of ``clock`` in ns, from ``reads`` back-to-back reads.

    The read cost is the median gap between consecutive reads; the resolution the smallest
    non-zero gap (1 ns when every gap is zero or the clock never moved). A cheap version of
    :func:`steadybench.clocks.clock_properties`, run at every calibration.
    """
    stamps = [clock() for _ in range(reads)]
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    cost = float(gaps[len(gaps) // 2]) if gaps else 0.0
    positive = [g for g in gaps if g > 0]
    resolution = float(min(positive)) if positive else 1.0
    return max(cost, 0.0), resolution


def calibrate_executions(timer: Timer, clock: Clock, target_ns: float, read_cost_ns: float,
                         maximum: int = MAX_CALIBRATION_EXECUTIONS) -> tuple[int, float]:
    """Smallest ``n`` (roughly) whose ``n`` executions take at least ``target_ns``.

    Times 1, then growing numbers of executions until one sample reaches ``target_ns / 4``,
    then extrapolates from the per-execution time of that sample (its read cost subtracted).
    Each size is timed :data:`CALIBRATION_REPEATS` times and the shortest kept: the first
    runs of freshly compiled code are several times slower (cold caches), and an interrupt
    only adds time. Returns ``(n, estimated ns per execution)``.
    """
    n = 1
    while True:
        elapsed = min(timer.time(clock, n) for _ in range(CALIBRATION_REPEATS))
        work = max(elapsed - read_cost_ns, 0.0)
        if elapsed >= target_ns / 4 or n >= maximum:
            break
        if work <= 0 and n >= INVISIBLE_AFTER:
            raise MeasurementError(
                f"{n} executions took no measurable time beyond the clock's read cost: the "
                "clock does not see this code (a no-op, or a CPU-time clock around sleeping "
                "code); give a fixed batch size to measure it anyway")
        grow = 10 if work <= 0 else min(10.0, max(2.0, target_ns / 2 / work))
        n = min(maximum, max(n + 1, int(n * grow)))
    per_execution = max(work / n, elapsed / n / 1e3, 1e-3)
    return max(1, min(maximum, math.ceil(target_ns / per_execution))), per_execution


def int_option(method: str, option: str, value: Any, minimum: int | None = None,
               maximum: int | None = None) -> int:
    """``value`` as an int within bounds, else a ConfigurationError naming the option."""
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        result = int(value)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"method {method}: option {option!r} must be an integer, got {value!r}") from None
    if minimum is not None and result < minimum:
        raise ConfigurationError(
            f"method {method}: option {option!r} must be at least {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ConfigurationError(
            f"method {method}: option {option!r} must be at most {maximum}, got {result}")
    return result


def float_option(method: str, option: str, value: Any, low: float | None = None,
                 high: float | None = None, low_open: bool = False) -> float:
    """``value`` as a float within bounds, else a ConfigurationError naming the option."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"method {method}: option {option!r} must be a number, got {value!r}") from None
    if math.isnan(result) or (low is not None and (result <= low if low_open else result < low)) \
            or (high is not None and result > high):
        bound = f"{'>' if low_open else '≥'} {low}" if low is not None else ""
        if high is not None:
            bound = f"{bound} and ≤ {high}" if bound else f"≤ {high}"
        raise ConfigurationError(
            f"method {method}: option {option!r} must be {bound}, got {value!r}")
    return result


def case_confidence(case: Any, default: float = 0.95) -> float:
    """The confidence level the case's summary used (so all intervals agree)."""
    ci = getattr(case, "ci", None) or {}
    level = ci.get("confidence")
    return float(level) if level else default


def fail(case: Any, method: str, message: str) -> dict[str, Any]:
    """Record a failed estimate: the message goes to ``case.errors``, the value is None.

    Never a wrong number: a method that cannot estimate leaves ``value`` empty. Returns the
    method's own figures (what :meth:`~steadybench.methods.base.Method.estimate` returns);
    :func:`~steadybench.methods.base.build_estimate` turns them into the case's
    :class:`~steadybench.model.estimate.Estimate`, whose ``error`` is this message.
    """
    text = f"{case.label}: method {method}: {message}"
    if text not in case.errors:
        case.errors.append(text)
    return {"value": None, "ci_low": None, "ci_high": None, "confidence": None, "error": text}


def raise_if_failed(case: Any) -> None:
    """Raise the estimate's error, for one-call APIs that must not return an empty value."""
    from ..model.estimate import Estimate

    est = Estimate.from_dict(case.estimate)
    if est is None or est.value is None:
        message = (est.error if est is not None else None) or "; ".join(case.errors) \
            or "no estimate"
        if case.label not in message:
            message = f"{case.label}: {message}"
        raise MeasurementError(message)


def block_half_widths(a: Any, y: Any, keep: Any, block: int, confidence: float,
                      minimum_blocks: int = 3) -> tuple[list[float], list[list[float]]] | None:
    """Run-to-run spread of a fit: the half-widths of Student-t intervals of each unknown
    across consecutive blocks of ``block`` samples (a ``linefit`` sweep, an ``initsplit``
    cycle through the schedule), and each block's solution.

    Each block is solved by least squares on its kept rows (``keep``, the robust fit's choice);
    blocks whose kept rows cannot identify every unknown are skipped. The interval of the mean
    of the block solutions, ``t·sd/√m``, reflects whatever moves the fit from one sweep to the
    next (drift, a slow period), which the residuals of one pooled fit do not (issue 14;
    Kalibera & Jones 2013 make the same point one level up, for executions). None with fewer
    than ``minimum_blocks`` usable blocks.
    """
    import numpy as np

    from ..stats.student import t_quantile

    am = np.asarray(a, dtype=float)
    yv = np.asarray(y, dtype=float)
    kv = np.asarray(keep, dtype=bool)
    p = am.shape[1]
    solutions: list[list[float]] = []
    for start in range(0, yv.size - block + 1, block):
        rows = np.arange(start, start + block)
        rows = rows[kv[rows]]
        sub = am[rows]
        if rows.size <= p or np.linalg.matrix_rank(sub) < p:
            continue
        solutions.append([float(v) for v in np.linalg.lstsq(sub, yv[rows], rcond=None)[0]])
    m = len(solutions)
    if m < minimum_blocks:
        return None
    values = np.asarray(solutions)
    t = t_quantile(0.5 + confidence / 2.0, m - 1)
    half = [float(t * values[:, j].std(ddof=1) / math.sqrt(m)) for j in range(p)]
    return half, solutions
