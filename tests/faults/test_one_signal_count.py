"""Issue 27 follow-up: one count of arriving signals, shared by the runner's wrappers
(``runner/sigint``) and the machine-control guard (``system/signals``), in
:mod:`steadybench.arrivals`."""

from __future__ import annotations

import signal

import pytest

from steadybench import arrivals
from steadybench.runner import sigint
from steadybench.system import signals


def test_a_wrapped_signal_is_counted_once_in_the_one_count():
    before = arrivals.arrivals()
    with sigint.counting() as active:
        assert active
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert arrivals.arrivals() == sigint.arrivals() == before + 1


def test_the_guards_signal_counts_in_the_same_count_once():
    # counting begun under the guard: the wrapper sees the guard's handler and leaves the
    # counting to it
    before = arrivals.arrivals()
    assert signals.install()
    try:
        with sigint.counting(), pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    finally:
        signals.uninstall()
    assert sigint.arrivals() == before + 1


def test_a_guard_installed_after_counting_began_counts_too():
    # a countermeasure installs the guard while the case runs: its SIGTERM-made interrupt is
    # the user's, which the count changing says
    before = arrivals.arrivals()
    with sigint.counting():
        assert signals.install()
        try:
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
        finally:
            signals.uninstall()
    assert sigint.arrivals() > before


def test_counting_inside_counting_counts_an_arrival_once():
    # a wrapper around a wrapper (counting begun inside counting, or a wrapped handler some
    # caller left installed): the make-test suite counted one SIGINT four times this way
    before = arrivals.arrivals()
    with sigint.counting() as outer, sigint.counting() as inner:
        assert outer and inner
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert arrivals.arrivals() == before + 1


def test_the_guard_over_a_counting_wrapper_counts_an_arrival_once():
    # counting begun before the guard: the guard counts and calls the wrapped handler, not
    # the wrapper (the fresh-clone suite counted one SIGINT twice this way)
    before = arrivals.arrivals()
    with sigint.counting() as active:
        assert active and signals.install()
        try:
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
        finally:
            signals.uninstall()
    assert arrivals.arrivals() == before + 1


def _handlers() -> dict[int, object]:
    return {s: signal.getsignal(s) for s in sigint.SIGNALS}


def test_counting_ended_beneath_the_guard_leaves_the_guard_then_the_programs_handlers():
    # counting begins, the guard is installed inside it, counting ends while the guard still
    # holds the handlers, then the guard ends (a tuned in-process case): the guard must stay in
    # force until its own end, and the program's own handlers must be back after it. Before,
    # counting put the original back over the guard, and the guard then put back the stale
    # wrapper: SIGINT stayed wrapped for the rest of the process.
    program = _handlers()
    counting = sigint.counting()
    assert counting.__enter__()
    assert signals.install()
    counting.__exit__(None, None, None)
    assert all(signal.getsignal(s) is signals._handler for s in program)
    before = arrivals.arrivals()
    with signals.protected(deliver=False):
        signal.raise_signal(signal.SIGINT)  # recorded by the guard, still in force
    assert signals.pending() == [signal.SIGINT]
    with pytest.raises(KeyboardInterrupt):
        signals.uninstall()  # the recorded SIGINT is honoured by the program's handler
    assert arrivals.arrivals() == before + 1
    assert _handlers() == program


def test_the_guard_ended_inside_counting_leaves_counting_then_the_programs_handlers():
    # the nesting the other way round: both put back what they found
    program = _handlers()
    with sigint.counting():
        wrapped = _handlers()
        assert signals.install()
        signals.uninstall()
        assert _handlers() == wrapped
    assert _handlers() == program
