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


class MaxFailures(StopCondition):
    """Stop once ``max_failures`` measured runs have failed.

    This counts failures; it is *not* Rancid's ErrorStopCondition, which is about the error of
    the measurements (the coefficient of variation): that one is :class:`CovAfterWarmup`.
    """

    def __init__(self, max_failures: int = 1) -> None:
        self.max_failures = max(1, int(max_failures))

    def check(self, state: RunState) -> str | None:
        if state.failed >= self.max_failures:
            return f"{state.failed} failed runs: {state.last_error}"
        return None

    def describe(self) -> str:
        return f"failures >= {self.max_failures}"


#: the old name of :class:`MaxFailures` (it was mislabelled as Rancid's ErrorStopCondition)
OnError = MaxFailures


def _number(value: Any, what: str, integer: bool = False) -> Any:
    """``value`` as a float (or int), ConfigurationError naming ``what`` when it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            integer and value != int(value)):
        kind = "an integer" if integer else "a number"
        raise ConfigurationError(f"{what} must be {kind}, got {value!r}")
    return int(value) if integer else float(value)


class _History(StopCondition):
    """A condition that needs every successful measured value, not only the streaming
    statistics: it collects them itself, one per :meth:`check` call, from the newest values of
    ``state.window`` (the runner keeps at least :meth:`window_size` of them).

    A condition object follows one case at a time: when it is given another :class:`RunState`,
    or a state with fewer runs than it has seen, it starts again. Values the runner did not show
    it (checks skipped before a ``min_runs``, more than ``window_size`` runs at once) are taken
    from the window as far as it reaches; ``missed`` counts the others.
    """

    #: how many recent values a check may have to catch up on
    CATCH_UP = 64

    def __init__(self) -> None:
        self._state_id: int | None = None
        self._seen = 0
        self.missed = 0

    def window_size(self) -> int:
        return self.CATCH_UP

    def _reset(self) -> None:
        self._seen = 0
        self.missed = 0

    def _push(self, value: float) -> None:
        raise NotImplementedError

    def _collect(self, state: RunState) -> None:
        if self._state_id != id(state) or state.runs < self._seen:
            self._state_id = id(state)
            self._reset()
        new = state.runs - self._seen
        if new <= 0:
            return
        recent = list(state.window)[-new:] if state.window else []
        self.missed += new - len(recent)
        for value in recent:
            self._push(value)
        self._seen = state.runs

    def __getstate__(self) -> dict[str, object]:
        """A worker process gets the condition without another case's values."""
        out = dict(self.__dict__)
        out["_state_id"] = None
        return out


class CovAfterWarmup(_History):
    """Rancid's ErrorStopCondition: stop when the coefficient of variation (s / mean) of the
    successful measured values, after discarding the first ``discard`` of them, is at most
    ``threshold`` (Rancid §IV-B and §V-A: "benchmarks run until the coefficient of variation is
    below a threshold, discarding a number of warm-up results").

    The runner's own warm-up runs (``--warmup``) never reach a stop condition; ``discard`` drops
    that many *measured* values more. The CoV is the sample standard deviation (n − 1) over the
    mean, computed with Welford's streaming update, so memory stays constant. At least
    ``min_runs`` (default 2) values must be counted first. The default threshold, 5 %, is the
    one of the paper's Fig. 14.
    """

    def __init__(self, threshold: float = 0.05, discard: int = 0, min_runs: int = 2) -> None:
        threshold = _number(threshold, "CoV threshold")
        discard = _number(discard, "values to discard", integer=True)
        min_runs = _number(min_runs, "min_runs", integer=True)
        if not threshold > 0:
            raise ConfigurationError(f"CoV threshold must be positive, got {threshold}")
        if int(discard) < 0:
            raise ConfigurationError(f"values to discard must not be negative, got {discard}")
        self.threshold = float(threshold)
        self.discard = int(discard)
        self.min_runs = max(2, int(min_runs))
        super().__init__()
        self._reset()

    def _reset(self) -> None:
        super()._reset()
        self.stream = StreamingStats()
        self._dropped = 0

    def _push(self, value: float) -> None:
        if self._dropped < self.discard:
            self._dropped += 1
        else:
            self.stream.push(value)

    def check(self, state: RunState) -> str | None:
        if self.discard == 0:
            stream = state.stream  # the runner's own statistics: nothing to discard
        else:
            self._collect(state)
            stream = self.stream
        if stream.n < self.min_runs or stream.mean == 0:
            return None
        cov = (stream.stdev or 0.0) / abs(stream.mean)
        if cov <= self.threshold:
            after = f" after discarding {self.discard}" if self.discard else ""
            return f"CoV {cov:.2%} <= {self.threshold:.2%} over {stream.n} runs{after}"
        return None

    def describe(self) -> str:
        after = f", first {self.discard} discarded" if self.discard else ""
        return f"CoV <= {self.threshold:.2%}{after}"


def _t_quantile(confidence: float, dof: int) -> float:
    from scipy import stats as sps  # not at the top: a worker process imports this module

    return float(sps.t.ppf(0.5 + confidence / 2.0, dof))


class CiWidthWindow(StopCondition):
    """Stop when the Student-t confidence interval of the mean of the last ``window`` successful
    runs is at most ``target`` wide, relative to their mean (Rancid §IV-B: "relative width of a
    confidence interval", over a sliding window so early JIT/warm-up outliers do not count).

    The width is the whole interval, 2 · t(1 − α/2, w − 1) · s / √w, divided by |mean|. The
    defaults (5 %, a window of 20) are the threshold and window of the paper's Fig. 14.
    """

    def __init__(self, target: float = 0.05, window: int = 20, confidence: float = 0.95) -> None:
        target = _number(target, "target relative CI width")
        window = _number(window, "window", integer=True)
        confidence = _number(confidence, "confidence")
        if not target > 0:
            raise ConfigurationError(f"target relative CI width must be positive, got {target}")
        if int(window) < 2:
            raise ConfigurationError(f"window must hold at least 2 runs, got {window}")
        from ..stats.summary import check_confidence

        self.target = float(target)
        self.window = int(window)
        self.confidence = check_confidence(confidence)
        self._t: float | None = None

    def window_size(self) -> int:
        return self.window

    def __getstate__(self) -> dict[str, object]:
        """Pickled with its t quantile, so a worker process never imports scipy."""
        out = dict(self.__dict__)
        out["_t"] = self._t if self._t is not None else _t_quantile(self.confidence,
                                                                    self.window - 1)
        return out

    def width(self, values: list[float]) -> float | None:
        """The relative width of the interval over ``values`` (None when the mean is 0)."""
        n = len(values)
        mean = math.fsum(values) / n
        if mean == 0:
            return None
        var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
        if self._t is None:
            self._t = _t_quantile(self.confidence, self.window - 1)
        return 2.0 * self._t * math.sqrt(var / n) / abs(mean)

    def check(self, state: RunState) -> str | None:
        if len(state.window) < self.window:
            return None
        rel = self.width(list(state.window)[-self.window:])
        if rel is not None and rel <= self.target:
            return (f"{self.confidence:.0%} CI width {rel:.2%} <= {self.target:.2%} of the mean "
                    f"over the last {self.window} runs")
        return None

    def describe(self) -> str:
        return f"CI{self.confidence:.0%} width(last {self.window}) <= {self.target:.2%}"


class MedianIqrStable(_History):
    """Stop when both the running median and the running IQR have stabilised (Rancid §VI-B: "it
    appears to be preferable to run until both median execution times and IQR stabilize").

    At checkpoints the median and the interquartile range (type-7 quartiles) of *all* values so
    far are taken. The condition holds when, over the last ``checks`` checkpoints, neither moved
    by more than ``tolerance`` × the latest median from its latest value: the error-evolution
    curves of the paper's Fig. 16 have flattened. Checkpoints come every ``step`` runs, and at
    least ``spacing`` × n runs apart (1 % by default), so a long run is judged over its last few
    percent rather than its last few runs, and a million runs cost a few hundred quantile
    computations, not a million. The values are kept (one float per run, ``array('d')``).
    """

    def __init__(self, tolerance: float = 0.01, step: int = 10, checks: int = 5,
                 min_runs: int = 30, spacing: float = 0.01) -> None:
        tolerance = _number(tolerance, "tolerance")
        step = _number(step, "step", integer=True)
        checks = _number(checks, "checks", integer=True)
        min_runs = _number(min_runs, "min_runs", integer=True)
        spacing = _number(spacing, "spacing")
        if not tolerance > 0:
            raise ConfigurationError(f"tolerance must be positive, got {tolerance}")
        if int(step) < 1 or int(checks) < 2:
            raise ConfigurationError("step must be at least 1 and checks at least 2")
        if not 0 <= spacing < 1:
            raise ConfigurationError(f"spacing must be in [0, 1), got {spacing}")
        self.tolerance = float(tolerance)
        self.step = int(step)
        self.checks = int(checks)
        self.min_runs = max(4, int(min_runs))
        self.spacing = float(spacing)
        super().__init__()
        self._reset()

    def _reset(self) -> None:
        from array import array

        super()._reset()
        self.values = array("d")
        self.points: list[tuple[int, float, float]] = []  # (n, median, iqr)
        self._next = self.step

    def _push(self, value: float) -> None:
        self.values.append(value)
        n = len(self.values)
        if n >= self._next:
            import numpy as np

            q1, median, q3 = np.percentile(np.frombuffer(self.values, dtype=float),
                                           [25.0, 50.0, 75.0])
            self.points.append((n, float(median), float(q3 - q1)))
            self._next = n + max(self.step, int(n * self.spacing))

    def check(self, state: RunState) -> str | None:
        self._collect(state)
        if len(self.values) < self.min_runs or len(self.points) < self.checks:
            return None
        recent = self.points[-self.checks:]
        _n, median, iqr = recent[-1]
        if median == 0:
            return None
        limit = self.tolerance * abs(median)
        if all(abs(m - median) <= limit and abs(q - iqr) <= limit for _, m, q in recent):
            return (f"median and IQR stable within {self.tolerance:.2%} of the median over the "
                    f"last {self.checks} checks ({len(self.values)} runs)")
        return None

    def describe(self) -> str:
        return (f"median and IQR stable within {self.tolerance:.2%} "
                f"(last {self.checks} checks, every {self.step} runs or {self.spacing:.0%})")


def requested_time(condition: StopCondition) -> float | None:
    """The longest time any :class:`ElapsedTime` inside ``condition`` asks for (None: none)."""
    found: list[float] = []
    stack = [condition]
    while stack:
        cond = stack.pop()
        if isinstance(cond, ElapsedTime):
            found.append(cond.seconds)
        stack.extend(getattr(cond, "conditions", ()))
        inner = getattr(cond, "condition", None)
        if isinstance(inner, StopCondition):
            stack.append(inner)
    return max(found) if found else None


def effective_time_limit(condition: StopCondition, time_limit: float) -> float:
    """The hard time limit that applies: ``time_limit``, but never shorter than the time the
    stop condition itself asks for (a 2-hour ``ElapsedTime(7200)`` is not cut at a 600 s
    default)."""
    asked = requested_time(condition)
    return max(float(time_limit), asked) if asked is not None else float(time_limit)


def describe_limits(condition: StopCondition, time_limit: float, max_runs: int) -> str:
    """The hard limits in words, stated before a case starts."""
    limit = effective_time_limit(condition, time_limit)
    raised = "" if limit == time_limit else f", raised from {time_limit:g} s to what the stop " \
        "condition asks for"
    return (f"stop when {condition.describe()}; hard limits {limit:g} s{raised} "
            f"and {max_runs} runs")


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
    ``ci_half_width``, ``cov_after_warmup``, ``ci_width_window``, ``median_iqr_stable``,
    ``max_failures`` (``on_error`` is its old name), or a plug-in's from the
    ``steadybench.stop_conditions`` entry points) with ``options`` (values may be command-line
    strings), e.g.
    ``make_stop_condition("cov_window", target=0.02, window=30)``."""
    from ..registry import stop_conditions

    return stop_conditions.create(name, **options)


def parse_stop_condition(text: str) -> StopCondition:
    """``NAME`` or ``NAME:OPT=VALUE,...`` (the command line's ``--stop-condition``) → the
    registered stop condition with those options; ConfigurationError on bad text."""
    name, _, rest = text.partition(":")
    options: dict[str, Any] = {}
    for part in rest.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigurationError(f"--stop-condition {text!r}: write NAME:OPTION=VALUE,...")
        options[key.strip()] = value.strip()
    try:
        return make_stop_condition(name.strip(), **options)
    except TypeError as exc:
        raise ConfigurationError(f"--stop-condition {text!r}: {exc}") from None
