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


def live_handler(handler: object) -> object:
    """``handler`` without the counting wrappers around it whose block has ended.

    Handlers are installed and put back by two hands that do not always nest: a case's counting
    (:func:`steadybench.runner.sigint.counting`) can end while the machine guard installed
    inside it is still in place. A hand that finds another's handler on top when it ends leaves
    it there and marks its own wrapper ``retired``; whoever later puts back a handler it saved
    puts back what the retired wrappers wrap, so the program ends with its own handler.
    """
    while getattr(handler, "retired", False) and hasattr(handler, "__wrapped__"):
        handler = handler.__wrapped__
    return handler
