"""The program side of the ITERS protocol, for Python programs measured by ``steadybench iters``.

The protocol (source ``004``): the program takes an iteration count, runs its workload that
many times in a tight loop and prints ``BATCHTIME: <seconds>`` (the loop's total time) and
``SELFTIMED: <seconds>`` (per iteration) on standard output. A program using this helper::

    # prog.py
    from steadybench.iters_protocol import main

    def setup(args):             # outside the timed region; gets the arguments after ITERS
        return list(range(int(args[0]) if args else 1000))[::-1]

    def work(data):              # one iteration
        sorted(data)

    if __name__ == "__main__":
        main(work, setup)

and then ``steadybench iters -- python prog.py 5000`` (the count is inserted as the first
argument: ``python prog.py ITERS 5000``).

The clock is ``time.perf_counter`` (monotonic, the highest resolution Python offers). The loop
costs one Python call per iteration beyond the workload; that cost is part of the slope, so
compare Python programs with Python programs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO


def parse_iters(argv: Sequence[str]) -> tuple[int, list[str]]:
    """Split ``[ITERS, ARGS...]`` into the count and the remaining arguments.

    Raises ``SystemExit(2)`` with a message when the count is missing or not a positive integer.
    """
    if not argv:
        raise SystemExit("usage: PROGRAM ITERS [ARGS...]")
    try:
        iters = int(argv[0])
    except ValueError:
        raise SystemExit(f"ITERS must be a positive integer, got {argv[0]!r}") from None
    if iters < 1:
        raise SystemExit(f"ITERS must be a positive integer, got {argv[0]!r}")
    return iters, list(argv[1:])


def time_loop(work: Callable[[Any], Any], iters: int, state: Any = None,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """Run ``work(state)`` ``iters`` times in a tight loop; return the loop's seconds."""
    t0 = clock()
    for _ in range(iters):
        work(state)
    return clock() - t0


def report(batchtime: float, iters: int, out: TextIO | None = None) -> None:
    """Print the protocol lines (``BATCHTIME`` and ``SELFTIMED``) and flush."""
    stream = out if out is not None else sys.stdout
    stream.write(f"BATCHTIME: {batchtime:.9e}\nSELFTIMED: {batchtime / iters:.9e}\n")
    stream.flush()


def main(work: Callable[[Any], Any], setup: Callable[[list[str]], Any] | None = None,
         argv: Sequence[str] | None = None) -> None:
    """The whole program side: parse ITERS, set up, time the loop, report."""
    iters, args = parse_iters(sys.argv[1:] if argv is None else argv)
    state = setup(args) if setup is not None else None
    report(time_loop(work, iters, state), iters)


def busy_wait(seconds: float, clock: Callable[[], float] = time.perf_counter) -> None:
    """Spin (no sleep) for ``seconds``: a workload of known length for tests and examples."""
    end = clock() + seconds
    while clock() < end:
        pass
