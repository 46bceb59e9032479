"""Stop conditions: when to stop repeating one benchmark (Rancid §IV-B and §V-A).

A condition looks at the :class:`RunState` after every measured run and returns the reason to
stop as a string, or None to go on. Conditions combine with ``&``, ``|``, ``^`` and ``~`` (or
:class:`And`, :class:`Or`, :class:`Xor`, :class:`Not`). The precision conditions follow Rancid's
proposal of data-dependent stop rules: a coefficient of variation over a sliding window of the
latest runs, which ignores early JIT/warm-up outliers, and the relative width of a confidence
interval of the mean.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigurationError
from ..stats.streaming import StreamingStats


@dataclass
class RunState:
    """What the runner knows about one case while it runs."""

    runs: int = 0  # successful measured runs
    failed: int = 0  # measured runs that raised
    attempted: int = 0  # measured runs, successful or not
    elapsed_ns: int = 0  # since the first warm-up run started
    stream: StreamingStats = field(default_factory=StreamingStats)  # primary metric, ok runs
    window: deque[float] = field(default_factory=lambda: deque(maxlen=1))
    last_error: str | None = None
    #: the case's value so far, when the runner knows one (worker processes: the median of
    #: the finished executions' medians); for progress displays only
    estimate: float | None = None

    @property
    def elapsed(self) -> float:
        return self.elapsed_ns / 1e9


class StopCondition:
    """Base class: override :meth:`check` and :meth:`describe`."""

    def check(self, state: RunState) -> str | None:
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def window_size(self) -> int:
        """How many of the latest values this condition needs the runner to keep."""
        return 0

    def __and__(self, other: StopCondition) -> StopCondition:
        return And(self, other)

    def __or__(self, other: StopCondition) -> StopCondition:
        return Or(self, other)

    def __xor__(self, other: StopCondition) -> StopCondition:
        return Xor(self, other)

    def __invert__(self) -> StopCondition:
        return Not(self)

    def __repr__(self) -> str:
        return f"<stop when {self.describe()}>"


class Runs(StopCondition):
    """Stop after ``n`` successful measured runs."""

    def __init__(self, n: int) -> None:
        if int(n) < 1:
            raise ConfigurationError(f"number of runs must be at least 1, got {n}")
        self.n = int(n)

    def check(self, state: RunState) -> str | None:
        return f"{self.n} runs done" if state.runs >= self.n else None

    def describe(self) -> str:
        return f"runs >= {self.n}"


class ElapsedTime(StopCondition):
    """Stop once ``seconds`` have passed since the case started."""

    def __init__(self, seconds: float) -> None:
        if not seconds > 0:
            raise ConfigurationError(f"time must be positive, got {seconds}")
        self.seconds = float(seconds)

    def check(self, state: RunState) -> str | None:
        return f"{self.seconds:g} s elapsed" if state.elapsed >= self.seconds else None

    def describe(self) -> str:
        return f"elapsed >= {self.seconds:g} s"


class CovWindow(StopCondition):
    """Stop when the coefficient of variation of the last ``window`` successful runs ≤ target."""

    def __init__(self, target: float, window: int = 20) -> None:
        if not target > 0:
            raise ConfigurationError(
                f"target coefficient of variation must be positive, got {target}"
            )
        if int(window) < 2:
            raise ConfigurationError(f"window must hold at least 2 runs, got {window}")
        self.target = float(target)
        self.window = int(window)

    def window_size(self) -> int:
        return self.window

    def check(self, state: RunState) -> str | None:
        if len(state.window) < self.window:
            return None
        values = list(state.window)[-self.window :]
        mean = math.fsum(values) / len(values)
        if mean == 0:
            return None
        var = math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
        cov = math.sqrt(var) / abs(mean)
        if cov <= self.target:
            return f"CoV {cov:.2%} <= {self.target:.2%} over the last {self.window} runs"
        return None

    def describe(self) -> str:
        return f"CoV(last {self.window}) <= {self.target:.2%}"


class CiHalfWidth(StopCondition):
    """Stop when the Student-t CI of the mean has relative half-width ≤ target."""

    def __init__(self, target: float, confidence: float = 0.95, min_runs: int = 3) -> None:
        if not target > 0:
            raise ConfigurationError(
                f"target relative CI half-width must be positive, got {target}"
            )
        from ..stats.summary import check_confidence

        self.target = float(target)
        self.confidence = check_confidence(confidence)
        self.min_runs = max(2, int(min_runs))
        self._t_cache: dict[int, float] = {}

    def _t(self, dof: int) -> float:
        if dof > 1000:  # the t quantile has converged to the normal one by then
            dof = 1000
        t = self._t_cache.get(dof)
        if t is None:
            from scipy import stats as sps  # not at the top: a worker process imports this module

            t = self._t_cache[dof] = float(sps.t.ppf(0.5 + self.confidence / 2.0, dof))
        return t

    def __getstate__(self) -> dict[str, object]:
        """Pickled with every t quantile :meth:`_t` can ask for (1 to 1000 degrees of freedom):
        a worker process checking this condition then never imports scipy, which would add
        about a second to every execution."""
        from scipy import stats as sps

        dofs = range(1, 1001)
        quantiles = sps.t.ppf(0.5 + self.confidence / 2.0, list(dofs))
        return {**self.__dict__, "_t_cache": dict(zip(dofs, map(float, quantiles)))}

    def check(self, state: RunState) -> str | None:
        s = state.stream
        if s.n < self.min_runs or s.mean == 0:
            return None
        half = self._t(s.n - 1) * (s.stdev or 0.0) / math.sqrt(s.n)
        rel = half / abs(s.mean)
        if rel <= self.target:
            return f"{self.confidence:.0%} CI half-width {rel:.2%} <= {self.target:.2%} of the mean"
        return None

    def describe(self) -> str:
        return f"CI{self.confidence:.0%} half-width <= {self.target:.2%}"


class _Combinator(StopCondition):
    def __init__(self, *conditions: StopCondition) -> None:
        if len(conditions) < 2:
            raise ConfigurationError(f"{type(self).__name__} needs at least two conditions")
        self.conditions = conditions

    def window_size(self) -> int:
        return max(c.window_size() for c in self.conditions)


class And(_Combinator):
    def check(self, state: RunState) -> str | None:
        reasons = [c.check(state) for c in self.conditions]
        return " and ".join(reasons) if all(reasons) else None  # type: ignore[arg-type]

    def describe(self) -> str:
        return "(" + " and ".join(c.describe() for c in self.conditions) + ")"


class Or(_Combinator):
    def check(self, state: RunState) -> str | None:
        for c in self.conditions:
            reason = c.check(state)
            if reason:
                return reason
        return None

    def describe(self) -> str:
        return "(" + " or ".join(c.describe() for c in self.conditions) + ")"


class Xor(_Combinator):
    def check(self, state: RunState) -> str | None:
        reasons = [r for r in (c.check(state) for c in self.conditions) if r]
        return f"exactly one of: {reasons[0]}" if len(reasons) == 1 else None

    def describe(self) -> str:
        return "(" + " xor ".join(c.describe() for c in self.conditions) + ")"


class Not(StopCondition):
    def __init__(self, condition: StopCondition) -> None:
        self.condition = condition

    def window_size(self) -> int:
        return self.condition.window_size()

    def check(self, state: RunState) -> str | None:
        return None if self.condition.check(state) else f"not ({self.condition.describe()})"

    def describe(self) -> str:
        return f"not ({self.condition.describe()})"


class OnError(StopCondition):
    """Stop once ``max_failures`` measured runs have failed (Rancid's ErrorStopCondition)."""

    def __init__(self, max_failures: int = 1) -> None:
        self.max_failures = max(1, int(max_failures))

    def check(self, state: RunState) -> str | None:
        if state.failed >= self.max_failures:
            return f"{state.failed} failed runs: {state.last_error}"
        return None

    def describe(self) -> str:
        return f"failures >= {self.max_failures}"


def build_stop_condition(
    runs: int | None = None,
    max_time: float | None = None,
    target_cov: float | None = None,
    window: int = 20,
    target_ci: float | None = None,
    confidence: float = 0.95,
    min_runs: int = 10,
    default_time: float = 3.0,
    condition: StopCondition | str | None = None,
) -> StopCondition:
    """The stop condition the command-line options ask for.

    ``runs`` alone means exactly that many runs. Precision targets are combined with ``and``
    (every target met, after at least ``min_runs`` runs, or ``runs`` when given); ``max_time``
    ends the case whatever the precision, with ``or``. With no option at all the default is "at
    least ``min_runs`` runs and a 1% CI, or ``default_time`` seconds", like hyperfine's default of
    at least 10 runs and a few seconds.

    ``condition`` (a StopCondition, or the name of a registered one, built with its defaults by
    :func:`make_stop_condition`) is one more target, combined like the precision targets.
    """
    precision: list[StopCondition] = []
    if condition is not None:
        precision.append(make_stop_condition(condition) if isinstance(condition, str)
                         else condition)
    if target_cov is not None:
        precision.append(CovWindow(target_cov, window))
    if target_ci is not None:
        precision.append(CiHalfWidth(target_ci, confidence))
    if precision:
        cond: StopCondition = Runs(runs or min_runs)
        for p in precision:
            cond = cond & p
        return cond | ElapsedTime(max_time) if max_time is not None else cond
    if runs is not None:
        return Runs(runs) | ElapsedTime(max_time) if max_time is not None else Runs(runs)
    if max_time is not None:
        return ElapsedTime(max_time)
    return (Runs(min_runs) & CiHalfWidth(0.01, confidence)) | ElapsedTime(default_time)


def make_stop_condition(name: str, **options: Any) -> StopCondition:
    """The stop condition registered as ``name`` (``runs``, ``elapsed``, ``cov_window``,
    ``ci_half_width``, ``on_error``, or a plug-in's from the ``steadybench.stop_conditions``
    entry points) with ``options`` (values may be command-line strings), e.g.
    ``make_stop_condition("cov_window", target=0.02, window=30)``."""
    from ..registry import stop_conditions

    return stop_conditions.create(name, **options)
