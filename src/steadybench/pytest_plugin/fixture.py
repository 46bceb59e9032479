"""The ``benchmark`` fixture: pytest-benchmark's calls, measured by steadybench.

Accepted, as pytest-benchmark documents them:

* ``benchmark(fn, *args, **kwargs)`` — measure ``fn(*args, **kwargs)``; returns its result;
* ``benchmark.pedantic(fn, args=(), kwargs=None, setup=None, rounds=1, warmup_rounds=0,
  iterations=1)`` — exactly ``rounds`` samples of ``iterations`` calls each after
  ``warmup_rounds``, ``setup`` run untimed before each round (it may return ``(args,
  kwargs)``); with ``setup``, ``iterations`` must be 1 (as in pytest-benchmark);
* ``benchmark.extra_info`` — a dict saved with the result;
* ``benchmark.group`` or ``@pytest.mark.benchmark(group=..., max_time=..., warmup=...)``.

The function is called once first, untimed, in the test's own process: that call's result is
returned (so the test can assert on it) and its exception fails the test with the user's
traceback. Then steadybench measures it (:mod:`steadybench.pytest_plugin.measure`).

The fixture is registered as ``benchmark`` only when pytest-benchmark is not active (two plugins
cannot both own one fixture name); it is always available as ``steadybench_benchmark``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..model.estimate import Estimate
    from .session import BenchmarkSession


class SteadybenchWarning(UserWarning):
    """A benchmark was not measured as asked (shown in pytest's warnings summary)."""


#: the warning of a benchmark in a pytest-xdist worker
XDIST_WARNING = ("benchmarks are not measured in pytest-xdist workers (they would share the CPU "
                 "with the other workers' tests); the function was called once: run the "
                 "benchmarks with -p no:xdist or -n 0")


class FixtureAlreadyUsed(Exception):
    """The fixture was called twice in one test (one benchmark per test, as pytest-benchmark)."""


class BenchmarkFixture:
    """What a test receives as ``benchmark``."""

    def __init__(self, node: Any, session: BenchmarkSession, options: dict[str, Any]) -> None:
        self._node = node
        self._session = session
        self._options = options
        self.group: str | None = options.get("group")
        self.extra_info: dict[str, Any] = {}
        self.name = node.name
        self.fullname = node.nodeid
        self.param = getattr(getattr(node, "callspec", None), "id", None)
        self.params = dict(getattr(getattr(node, "callspec", None), "params", {}) or {})
        #: the case's estimate after the call (None before, or when benchmarks are disabled)
        self.estimate: Estimate | None = None
        self.isolation: str | None = None
        self._used = False

    # ------------------------------------------------------------------ calls
    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self._mark_used()
        result = fn(*args, **kwargs)  # the test's own call: its result, its exception
        if self._not_measured():
            return result
        from .measure import CallImplementation

        impl = CallImplementation(fn, args, kwargs, name=self.fullname)
        self._measure(impl)
        return result

    def pedantic(self, target: Callable[..., Any], args: tuple[Any, ...] = (),
                 kwargs: dict[str, Any] | None = None, setup: Callable[[], Any] | None = None,
                 rounds: int = 1, warmup_rounds: int = 0, iterations: int = 1) -> Any:
        self._mark_used()
        if not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
        if not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
        if not isinstance(warmup_rounds, int) or warmup_rounds < 0:
            raise ValueError(f"warmup_rounds must be a non-negative integer, got "
                             f"{warmup_rounds!r}")
        if setup is not None and iterations > 1:
            raise ValueError("can't use more than 1 iteration with a setup function")
        if setup is not None and (args or kwargs):
            raise TypeError("can't use args or kwargs together with a setup function")
        call_args, call_kwargs = tuple(args), dict(kwargs or {})
        if setup is not None:
            made = setup()
            if made is not None:
                call_args, call_kwargs = tuple(made[0] or ()), dict(made[1] or {})
        result = target(*call_args, **call_kwargs)
        if self._not_measured():
            return result
        from .measure import CallImplementation

        impl = CallImplementation(target, args, kwargs, setup=setup, name=self.fullname)
        self._measure(impl, rounds=rounds, warmup=warmup_rounds, calls_per_sample=iterations)
        return result

    # ------------------------------------------------------------------ inside
    def _not_measured(self) -> bool:
        if self._session.worker:
            import warnings

            warnings.warn(SteadybenchWarning(XDIST_WARNING), stacklevel=3)
        return self._session.disabled

    def _mark_used(self) -> None:
        if self._used:
            raise FixtureAlreadyUsed(f"{self.fullname}: the benchmark fixture can be used only "
                                     "once per test")
        self._used = True

    def _measure(self, impl: Any, **pedantic: Any) -> None:
        from ..errors import SteadybenchError
        from .measure import measure_call

        s = self._session
        options = self._options
        try:
            measured = measure_call(
                impl, self.fullname, processes=s.processes,
                time_per_execution=float(options.get("max_time", s.time_per_execution)),
                warmup=int(pedantic.pop("warmup", options.get("warmup_rounds", s.warmup))),
                confidence=s.confidence, in_process_reason=s.in_process_reason,
                rounds=pedantic.get("rounds"),
                calls_per_sample=pedantic.get("calls_per_sample"),
                time_limit=s.time_limit, measure=s.measure)
        except SteadybenchError as exc:  # valgrind missing, code a counted process cannot import
            pytest.fail(f"benchmark {self.fullname}: {exc}", pytrace=False)
        if s.profile and s.measure == "time" and not measured.case.errors:
            self._profile(impl, measured.case)
        self._record(measured.case, measured)

    def _profile(self, impl: Any, case: Any) -> None:
        """``--steadybench-profile``: one more execution, profiled, after the measured ones;
        a benchmark a fresh interpreter cannot import is profiled nowhere (said in one line)."""
        from ..model.parameters import Parameters
        from ..profiles.backend import ProfileSettings
        from ..profiles.runner import profile_case

        got = profile_case(impl, Parameters(), self.fullname, ProfileSettings(),
                           self._session.time_limit or 600.0)
        if hasattr(got, "reason"):
            case.extra["profile_failure"] = got.message
        else:
            case.extra["profile"] = got

    def _record(self, case: Any, measured: Any) -> None:
        from ..model.estimate import Estimate

        s = self._session
        case.extra.update({"pytest_name": self.name, "fullname": self.fullname,
                           "group": self.group, "param": self.param,
                           "extra_info": dict(self.extra_info), "isolation": measured.isolation})
        if measured.in_process_reason:
            case.extra["in_process_reason"] = measured.in_process_reason
        case.params = {k: v if isinstance(v, int | float | str | bool) or v is None else repr(v)
                       for k, v in self.params.items()}
        self.estimate = Estimate.from_dict(case.estimate)
        self.isolation = measured.isolation
        s.add(case, measured)
        if case.errors:
            pytest.fail(f"benchmark {self.fullname} failed while measured: "
                        f"{'; '.join(case.errors)}", pytrace=False)


def _fixture(request: pytest.FixtureRequest) -> Any:
    from .session import session_of

    session = session_of(request.config)
    if session.skip:
        pytest.skip("benchmarks are skipped (--steadybench-skip)")
    marker = request.node.get_closest_marker("benchmark")
    options = dict(marker.kwargs) if marker else {}
    return BenchmarkFixture(request.node, session, options)


@pytest.fixture
def steadybench_benchmark(request: pytest.FixtureRequest) -> Any:
    """pytest-benchmark's ``benchmark`` calls, measured by steadybench (always available)."""
    return _fixture(request)


class BenchmarkName:
    """The ``benchmark`` fixture, registered as a separate plugin only when pytest-benchmark is
    not active."""

    @pytest.fixture
    def benchmark(self, request: pytest.FixtureRequest) -> Any:
        """pytest-benchmark's ``benchmark`` calls, measured by steadybench."""
        return _fixture(request)
