"""A hard time limit on code that runs in this process: a benchmark measured ``--in-process``,
or a benchmark file imported by the main process (issue 27 item 12).

A worker process or a command that never returns is killed from outside; code in this process
cannot be. Here ``SIGALRM`` (``setitimer``, POSIX ``ITIMER_REAL``) interrupts it: the handler
raises :class:`HardTimeLimit` in the main thread, which ends ``time.sleep`` and other blocking
calls (PEP 475: a handler that raises ends the retry), a pure-Python loop at its next
instruction, and a regular expression inside ``_sre`` (it checks for signals as it matches).
The timer repeats every :data:`REPEAT` seconds after the limit, so code that catches the
exception and carries on is interrupted again.

A benchmark that blocks signals in its thread (``pthread_sigmask``) would never see the
signal; a helper thread, which leaves ``SIGALRM`` unblocked, then signals itself: CPython runs
the handler in the main thread at its next instruction. What no signal can end (C code that
neither checks for signals nor returns while signals are blocked, ``time.sleep`` with signals
blocked) is left to isolation: run in worker processes, which are killed from outside.

The guard is installed only in the main thread and only when nobody else handles ``SIGALRM``
(a user's program that uses it keeps it).
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
from collections.abc import Callable, Iterator

#: seconds between repeated alarms once the limit has passed
REPEAT = 0.5
#: seconds to wait for the helper thread to end when the block ends (it ends at once: it only
#: waits on an event and signals itself)
JOIN_TIMEOUT = 5.0


class HardTimeLimit(BaseException):
    """Raised in the main thread when code under :func:`deadline` runs past its limit. A
    ``BaseException`` (like ``KeyboardInterrupt``): a benchmark's ``except Exception`` does not
    swallow it."""


def _catcher(stop: threading.Event, first: float) -> None:
    """Signal this thread itself from ``first`` seconds on, every :data:`REPEAT`: when the main
    thread blocks ``SIGALRM`` the kernel may pick any other thread for the timer's signal (a
    numpy thread that blocks it too); a signal sent to this one reaches CPython's handler,
    which runs the Python handler in the main thread at its next instruction."""
    wait = first
    while not stop.wait(wait):
        signal.pthread_kill(threading.get_ident(), signal.SIGALRM)
        wait = REPEAT


def grace(seconds: float) -> float:
    """Seconds after a limit before the alarm: a loop that checks the limit itself between
    runs stops there first, and only code that does not come back is interrupted."""
    return min(max(0.5, 0.05 * seconds), 5.0)


@contextlib.contextmanager
def deadline(seconds: float | None, what: str, late: float = 0.0,
             overdue: Callable[[], bool] | None = None) -> Iterator[None]:
    """Raise :class:`HardTimeLimit` ("``what``: still running at the hard time limit of N s")
    in the main thread when the block runs longer than ``seconds`` (plus ``late``); nothing
    when ``seconds`` is None or infinite, outside the main thread, or when ``SIGALRM`` already
    has a handler. ``overdue`` (when given) is asked at every alarm whether the limit has
    really passed by the caller's own account (a run loop counts the time of its runs, not its
    bookkeeping): the alarm raises only when it says so, and asks again :data:`REPEAT` s
    later otherwise."""
    usable = (seconds is not None and math.isfinite(seconds) and seconds > 0
              and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread()
              and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None))
    if not usable:
        yield
        return
    assert seconds is not None
    message = f"{what}: still running at the hard time limit of {seconds:g} s"

    def alarm(signum: int, frame: object) -> None:
        if overdue is None or overdue():
            raise HardTimeLimit(message)

    stop = threading.Event()
    late = max(late, 0.0)
    helper = threading.Thread(target=_catcher, args=(stop, seconds + late + REPEAT),
                              name="steadybench-deadline", daemon=True)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())  # the main thread's, to put back
    signal.signal(signal.SIGALRM, alarm)
    try:
        helper.start()  # created with SIGALRM unblocked, whatever the benchmark blocks later
        signal.setitimer(signal.ITIMER_REAL, seconds + late, REPEAT)
        yield
    finally:
        # Order matters: until the helper has ended and the mask is back, an alarm may still
        # come (the helper's own, or one pending behind a mask the benchmark set), and under
        # the default disposition SIGALRM ends the process. So: ignore it (which also discards
        # a pending one), stop the timer, end the helper, put the mask back, and only then
        # restore the default (a run under load was killed by SIGALRM between cases when the
        # default came back before the helper had stopped).
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        stop.set()
        if helper.ident is not None:
            helper.join(JOIN_TIMEOUT)
        # a benchmark that blocked signals in this thread must not leave Ctrl-C blocked
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if not helper.is_alive():  # else ignoring stray alarms is the safe disposition
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
