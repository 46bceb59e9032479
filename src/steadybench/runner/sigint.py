"""Ctrl-C from the user, or ``KeyboardInterrupt`` raised by the benchmark itself (issue 27 item
15)?

A benchmark that raises ``KeyboardInterrupt`` was reported as a user interrupt: exit 130 and
"interrupted: partial results" in this process, an "interrupted" execution and exit 0 in a
worker. The exception looks the same either way; the signal does not. While a case runs,
:func:`counting` wraps the program's handlers of SIGINT, SIGTERM and SIGHUP so that every such
signal is counted before its handler raises; :func:`arrivals` reads the count, and a
``KeyboardInterrupt`` during which it did not change came from the benchmark's own code.

There is one count, :mod:`steadybench.arrivals`: the machine-control guard's handler
(:mod:`steadybench.system.signals`) counts each signal it receives and the wrappers made here
count into it too, so a SIGTERM the guard (installed after counting began) turns into an
interrupt is the user's.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from .. import arrivals as count

#: what is said of a KeyboardInterrupt raised by the benchmark's own code
MESSAGE = "KeyboardInterrupt raised by the benchmark itself (no Ctrl-C arrived)"


class OwnInterrupt(Exception):
    """A ``KeyboardInterrupt`` the benchmark raised itself: a failure of the benchmark, not
    the user's Ctrl-C."""


def arrivals() -> int:
    """Signals counted so far (the one count: see the module notes)."""
    return count.arrivals()


def _wrap(previous: Any) -> Any:
    def handler(signum: int, frame: Any) -> Any:
        if not handler.retired and not getattr(previous, "counts_arrivals", False):  # type: ignore[attr-defined]
            count.count_arrival()  # (the guard, and an inner wrapper, count their own)
        return previous(signum, frame)
    handler.__wrapped__ = previous  # type: ignore[attr-defined]
    # a wrapper counts, so a wrapper around it (counting begun inside counting, or a handler
    # left installed by a caller) delegates the count to it: one arrival, one count
    handler.counts_arrivals = True  # type: ignore[attr-defined]
    handler.retired = False  # type: ignore[attr-defined] # set when its block ends beneath another
    return handler


#: the signals whose handlers raise KeyboardInterrupt (or a subclass, as the command line's
#: SIGTERM and SIGHUP handlers do)
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))


@contextlib.contextmanager
def counting() -> Iterator[bool]:
    """Count arrivals of SIGINT, SIGTERM and SIGHUP in the block; yields whether counting is
    in force (the main thread, with a Python handler of SIGINT to wrap). The handlers are put
    back after, each only while it is still the one in force (:func:`arrivals.live_handler`)."""
    if threading.current_thread() is not threading.main_thread() or \
            not callable(signal.getsignal(signal.SIGINT)):
        yield False
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    wrappers = {s: (h, _wrap(h)) for s, h in previous.items() if callable(h)}
    for signum, (_, wrapper) in wrappers.items():
        signal.signal(signum, wrapper)
    try:
        yield True
    finally:
        for signum, (original, wrapper) in wrappers.items():
            if signal.getsignal(signum) is wrapper:
                signal.signal(signum, original)
            else:
                # a handler installed over ours (the machine guard, begun inside this block and
                # not yet ended) is still needed: it stays, and puts back what ours wraps
                wrapper.retired = True


def raised_by_benchmark(exc: BaseException, before: int, active: bool) -> bool:
    """True when ``exc`` (a ``KeyboardInterrupt``) was raised by the benchmark itself: counting
    is in force and no SIGINT arrived since ``before``."""
    return active and isinstance(exc, KeyboardInterrupt) and arrivals() == before
