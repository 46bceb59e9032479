"""A CPU-time sampler for the profiled process of a Python case: ``setitimer(ITIMER_PROF)``
interrupts the process every ``interval`` seconds of CPU time, and the signal handler records
the interrupted Python stack (code objects, so a sample costs a few microseconds), weighted by
the thread's CPU time since the previous sample.

Why its own (measured on this project's machine; docs/profiles.md, "Choosing the sampler"):
py-spy and pyinstrument sample wall time, so on a busy machine the time the process waits for
a core lands on whatever frame it waited in, and py-spy falls behind and takes bursts of
samples: under a load of 9 on 2 cores their share of ``slow()`` (called three times as often as
``fast()``, 0.75 expected) spread over 0.64-0.91 (py-spy) and 0.67-0.84 (pyinstrument).
pyinstrument weighted by CPU time (its ``timer_func``) stays within 0.72-0.79 but calls the
clock on every call and return: 39x slower on generator code. A timer signal costs nothing
between samples. The principle is the statistical profiler's of gprof and of Python's
``statprof``/``vmprof``: a CPU-time itimer and the interrupted stack.

What it cannot see: the frames of C code (a built-in's time is its Python caller's, as with
py-spy without ``--native``); threads other than the main one (signal handlers run there).
A signal arriving during a long C call is handled when it returns: the CPU time since the last
sample, not the number of signals, weights each sample, so such time is not lost.
"""

from __future__ import annotations

import signal
import sys
import time
from types import CodeType, FrameType
from typing import Any


class CpuSampler:
    """Start, run the code, stop; then :meth:`stacks` (outermost first, weights in CPU
    seconds) and :attr:`samples`."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.samples = 0
        self._acc: dict[tuple[CodeType, ...], float] = {}
        self._previous = 0.0
        self._old_handler: Any = None

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        now = time.thread_time()
        weight = now - self._previous
        self._previous = now
        codes = []
        while frame is not None:
            codes.append(frame.f_code)
            frame = frame.f_back
        key = tuple(reversed(codes))
        self._acc[key] = self._acc.get(key, 0.0) + weight
        self.samples += 1

    def start(self) -> None:
        self._old_handler = signal.signal(signal.SIGPROF, self._handler)
        self._previous = time.thread_time()
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._old_handler or signal.SIG_DFL)

    def stacks(self) -> list[list[Any]]:
        """``[[[name, file, first line], ...], cpu seconds]`` per distinct stack."""
        out = []
        for codes, weight in self._acc.items():
            frames = [[getattr(c, "co_qualname", c.co_name) if sys.version_info >= (3, 11)
                       else c.co_name, c.co_filename, c.co_firstlineno] for c in codes]
            out.append([frames, weight])
        return out
