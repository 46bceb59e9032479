"""Clocks by name, and what one read of them costs.

A clock is a zero-argument callable returning integer nanoseconds. ``perf_counter`` (the
default: monotonic, highest resolution, counts sleeping), ``process_time`` (CPU time of the
process, all threads; excludes sleeping) and ``thread_time`` (CPU time of the calling thread)
are selectable by name; ``monotonic`` too. Each read costs time — the systematic error ε of
Moreno and Fischmeister (source ``002`` §3) — and the clock's resolution bounds what one sample
can show; :func:`clock_properties` measures both (it lives in :mod:`steadybench.environment`,
which records them with every result, and is re-exported here).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .environment import clock_properties
from .errors import ConfigurationError

Clock = Callable[[], int]

#: name → clock function; names may be given with or without the ``_ns`` suffix
CLOCKS: dict[str, Clock] = {
    "perf_counter": time.perf_counter_ns,
    "process_time": time.process_time_ns,
    "thread_time": time.thread_time_ns,
    "monotonic": time.monotonic_ns,
}
CLOCK_NAMES = tuple(CLOCKS)
DEFAULT_CLOCK = "perf_counter"


def get_clock(name: str | Clock | None = None) -> Clock:
    """The clock called ``name`` (``perf_counter`` when None); a callable is returned as is.

    Raises :class:`ConfigurationError` for an unknown name.
    """
    if name is None:
        return CLOCKS[DEFAULT_CLOCK]
    if callable(name):
        return name
    key = str(name).strip().lower().removeprefix("time.")
    key = key.removesuffix("_ns")
    if key not in CLOCKS:
        raise ConfigurationError(f"unknown clock {name!r}; choose one of {', '.join(CLOCK_NAMES)}")
    return CLOCKS[key]


#: the clocks that stand still while the process sleeps or waits (CPU time)
CPU_TIME_CLOCKS = (time.process_time_ns, time.thread_time_ns)


def budget_clock(clock: Clock) -> Clock:
    """The clock that times a case's budget (``--max-time``) and hard limit (``--time-limit``)
    when its samples are timed by ``clock``: the samples' own clock, unless that is a CPU-time
    clock. Those stand still while the benchmark sleeps or waits, and the budget is the user's
    time: with ``--clock thread_time`` a benchmark sleeping 4 ms a call took 15.8 s of wall
    time to spend a ``--max-time`` of 0.05 s, and a hang in a sleep never reached the hard
    limit."""
    return time.perf_counter_ns if clock in CPU_TIME_CLOCKS else clock


def clock_name(clock: Clock) -> str:
    """The short name of a known clock, else the callable's ``__name__``."""
    for name, fn in CLOCKS.items():
        if fn is clock:
            return name
    return getattr(clock, "__name__", type(clock).__name__)


__all__ = ["CLOCKS", "CLOCK_NAMES", "CPU_TIME_CLOCKS", "DEFAULT_CLOCK", "Clock", "budget_clock",
           "clock_name", "clock_properties", "get_clock"]
