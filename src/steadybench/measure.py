"""``steadybench.measure``: one call, one trustworthy per-execution time.

``measure(fn, method="linefit")`` runs the chosen measurement method on a zero-argument callable
or a statement string and returns a :class:`Measurement`: the case's
:class:`~steadybench.model.estimate.Estimate` (the same headline every output shows) with the
raw points and the full case. It is the object API (a :class:`~steadybench.runner.Runner` with a
stop condition, then :func:`~steadybench.processors.finalize_case`) packed into one function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

from .clocks import get_clock
from .errors import ConfigurationError, MeasurementError
from .methods import METHOD_NAMES, Method, StatementImplementation, make_method
from .methods.common import raise_if_failed
from .model.estimate import Estimate
from .model.implementation import CallableImplementation, Implementation
from .model.parameters import Parameters
from .model.results import CaseResult
from .processors.base import finalize_case
from .runner.runner import Runner
from .runner.stop import build_stop_condition

#: measured runs when neither ``runs`` nor ``max_time`` is given: a few linefit sweeps
DEFAULT_RUNS = 60


@dataclass(frozen=True)
class Measurement(Estimate):
    """The outcome of :func:`measure`: the case's :class:`~steadybench.model.estimate.Estimate`
    with the raw points and the case.

    Every attribute of the Estimate is here, with the values of ``case.estimate``: ``value``
    (seconds per execution), ``ci_low``/``ci_high`` (its interval at ``confidence``),
    ``unit``, ``method``, ``statistic``, ``level``, ``n_executions``, ``n_runs``,
    ``within_cov``, ``between_cov`` and ``fields`` (the method-specific figures: overhead, R²,
    T_i, calls per sample...). Besides:

    * ``x``/``y``: the raw points (executions and seconds per sample; for one-execution methods
      ``x`` is all ones and ``y`` the per-sample values);
    * ``case``: the full :class:`~steadybench.model.results.CaseResult`;
    * ``m["name"]``: a method figure (``m["overhead"]`` is ``m.fields["overhead"]``); the
      Estimate's own attributes read this way too (``m["ci_low"]`` is ``m.ci_low``).
    """

    x: list[float] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    case: CaseResult | None = field(default=None, compare=False, repr=False)

    def __getitem__(self, key: str) -> Any:
        if key in self.fields:
            return self.fields[key]
        if key in _ESTIMATE_NAMES:
            return getattr(self, key)
        raise KeyError(key)

    @property
    def estimate(self) -> Estimate:
        """The plain :class:`~steadybench.model.estimate.Estimate` (as in the results file)."""
        return Estimate(**{name: getattr(self, name) for name in _ESTIMATE_NAMES})

    def to_dict(self) -> dict[str, Any]:
        """The Estimate's JSON form (:meth:`Estimate.to_dict`) with the points ``x`` and
        ``y``."""
        return {**self.estimate.to_dict(), "x": list(self.x), "y": list(self.y)}


#: the attributes a Measurement shares with the Estimate
_ESTIMATE_NAMES = tuple(f.name for f in dataclass_fields(Estimate))


def measure(fn: Callable[[], Any] | str | Implementation, method: str | Method = "linefit",
            clock: Callable[[], int] | str | None = None, *, runs: int | None = None,
            max_time: float | None = None, warmup: int = 1, confidence: float = 0.95,
            setup: str = "pass", globals: dict[str, Any] | None = None,  # noqa: A002
            processes: int = 1, name: str | None = None,
            sleep: Callable[[float], None] | None = None, measure: str = "time",
            **options: Any) -> Measurement:
    """Measure ``fn`` with ``method`` and return its :class:`Measurement` (the case's
    :class:`~steadybench.model.estimate.Estimate`, its raw points and the case).

    Args:
        fn: a zero-argument callable, a statement string (compiled as ``timeit`` does, with
            ``setup`` and ``globals``), or an :class:`Implementation`.
        method: a name from :data:`~steadybench.methods.METHOD_NAMES` or a Method object.
        clock: a clock name (``perf_counter``, ``process_time``, ``thread_time``) or callable.
        runs: measured samples (default :data:`DEFAULT_RUNS` unless ``max_time`` is given).
        max_time: stop after this many seconds.
        warmup: samples taken first and left out.
        confidence: level of every interval.
        processes: run as this many independent worker processes.
        measure: ``time`` (the default), or ``instructions``/``cycles``: counted under valgrind
            (:mod:`steadybench.counts`) in ``processes`` layouts; ``fn`` must then be code a
            fresh interpreter can import (a module-level function, an Implementation of a
            module, a statement string), and ``method``, ``clock``, ``runs`` do not apply.
            ``x``/``y`` are then the call counts and the counts of the first layout.
        **options: the method's options (``points=20``, ``base_batch=…``, ``trim=…``…).

    Raises :class:`~steadybench.errors.MeasurementError` (naming the benchmark) when the code
    raised or no trustworthy estimate could be made; ConfigurationError for bad options.
    """
    if isinstance(fn, Implementation):
        impl = fn
    elif isinstance(fn, str):
        impl = StatementImplementation(fn, setup=setup, globals=globals, name=name)
    elif callable(fn):
        impl = CallableImplementation(fn, name=name)
    else:
        raise ConfigurationError(f"measure: expected a callable or a statement string, "
                                 f"got {type(fn).__name__}")
    if measure != "time":
        if isinstance(fn, str):  # the set-up once, not before every counted call
            from .counts.python import StatementCall

            impl = StatementCall(fn, setup=setup, globals=globals, name=name)
        return _count(impl, measure, processes, confidence)
    if isinstance(method, Method):
        if options:
            raise ConfigurationError("measure: give options to the Method object, not here")
        chosen = method
    else:
        if method not in METHOD_NAMES:
            raise ConfigurationError(
                f"unknown method {method!r}; choose one of {', '.join(METHOD_NAMES)}")
        chosen = make_method(method, **options)
    clock_fn = get_clock(clock)
    if runs is None and max_time is None:
        runs = DEFAULT_RUNS
    stop = build_stop_condition(runs=runs, max_time=max_time, confidence=confidence)
    kwargs: dict[str, Any] = {"warmup": warmup, "clock": clock_fn, "method": chosen,
                              "processes": processes}
    if sleep is not None:
        kwargs["sleep"] = sleep
    runner = Runner(stop, **kwargs)
    case = runner.execute(impl, Parameters())
    finalize_case(case, (), chosen, confidence)
    if case.errors:
        raise MeasurementError(f"{case.label}: {'; '.join(case.errors)}")
    raise_if_failed(case)
    est = Estimate.from_dict(case.estimate)
    assert est is not None  # raise_if_failed: there is a value
    fit = case.extra.get("fit")
    if fit:
        x, y = list(fit["x"]), list(fit["y"])
    elif chosen.variable_executions:
        x, y = case.values("executions"), case.values("elapsed")
    else:
        y = case.values()
        x = [1.0] * len(y)
    return Measurement(**{name: getattr(est, name) for name in _ESTIMATE_NAMES},
                       x=x, y=y, case=case)


def _count(impl: Implementation, measure: str, layouts: int, confidence: float) -> Measurement:
    """:func:`measure` with a count measure (its ``measure`` argument)."""
    from .counts.backend import check_measure
    from .counts.python import CountRunner, CountSettings

    check_measure(measure)
    runner = CountRunner(CountSettings(measure, layouts=layouts, confidence=confidence))
    case = runner.execute(impl, Parameters())
    finalize_case(case, (), runner.method, confidence)
    if case.errors:
        raise MeasurementError(f"{case.label}: {'; '.join(case.errors)}")
    raise_if_failed(case)
    est = Estimate.from_dict(case.estimate)
    assert est is not None
    fit = case.extra["counts"]["layouts"][0]["fit"]
    return Measurement(**{name: getattr(est, name) for name in _ESTIMATE_NAMES},
                       x=[float(c) for c in fit["calls"]], y=[float(c) for c in fit["counts"]],
                       case=case)
