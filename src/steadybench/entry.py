"""The entry point of the ``steadybench`` command: the console script and ``python -m steadybench``.

Ctrl-C while Python is still importing the command line (click, the command's modules) used to
end in a ``KeyboardInterrupt`` traceback, since no handler of the command was in place yet. So
:func:`main` first (before any other import) makes SIGINT, SIGTERM and SIGHUP end the process at
once and quietly with the shell's status (130, 143, 129: :func:`_exit_quietly` raises
``SystemExit``, which Python does not print); once :mod:`steadybench.cli` is imported, SIGINT
raises ``KeyboardInterrupt`` again and SIGTERM and SIGHUP take back their earlier action, so that
the command's own handlers write partial results, restore the machine and exit as documented. A
``KeyboardInterrupt`` that arrives between the two also ends the process quietly with 130.

The window before that guard is as short as it can be made (issue 27 item 16: 4 Ctrl-Cs of 40
in the first 45 ms printed a traceback from steadybench's own imports): importing this module
(and the package's ``__init__``) loads no module the interpreter had not already loaded, only
``_signal`` and ``sys``, built in; :mod:`signal` (which imports :mod:`enum`), :mod:`atexit` and
the rest come after the guard. ``STEADYBENCH_TEST_HOLD_START`` (an open file descriptor) makes
:func:`main` write ``ready`` to it and wait there for a signal, just after the guard and before
any other import: the tests' way to interrupt the start-up without racing the clock.

A signal that is ignored when the command starts (a background job of a script) stays ignored,
and a handler installed by an embedding program is left alone.
"""

import _signal  # built in, loaded by the interpreter itself: the guard needs no other import
import sys

#: exit status after Ctrl-C (128 + SIGINT), as shells use
EXIT_INTERRUPTED = 130


#: the signals that end a command, with the shell's status for each (128 + the signal)
_ENDING = {getattr(_signal, name): 128 + getattr(_signal, name)
           for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name)}


def _exit_quietly(signum: int, frame: object) -> None:
    """A signal during start-up: end now, quietly, with the shell's status for it."""
    raise SystemExit(_ENDING.get(signum, EXIT_INTERRUPTED))


def _guard_start_up() -> dict[int, object]:
    """Make the ending signals exit quietly (those at their default action: an ignored one or
    an embedding program's handler is left alone); return the handlers they had."""
    before = {signum: _signal.getsignal(signum) for signum in _ENDING}
    for signum, handler in before.items():
        if handler in (_signal.default_int_handler, _signal.SIG_DFL):
            _signal.signal(signum, _exit_quietly)
    return before


def _hold_for_tests() -> None:
    """``STEADYBENCH_TEST_HOLD_START=FD``: say ``ready`` on FD and wait for a signal (tests
    interrupt the start-up at this point, after the guard and before every other import)."""
    import os  # loaded by the interpreter's start-up already: no new import

    fd = os.environ.get("STEADYBENCH_TEST_HOLD_START")
    if fd and fd.isdigit():
        os.write(int(fd), b"ready\n")
        while True:
            _signal.pause()  # the guard's SystemExit ends the wait


def _exit_with_status(signum: int, frame: object) -> None:
    """A signal while Python shuts down (its exit handlers: worker pools, temporary files):
    end now with the shell's status for it, output flushed."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - this module imports no contextlib
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream: nothing to flush
            pass
    os._exit(_ENDING.get(signum, 1))


def _exit_handlers_end_with_status() -> None:
    """The first exit handler to run (registered last): from here on a signal ends the
    process with its status (130, 143, 129) instead of being raised in an exit handler."""
    import signal

    for signum in _ENDING:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _exit_with_status)


def _ignore_late_signals() -> None:
    """The last exit handler: from here Python only tears itself down, and it puts the default
    action back for every signal it handles, so a second Ctrl-C (or SIGTERM, SIGHUP) would
    kill the process with it (-2, -15, -1) instead of the command's status: ignore them now."""
    import signal

    for signum in _ENDING:
        signal.signal(signum, signal.SIG_IGN)
    if _status[0] in _ENDING.values():
        _forget_caught_interrupt()


#: the status :func:`main` returned (None until it has)
_status: list[int | None] = [None]


def _forget_caught_interrupt() -> None:
    """Clear CPython's record of an interrupt that was in fact caught.

    CPython sets a C flag (``_Py_UnhandledKeyboardInterrupt``) when a ``KeyboardInterrupt``
    leaves code it runs through ``PyRun_String`` (as extension modules' imports do), and
    nothing clears it when that interrupt is caught further up, as the command line catches
    it. Under ``python -m`` (``pymain_run_module``), ``Py_RunMain`` then ends the process by
    killing it with SIGINT (status -2) after the command had chosen 130 and printed
    "interrupted": Ctrl-C during the first second of ``python -m steadybench run`` did so in
    about 1 trial of 20 (``benchmarks/interrupts.py``). Running an empty statement through the
    same function sets the flag back to 0; Python's own exit then returns our status."""
    try:
        import ctypes

        ctypes.pythonapi.PyRun_SimpleString(b"")
    except Exception:  # noqa: BLE001, S110 - another Python (PyPy): no such flag to clear
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Signals after the command (issue 27 item 16): while it prints its last line the command
    line's own late handler exits with the status; when this returns, the handlers are as they
    were (an embedding program keeps its own); Python's exit handlers then run with signals
    ending the process with its status, and its final teardown with them ignored."""
    before = _guard_start_up()  # first: a signal from here on exits quietly
    _hold_for_tests()
    import atexit
    import signal

    atexit.register(_ignore_late_signals)  # registered first: runs after every other one
    from .cli import main as cli_main  # a signal now: SystemExit(130/143/129), no traceback

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        for signum, handler in before.items():  # the command's own handling from here on
            if signal.getsignal(signum) is _exit_quietly:
                signal.signal(signum, handler)
        _status[0] = cli_main(args, late_exit=True)
        return _status[0]
    except KeyboardInterrupt:  # before the command line's own handlers were in place
        _status[0] = EXIT_INTERRUPTED
        return EXIT_INTERRUPTED
    finally:
        if argv is None:
            # the console script: no embedding program to give its handlers back to, and a
            # default action here would let a signal kill the process (-1) between this
            # return and Python's exit handlers
            _exit_handlers_end_with_status()
        else:
            for signum, handler in before.items():
                if handler is not None:
                    signal.signal(signum, handler)
        atexit.register(_exit_handlers_end_with_status)  # registered last: runs first
