"""Holding back Ctrl-C, SIGTERM and SIGHUP while the outputs are written.

Once the outputs start being written, every one of them is written before a signal is
honoured: :class:`DeferredSignals` replaces the SIGINT, SIGTERM and SIGHUP handlers (those
not ignored) by one that only
records the signal, and when it stops it puts the previous handlers back and sends the
process the signal it held back (SIGTERM, else SIGHUP, over SIGINT), so the command ends
exactly as it
would have (status 130 or 143), only later.

Deferral nests: while one is active, starting another does nothing, so the outermost one (the
command's) decides when the signal is honoured. Python runs signal handlers in the main thread
only; elsewhere deferral does nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType

#: the signals held back
SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                if hasattr(signal, name))

_active: DeferredSignals | None = None


class DeferredSignals:
    """A context manager (or :meth:`start` … :meth:`stop`) that holds back SIGINT, SIGTERM and
    SIGHUP."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, object] = {}

    @property
    def active(self) -> bool:
        return bool(self._previous)

    def _record(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)

    def start(self) -> DeferredSignals:
        """Begin holding signals back (nothing when another deferral is active, or off the
        main thread)."""
        global _active
        if _active is not None or threading.current_thread() is not threading.main_thread():
            return self
        try:
            for signum in SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup: stays ignored
                    self._previous[signum] = signal.signal(signum, self._record)
        except BaseException:  # a signal that came before the last handler was in place
            self._restore()
            raise
        _active = self
        return self

    def _restore(self) -> None:
        global _active
        previous, self._previous = self._previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if _active is self:
            _active = None

    def stop(self) -> None:
        """Put the previous handlers back and send the signal held back, if any (its handler
        usually raises, here)."""
        if not self.active:
            return
        self._restore()
        if self.received:
            strong = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None))
                      if s in self.received]
            signum = strong[0] if strong else self.received[0]
            self.received.clear()
            signal.raise_signal(signum)

    def __enter__(self) -> DeferredSignals:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


@contextlib.contextmanager
def signals_held_from_session_end() -> Iterator[DeferredSignals]:
    """For commands that run their session without a Manager (``exec``, ``iters``,
    ``sweep``): the caller starts the yielded deferral the moment the session ends or is
    interrupted, so a second signal cannot cut the writing of the (partial) results short; the
    end of the block honours what was held back."""
    deferral = DeferredSignals()
    try:
        yield deferral
    finally:
        deferral.stop()
