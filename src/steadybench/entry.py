"""The entry point of the ``steadybench`` command: the console script and ``python -m steadybench``.

Ctrl-C while Python is still importing the command line (click, the command's modules) used to
end in a ``KeyboardInterrupt`` traceback, since no handler of the command was in place yet. So
this module, which imports nothing but :mod:`signal` and :mod:`sys`, first makes SIGINT end the
process at once and quietly with status 130 (:func:`_exit_interrupted` raises ``SystemExit``,
which Python does not print); once :mod:`steadybench.cli` is imported, SIGINT raises
``KeyboardInterrupt`` again, so that the command's own handlers write partial results, restore
the machine and exit 130 as documented. A ``KeyboardInterrupt`` that arrives between the two
also ends the process quietly with 130.

A SIGINT that is ignored when the command starts (a background job of a script) stays ignored,
and a handler installed by an embedding program is left alone.
"""

from __future__ import annotations

import atexit
import signal
import sys

#: exit status after Ctrl-C (128 + SIGINT), as shells use
EXIT_INTERRUPTED = 130


def _exit_interrupted(signum: int, frame: object) -> None:
    """SIGINT during start-up: end now, quietly, with status 130."""
    raise SystemExit(EXIT_INTERRUPTED)


def _ignore_late_signals() -> None:
    """The last exit handler: from here Python only tears itself down, and it puts the default
    action back for every signal it handles, so a second Ctrl-C (or SIGTERM, SIGHUP) would
    kill the process with it (-2, -15, -1) instead of the command's status: ignore them now."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    atexit.register(_ignore_late_signals)  # registered first: runs after every other one
    guarded = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if guarded:
        signal.signal(signal.SIGINT, _exit_interrupted)
    from .cli import main as cli_main  # SIGINT now: SystemExit(130), no traceback

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        if guarded:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        return cli_main(args, late_exit=True)
    except KeyboardInterrupt:  # before the command line's own handlers were in place
        return EXIT_INTERRUPTED
