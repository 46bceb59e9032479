"""How the pytest plugin measures one benchmark call with steadybench's core.

The code under test becomes an :class:`~steadybench.model.implementation.Implementation`
(:class:`~steadybench.model.call.CallImplementation`) measured by a
:class:`~steadybench.runner.runner.Runner` with the
``auto`` method (calibrated calls per sample, the median: :mod:`steadybench.methods.calibrated`),
then :func:`~steadybench.processors.base.finalize_case` makes the case's one
:class:`~steadybench.model.estimate.Estimate`, as ``steadybench run`` does.

**Independent executions.** When the function (and ``setup``) can be found again by a fresh
interpreter — a function defined at module level of an importable module, with arguments that
pickle — the case runs as K spawned worker processes (:mod:`steadybench.runner.workers`) and the
interval is across them. Otherwise (a lambda, a closure, a test module pytest imported outside
``sys.path``) it is measured in the pytest process and :attr:`Measured.isolation` says why; the
estimate's ``level`` is then ``runs``: its interval describes one execution.
"""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.call import CallImplementation
from ..model.parameters import Parameters
from ..model.results import CaseResult


def why_not_importable(fn: Callable[..., Any], *others: Any) -> str | None:
    """None when a fresh interpreter can find ``fn`` by its module and qualified name and the
    other objects (arguments, set-up) pickle; otherwise the reason, in words."""
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module_name or not qualname:
        return f"{fn!r} has no module and qualified name"
    if "<locals>" in qualname or "<lambda>" in qualname:
        return f"{qualname} is defined inside a function (a lambda or closure)"
    if module_name == "__main__":
        return "it is defined in __main__"
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return f"its module {module_name!r} cannot be imported by name"
    target: Any = module
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if target is not fn and getattr(target, "__wrapped__", None) is not fn:
        return f"{module_name}.{qualname} does not name this function"
    try:
        pickle.dumps((fn, *others))
    except Exception as exc:
        return f"its arguments cannot be sent to another process ({type(exc).__name__})"
    return None


@dataclass
class Measured:
    """One benchmark's measurement: the case (with its estimate) and how it was isolated."""

    case: CaseResult
    isolation: str
    in_process_reason: str | None = None


def measure_call(impl: CallImplementation, name: str, *, processes: int, time_per_execution: float,
                 warmup: int, confidence: float, rounds: int | None = None,
                 calls_per_sample: int | None = None, in_process_reason: str | None = None,
                 time_limit: float = 600.0, measure: str = "time") -> Measured:
    """Measure ``impl`` as steadybench ``run`` does: K worker processes (``processes`` > 1 and
    importable code) or this process; each execution samples for ``time_per_execution`` seconds
    (or ``rounds`` samples, pytest-benchmark's pedantic rounds) after ``warmup`` samples.
    With ``measure`` ``instructions`` or ``cycles`` the call is counted under valgrind instead
    (:func:`_count_call`)."""
    from ..methods import make_method
    from ..processors.base import finalize_case
    from ..runner.runner import Runner
    from ..runner.stop import ElapsedTime, Runs

    if measure != "time":
        return _count_call(impl, name, measure, confidence, time_limit)
    reason = in_process_reason
    if reason is None and processes > 1:
        others: list[Any] = [impl.args, impl.kwargs]
        if impl.setup_fn is not None:
            others.append(impl.setup_fn)
        reason = why_not_importable(impl.fn, *others)
        if reason is None and impl.setup_fn is not None:
            reason = why_not_importable(impl.setup_fn)
    use_workers = processes > 1 and reason is None
    if impl.setup_fn is not None or calls_per_sample is not None:
        method = make_method("batch", executions=calls_per_sample or 1) \
            if (calls_per_sample or 1) > 1 else make_method("direct")
    else:
        method = make_method("auto")
    stop = Runs(rounds) if rounds is not None else ElapsedTime(time_per_execution)
    runner = Runner(stop, warmup=warmup, method=method, processes=processes if use_workers else 1,
                    confidence=confidence, time_limit=time_limit)
    case = runner.execute(impl, Parameters(), benchmark=name)
    finalize_case(case, (), method, confidence)
    isolation = f"{processes} worker processes" if use_workers else "in the pytest process"
    return Measured(case, isolation, None if use_workers else (reason or "asked for"))


def _count_call(impl: CallImplementation, name: str, measure: str, confidence: float,
                time_limit: float) -> Measured:
    """Count the call (``--steadybench-measure instructions|cycles``): the function is run in
    counted processes (:class:`steadybench.counts.python.CountRunner`), so it must be
    importable by a fresh interpreter; there is no in-process fallback (a count of the pytest
    process would count pytest)."""
    from ..counts.python import CountRunner, CountSettings
    from ..errors import ConfigurationError
    from ..processors.base import finalize_case

    others: list[Any] = [impl.args, impl.kwargs]
    if impl.setup_fn is not None:
        others.append(impl.setup_fn)
    reason = why_not_importable(impl.fn, *others)
    if reason is not None:
        raise ConfigurationError(f"{name}: --steadybench-measure {measure} counts the call in a "
                                 f"fresh interpreter, which cannot import it ({reason})")
    runner = CountRunner(CountSettings(measure, time_limit=time_limit, confidence=confidence))
    case = runner.execute(impl, Parameters(), benchmark=name)
    finalize_case(case, (), runner.method, confidence)
    return Measured(case, "counted under valgrind")
