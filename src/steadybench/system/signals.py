"""Signals while machine settings are changed or restored: recorded, then honoured.

Issue 12, items 1 and 7. The restore used to block SIGINT/SIGTERM/SIGHUP with
``pthread_sigmask`` in the thread doing it. A process-directed signal is then delivered to any
*other* thread (a tuned run has several), CPython's C handler only sets a flag, and the Python
handler runs in the main thread at its next bytecode, raising part-way through the restore: the
run ended with files still tuned. And the tuned run's own SIGTERM handler raised an exception
the command line did not know, so SIGTERM was reported as an interrupt (130, not 143).

Python runs every signal handler in the main thread whichever thread the kernel picked, so the
fix works at that level:

- :func:`install` (main thread) replaces the program's handlers of the guarded signals by
  :func:`_handler`; :func:`uninstall` puts them back. While installed, a signal is *delivered*
  by calling the program's own handler (the command line's SIGTERM handler records that the
  run was terminated and raises, so the exit status is 143), or, for a default disposition, by
  raising ``KeyboardInterrupt`` / :class:`Terminated` so every ``finally`` (the restore) runs;
  an ignored signal stays ignored.
- inside :func:`protected` (the writes and the restore) a signal is only recorded;
- once a signal has been delivered as an exception, later ones are recorded as well until the
  handlers are put back: the exception is unwinding towards the restore, and a second one
  raised on its way (SIGINT then SIGTERM at once) would skip it;
- recorded signals are honoured when the protected region ends, or, while an exception
  unwinds, when the handlers are put back: then the program's handlers see them (so SIGTERM
  still gives 143) but their exceptions are dropped, one being already on its way;
- a signal whose exception Python swallowed is sent again. A Python signal handler runs at the
  main thread's next bytecode, which may be inside a weakref callback, a ``__del__`` or the
  garbage collector; an exception raised there is only printed ("Exception ignored in ...",
  seen under load in importlib's module-lock callback), so the run went on as if no signal had
  come and a test waited for it in vain. While the handlers are installed,
  ``sys.unraisablehook`` is wrapped (:func:`_unraisable`): when the swallowed exception is the
  one a signal's delivery raised, a helper thread raises the signal again
  (:data:`RESEND_DELAY` later), to be delivered at the main thread's next bytecode, outside
  that callback; one that comes while the hook itself runs is sent again the same way (an
  exception raised inside the hook would be lost too). A signal sent again is not counted
  again (:mod:`steadybench.arrivals`).

Every entry point is re-entrant (nested regions, several tuned benchmarks in one run).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..arrivals import count_arrival, live_handler

#: how long after a swallowed delivery the signal is raised again (the main thread has left
#: the callback and the hook by then; if not, it is sent again)
RESEND_DELAY = 0.001

GUARDED_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while its disposition was the default; raised (like Ctrl-C) so
    that every ``finally``, and with it the restore, runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


@dataclass
class _State:
    previous: dict[int, Any] = field(default_factory=dict)
    owners: int = 0  # how many install() calls hold the handlers
    protecting: int = 0  # nesting depth of protected()
    raised: bool = False  # a signal was delivered as an exception that is still unwinding
    pending: list[int] = field(default_factory=list)
    #: the exception the last delivery raised, and its signal (for :func:`_unraisable`)
    in_flight: BaseException | None = None
    in_flight_signal: int = 0
    #: ``sys.unraisablehook`` before :func:`install` wrapped it
    previous_hook: Any = None
    in_hook: bool = False  # :func:`_unraisable` is running
    resent: int = 0  # signals raised again and not yet handled


_STATE = _State()


def _call_previous(signum: int, previous: dict[int, Any]) -> None:
    """Do what the program's own handler of ``signum`` does."""
    handler = previous.get(signum, signal.SIG_DFL)
    # a counting wrapper of steadybench.runner.sigint beneath the guard (counting begun before
    # the guard): the guard has counted this arrival, so call what the wrapper wraps
    while getattr(handler, "counts_arrivals", False) and hasattr(handler, "__wrapped__"):
        handler = handler.__wrapped__
    if handler is signal.SIG_IGN:
        return
    if callable(handler):
        handler(signum, None)
    elif signum == getattr(signal, "SIGINT", -1):
        raise KeyboardInterrupt
    else:
        raise Terminated(signum)


def _deliver(signum: int, previous: dict[int, Any]) -> None:
    try:
        _call_previous(signum, previous)
    except BaseException as exc:
        _STATE.in_flight, _STATE.in_flight_signal = exc, signum
        if isinstance(exc, KeyboardInterrupt):
            _STATE.raised = True
        raise


def _send_again(signum: int) -> None:
    """Raise ``signum`` again from a helper thread, :data:`RESEND_DELAY` from now."""
    _STATE.resent += 1
    timer = threading.Timer(RESEND_DELAY, signal.raise_signal, (signum,))
    timer.daemon = True
    timer.start()


def _unraisable(unraisable: Any) -> None:
    """``sys.unraisablehook`` while installed: the exception of a signal's delivery that Python
    swallowed (module docs) has the signal sent again; anything else goes to the hook that was
    there before."""
    _STATE.in_hook = True
    try:
        if unraisable.exc_value is not None and unraisable.exc_value is _STATE.in_flight:
            _STATE.in_flight, _STATE.raised = None, False
            _send_again(_STATE.in_flight_signal)
            return
        hook = _STATE.previous_hook or sys.__unraisablehook__
        hook(unraisable)
    finally:
        _STATE.in_hook = False


def _quietly(signum: int, previous: dict[int, Any]) -> None:
    """Let the program's handler see ``signum`` but drop the exception it raises."""
    with contextlib.suppress(KeyboardInterrupt):
        _call_previous(signum, previous)


def _handler(signum: int, frame: Any) -> None:
    if _STATE.resent:  # sent again by _send_again: counted when it first came
        _STATE.resent -= 1
    else:
        count_arrival()  # the one count (steadybench.arrivals): the user's, not the benchmark's
    if _STATE.in_hook:  # an exception raised in the hook would be lost as well
        _send_again(signum)
        return
    if _STATE.protecting or _STATE.raised:
        _STATE.pending.append(signum)
        return
    _deliver(signum, _STATE.previous)


_handler.counts_arrivals = True  # type: ignore[attr-defined] # sigint's wrappers: count no more


def _flush(previous: dict[int, Any], raised: bool) -> None:
    """Honour the recorded signals: quietly while an exception unwinds; else the last SIGTERM
    or SIGHUP (else the last SIGINT) is delivered and the others only seen."""
    pending, _STATE.pending = _STATE.pending, []
    if not pending:
        return
    if raised:
        for signum in pending:
            _quietly(signum, previous)
        return
    sigint = getattr(signal, "SIGINT", -1)
    strong = [i for i, s in enumerate(pending) if s != sigint]
    last = strong[-1] if strong else len(pending) - 1
    for i, signum in enumerate(pending):
        if i != last:
            _quietly(signum, previous)
    _deliver(pending[last], previous)


def install() -> bool:
    """Put :func:`_handler` in place of the guarded signals' handlers (main thread only; False
    elsewhere, where signals cannot interrupt anyway: Python raises them in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if _STATE.owners == 0:
        _STATE.previous, _STATE.raised, _STATE.pending = {}, False, []
        _STATE.in_flight, _STATE.resent = None, 0
        _STATE.previous_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
        for sig in GUARDED_SIGNALS:
            old = signal.getsignal(sig)
            if old is None or old is signal.SIG_IGN:  # not set from Python / ignored: left alone
                continue
            _STATE.previous[sig] = signal.SIG_DFL if old is _handler else old
            signal.signal(sig, _handler)
    _STATE.owners += 1
    return True


def uninstall() -> None:
    """Undo one :func:`install`; the last one puts the program's handlers back and honours the
    signals recorded meanwhile (which may raise)."""
    if _STATE.owners <= 0:
        return
    _STATE.owners -= 1
    if _STATE.owners:
        return
    previous, raised = _STATE.previous, _STATE.raised
    _STATE.previous, _STATE.raised = {}, False
    for sig, old in previous.items():
        signal.signal(sig, live_handler(old))  # a counting wrapper whose case ended: what it wraps
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = _STATE.previous_hook or sys.__unraisablehook__
    _STATE.previous_hook, _STATE.in_flight = None, None
    _flush(previous, raised)


@contextlib.contextmanager
def protected(deliver: bool = True) -> Iterator[None]:
    """Record the guarded signals while the block runs; honour them after it.

    With ``deliver=False`` signals recorded meanwhile wait for the :func:`uninstall` of an outer
    :func:`install` (the tuned run's restore: the lock is released and the handlers put back
    before the signal is honoured).
    """
    installed = install()
    _STATE.protecting += 1
    try:
        yield
    finally:
        _STATE.protecting -= 1
        outer = _STATE.owners - (1 if installed else 0)
        if installed:
            uninstall()
        if deliver and outer > 0 and not _STATE.protecting and \
                threading.current_thread() is threading.main_thread():
            _flush(_STATE.previous, _STATE.raised)


def pending() -> list[int]:
    """The signals recorded and not yet honoured (for tests and messages)."""
    return list(_STATE.pending)


def restore_quietly(restore: Callable[[], object], ctx: Any, label: str) -> None:
    """Run a countermeasure's journal restore with signals recorded, not delivered (they are
    honoured after it); a failure becomes a warning and ``restore_failed`` in the case's
    machine record, for ``system reset`` to finish (used by the background and gpu
    countermeasures)."""
    from ..errors import SystemControlError

    with protected(deliver=False):
        try:
            restore()
        except SystemControlError as exc:
            ctx.warn(f"{label}: {exc}")
            ctx.case.extra.setdefault("machine", {})["restore_failed"] = str(exc)
