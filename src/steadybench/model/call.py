"""The implementation the pytest plugin measures: one call of the code under test.

It lives here, beside the other implementations, and not in :mod:`steadybench.pytest_plugin`
(whose package imports pytest), because it crosses into fresh interpreters by pickle: a
worker process of the plugin (:mod:`steadybench.runner.workers`) and a counted process under
valgrind (:mod:`steadybench.counts.child`) import this module to unpickle it. There, importing
pytest with it cost 272 modules, and under callgrind every one of them is counted and slow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .implementation import Implementation


class CallImplementation(Implementation):
    """``fn(*args, **kwargs)`` as the measured code; ``setup`` (pytest-benchmark's pedantic
    ``setup``), when given, runs untimed before each run and may return ``(args, kwargs)``."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...] = (),
                 kwargs: dict[str, Any] | None = None,
                 setup: Callable[[], Any] | None = None, name: str | None = None) -> None:
        super().__init__(name or getattr(fn, "__name__", "benchmark"))
        self.fn = fn
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.setup_fn = setup
        self._bind(self.args, self.kwargs)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        fn = self.fn
        if not args and not kwargs:
            self.run = fn  # type: ignore[method-assign]
        else:
            self.run = lambda: fn(*args, **kwargs)  # type: ignore[method-assign]

    def init_run(self) -> None:
        if self.setup_fn is None:
            return
        made = self.setup_fn()
        if made is not None:
            args, kwargs = made
            self._bind(tuple(args or ()), dict(kwargs or {}))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("run", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._bind(self.args, self.kwargs)
