"""The code under test (Rancid's BenchmarkImplementation, §V-A and Fig. 13)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError
from .parameters import Parameters


class Implementation:
    """Code to benchmark, with hooks around the measured part.

    Subclass it and override the hooks you need:

    * ``setup(params)`` runs once per parameter set, before any run (not timed);
    * ``init_run()`` runs before each measured run (not timed);
    * ``run()`` is the measured code;
    * ``release_run()`` runs after each run (not timed);
    * ``teardown()`` runs once after the last run of a parameter set.

    Error policy: a run whose ``run()`` raises is recorded as failed with its message; then
    :meth:`on_error` decides whether the runner goes on (``True``) or ends this parameter set
    (``False``). The default, ``error_policy = "stop"``, ends it at the first failure;
    ``"continue"`` keeps going, the failed runs being left out of the statistics.
    """

    error_policy: str = "stop"
    #: (file, benchmark title, implementation name) when defined in a benchmark file: how a
    #: worker process finds it again (set by :func:`steadybench.definitions.mark_origin`)
    origin: tuple[str, str, str] | None = None
    #: what one call of ``run()`` processes, for rates: {"items": N, "bytes": M}, each a
    #: number, a parameter's name or a function of the parameters (steadybench.output.rates)
    throughput: dict[str, Any] | None = None

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__
        if self.error_policy not in ("stop", "continue"):
            raise ConfigurationError(
                f"{self.name}: error_policy must be 'stop' or 'continue', not {self.error_policy!r}"
            )

    def setup(self, params: Parameters) -> None:
        """Prepare for the runs of one parameter set."""

    def init_run(self) -> None:
        """Prepare one run; not timed."""

    def run(self) -> Any:
        """The measured code."""
        raise NotImplementedError(f"{self.name}: Implementation.run() must be overridden")

    def release_run(self) -> None:
        """Clean up after one run; not timed."""

    def teardown(self) -> None:
        """Clean up after the last run of a parameter set."""

    def on_error(self, error: BaseException) -> bool:
        """Return True to go on after a failed run, False to end this parameter set."""
        return self.error_policy == "continue"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class FunctionImplementation(Implementation):
    """An implementation made from a factory: ``factory(**params)`` returns the callable to time.

    This is what the short form ``@steadybench.benchmark`` builds: the factory's body is the
    set-up (run once per parameter set, not timed) and the callable it returns is measured.
    """

    def __init__(
        self,
        factory: Callable[..., Callable[[], Any]],
        name: str | None = None,
        error_policy: str = "stop",
    ) -> None:
        self.error_policy = error_policy
        super().__init__(name or getattr(factory, "__name__", "function"))
        self.factory = factory
        self._measured: Callable[[], Any] | None = None

    def setup(self, params: Parameters) -> None:
        measured = self.factory(**params.to_dict())
        if inspect.iscoroutine(measured):
            measured.close()  # never awaited: no "was never awaited" warning
            raise ConfigurationError(
                f"benchmark {self.name!r} is itself 'async def': write a plain def that "
                "returns the async function to measure (its body is the set-up)")
        if not callable(measured):
            raise ConfigurationError(
                f"benchmark {self.name!r} must return the callable to measure, "
                f"got {type(measured).__name__}"
            )
        if inspect.isgeneratorfunction(measured) or inspect.isasyncgenfunction(measured):
            # issue 27 item 15: a call only makes the generator; its body would never run
            raise ConfigurationError(
                f"benchmark {self.name!r} returned a generator function "
                f"({getattr(measured, '__name__', 'function')}): calling it only creates the "
                "generator and none of its body runs; return a function that consumes it, "
                "e.g. lambda: list(gen())")
        self._measured = measured
        # Bind the measured callable directly, so timing it adds no extra call layer.
        self.run = measured  # type: ignore[method-assign]

    def teardown(self) -> None:
        self._measured = None


class CallableImplementation(Implementation):
    """An implementation that measures a zero-argument callable as it is."""

    def __init__(self, fn: Callable[[], Any], name: str | None = None) -> None:
        super().__init__(name or getattr(fn, "__name__", "callable"))
        self.run = fn  # type: ignore[method-assign]


class StatementText(Implementation):
    """The common part of the implementations that run a statement string, as ``timeit``
    does: the statement and its ``setup`` (dedented; empty is ``pass``) and the ``globals``
    both run in. How they are compiled and run is the subclass's."""

    def __init__(self, statement: str, setup: str = "pass", name: str | None = None,
                 globals: dict[str, Any] | None = None) -> None:  # noqa: A002 - as in timeit
        super().__init__(name or "statement")
        import textwrap

        self.statement = textwrap.dedent(statement).strip() or "pass"
        self.setup_statement = textwrap.dedent(setup).strip() or "pass"
        self.globals = dict(globals or {})
