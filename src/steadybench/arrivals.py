"""The one count of ending signals (SIGINT, SIGTERM, SIGHUP) that arrived in this process.

Two handlers count into it: the machine-control guard's (:mod:`steadybench.system.signals`)
and the wrappers :mod:`steadybench.runner.sigint` puts around the program's handlers while a
case runs. A ``KeyboardInterrupt`` during which the count did not change was raised by the
benchmark's own code, not by the user (issue 27 item 15). This module imports nothing, so the
runner of a worker process and the guard share it without importing each other's packages.
"""

_count = 0


def count_arrival() -> None:
    """Count one arrival (called by a signal handler, first thing)."""
    global _count
    _count += 1


def arrivals() -> int:
    """Signals counted so far."""
    return _count
