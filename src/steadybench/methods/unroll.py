"""Straight-line (unrolled) timing code for callables and statement strings.

Moreno and Fischmeister (source ``002`` §1 and §4) point out that a ``for`` loop around the
measured code adds its own unknown overhead to every execution, which no fit can remove because
it is proportional to the number of executions. The methods here therefore time ``n``
executions with *generated straight-line code*: a function body that contains ``n`` copies of
the call (or of the statement) between two clock reads, compiled once and cached.

Coroutine functions. When the measured callable is a coroutine function (``async def``), the
body is an ``async def`` whose copies are ``await _f()``, run to completion in an event loop the
timer owns (one per case, made with :func:`asyncio.new_event_loop`, as pyperf's
``bench_async_func`` and JMH's asynchronous benchmarks own theirs). The clock reads are inside
the coroutine, so the loop's own cost of starting and stopping a run (``run_until_complete``,
the task around the coroutine) is outside them, as the clock's own cost is outside a sample
of the other methods; what is left is the cost of awaiting the coroutine, part of calling it.

Limits. At most :data:`MAX_UNROLL` copies are written out. Beyond it, the body becomes a loop
whose every iteration runs a fully unrolled block of :data:`MAX_UNROLL` copies, followed by the
unrolled remainder: the loop then adds one iteration's overhead (tens of nanoseconds in CPython)
per :data:`MAX_UNROLL` executions, i.e. a bias of at most ~0.1 ns per execution in the slope.
"""

from __future__ import annotations

import asyncio
import inspect
import textwrap
import weakref
from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError
from ..model.implementation import Implementation, StatementText

#: the largest number of executions written out as straight-line code
MAX_UNROLL = 1000

TimedBody = Callable[[Callable[[], Any], Callable[[], Any], Callable[[], int]], int]


class StatementImplementation(StatementText):
    """Measures a Python statement string, as ``timeit`` does, but unrolled.

    ``setup`` (a statement string) runs before each sample, untimed; both are compiled in a
    function whose globals are ``globals`` (default: an empty namespace), so the statement's
    names resolve to the set-up's locals. A statement that does not compile raises
    :class:`ConfigurationError` naming the benchmark.
    """

    def __init__(self, statement: str, setup: str = "pass", name: str | None = None,
                 globals: dict[str, Any] | None = None) -> None:  # noqa: A002 - as in timeit
        super().__init__(statement, setup, name, globals)
        for label, text in (("statement", self.statement), ("setup", self.setup_statement)):
            try:
                compile(text, f"<steadybench {label}>", "exec")
            except SyntaxError as exc:
                raise ConfigurationError(
                    f"benchmark {self.name!r}: the {label} does not compile: {exc.msg} "
                    f"(line {exc.lineno})") from None
        self._single = build_timed_body(1, statement=self.statement,
                                        setup=self.setup_statement, namespace=self.globals)

    def run(self) -> None:
        """One execution (with its set-up), untimed by itself."""
        self._single(_noop, _noop, _zero_clock)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled code (rebuilt on loading), so that a statement can be
        measured in independent worker processes; ``globals`` must then hold picklable values
        (module-level functions, numbers...), or define what the statement needs in ``setup``."""
        return {k: v for k, v in vars(self).items() if k != "_single"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._single = build_timed_body(1, statement=self.statement,
                                        setup=self.setup_statement, namespace=self.globals)


def _noop() -> None:
    return None


def is_coroutine_function(fn: Any) -> bool:
    """``async def`` functions (also behind ``functools.partial`` and bound methods, and
    objects whose ``__call__`` is one)."""
    call = type(fn).__dict__.get("__call__") if not inspect.isfunction(fn) else None
    return inspect.iscoroutinefunction(fn) or (call is not None
                                               and inspect.iscoroutinefunction(call))


def refuse_async(method: str, implementation: Implementation) -> None:
    """For the methods that call the measured code themselves: a coroutine function would be
    called without being awaited (timing the creation of a coroutine object)."""
    run = getattr(implementation, "run", None)
    if getattr(implementation, "statement", None) is None and is_coroutine_function(run):
        raise ConfigurationError(f"method {method!r} cannot await a coroutine function "
                                 f"({implementation.name} is async); use auto, batch, linefit "
                                 "or initsplit")


def _zero_clock() -> int:
    return 0


def _indent(text: str, level: int) -> str:
    return textwrap.indent(text, "    " * level)


def _lines(executions: int, inits: int, call: str, init: str) -> list[str]:
    """Interleave ``inits`` init lines and ``executions`` call lines (``002`` §5: each execution
    preceded by its initialisation, extra initialisations at the end)."""
    out: list[str] = []
    for j in range(max(executions, inits)):
        if j < inits:
            out.append(init)
        if j < executions:
            out.append(call)
    return out


def build_timed_body(executions: int, inits: int = 0, *, statement: str | None = None,
                     setup: str = "pass", namespace: dict[str, Any] | None = None,
                     is_async: bool = False) -> TimedBody:
    """Compile ``timed(f, init, clock) -> elapsed_ns`` running ``executions`` calls of ``f()``
    (or copies of ``statement``) and ``inits`` calls of ``init()`` between two clock reads.

    Up to :data:`MAX_UNROLL` lines are written out; beyond that see the module docstring.
    """
    if executions < 0 or inits < 0:
        raise ConfigurationError("executions and initialisations must not be negative")
    call = statement if statement is not None else ("await _f()" if is_async else "_f()")
    init = "_i()"
    total = max(executions, inits)
    body: list[str] = []
    if statement is not None:
        body.append(setup)
    body.append("_t0 = _clock()")
    if total <= MAX_UNROLL:
        body.extend(_lines(executions, inits, call, init))
    elif inits:
        raise ConfigurationError(
            f"at most {MAX_UNROLL} executions and initialisations per sample can be interleaved, "
            f"got {executions} and {inits}")
    else:
        reps, rest = divmod(executions, MAX_UNROLL)
        block = "\n".join([call] * MAX_UNROLL)
        body.append(f"for _ in _range({reps}):\n{_indent(block, 1)}")
        body.extend([call] * rest)
    body.append("_t1 = _clock()")
    body.append("return _t1 - _t0")
    source = ("async " if is_async else "") + "def _timed(_f, _i, _clock, _range=range):\n" \
        + _indent("\n".join(body), 1) + "\n"
    ns: dict[str, Any] = dict(namespace or {})
    try:
        code = compile(source, f"<steadybench unrolled x{executions}>", "exec")
    except SyntaxError as exc:  # pragma: no cover - statements are checked beforehand
        raise ConfigurationError(f"generated timing code does not compile: {exc.msg}") from None
    exec(code, ns)  # noqa: S102 - the point of this module
    return ns["_timed"]


class Timer:
    """Times ``n`` executions (and ``m`` initialisations) of one implementation, unrolled.

    Compiled bodies are cached per ``(n, m)``.
    """

    def __init__(self, implementation: Implementation,
                 init: Callable[[], Any] | None = None) -> None:
        self.statement: str | None = getattr(implementation, "statement", None)
        self.setup: str = getattr(implementation, "setup_statement", "pass")
        self.namespace: dict[str, Any] = getattr(implementation, "globals", {})
        self.fn: Callable[[], Any] = implementation.run
        self.init: Callable[[], Any] = init or _noop
        self._cache: dict[tuple[int, int], TimedBody] = {}
        #: the measured callable is a coroutine function: awaited in this timer's event loop
        self.is_async = self.statement is None and is_coroutine_function(self.fn)
        self._loop: asyncio.AbstractEventLoop | None = None

    def body(self, executions: int, inits: int = 0) -> TimedBody:
        key = (executions, inits)
        timed = self._cache.get(key)
        if timed is None:
            timed = self._cache[key] = build_timed_body(
                executions, inits, statement=self.statement, setup=self.setup,
                namespace=self.namespace, is_async=self.is_async)
        return timed

    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop of this timer's samples (made on first use, closed with the timer)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            weakref.finalize(self, self._loop.close)
        return self._loop

    def compile_ahead(self, *executions: int) -> None:
        """Build the bodies of these sizes now (a method's ``prepare``), so that no sample
        compiles its own code: the compilation's allocations and time would otherwise land in
        the first sample of each size, under its meters (``run --track-memory``)."""
        for n in executions:
            self.body(n)

    def time(self, clock: Callable[[], int], executions: int, inits: int = 0) -> int:
        """Elapsed nanoseconds of one straight-line sample."""
        body = self.body(executions, inits)
        if self.is_async:
            return int(self.loop().run_until_complete(body(self.fn, self.init, clock)))
        return int(body(self.fn, self.init, clock))
