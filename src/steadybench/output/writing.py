"""Writing every output a command asked for: each on its own, all before a signal counts.

:func:`write_each` writes a list of outputs (JSON, XML, CSV, Markdown, HTML report): every one
is tried even when another fails (a full disk under the JSON does not stop the CSV on another
disk), each failure is reported in one line, and Ctrl-C or SIGTERM arriving meanwhile is held
back (:class:`~steadybench.output.deferral.DeferredSignals`) until all were written, so no
output is left as the previous run's version.

:func:`outputs_before_signals` starts that deferral earlier, when the session finishes (its
:class:`ResultsKeeper` is a logger that holds the Results from the start), so a second Ctrl-C
during the last console output cannot cut the outputs off either.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SteadybenchError
from ..model.results import Results
from .deferral import DeferredSignals
from .loggers import Logger

if TYPE_CHECKING:
    from ..manager import Manager

#: Used by tests only: ``"W,R"``, two file descriptors. After the first output is written, the
#: writer writes ``paused`` and a newline to W and waits for a byte on R, so a test can signal
#: the process at a known point of the writing.
PAUSE_ENV = "STEADYBENCH_TEST_PAUSE_OUTPUTS"


class OutputsFailed(SteadybenchError):
    """Some outputs could not be written (each was reported); the others were."""


@dataclass(frozen=True)
class Output:
    """One file to write: what asked for it (``--json``), its path, and the call that writes
    it and returns the path written."""

    label: str
    path: str | os.PathLike[str]
    write: Callable[[], Path]


def _stderr_line(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _pause_for_tests() -> None:
    spec = os.environ.get(PAUSE_ENV)
    if not spec:
        return
    out_fd, in_fd = (int(fd) for fd in spec.split(","))
    os.write(out_fd, b"paused\n")
    os.read(in_fd, 1)


def _failure(output: Output, exc: Exception) -> str:
    if isinstance(exc, SteadybenchError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"cannot write {output.path}: {exc.strerror or exc}"
    return (f"cannot write {output.path} ({output.label}): internal error: "
            f"{type(exc).__name__}: {exc}")


def write_each(outputs: Sequence[Output],
               report: Callable[[str], None] = _stderr_line) -> tuple[list[Path], list[str]]:
    """Write every output, signals held back; return the paths written and the failures
    (each also given to ``report``, one line each)."""
    written: list[Path] = []
    failures: list[str] = []
    with DeferredSignals():
        for index, output in enumerate(outputs):
            try:
                written.append(output.write())
            except Exception as exc:  # one output's failure, whatever it is, spares the others
                failures.append(_failure(output, exc))
                report(failures[-1])
            if index == 0:
                _pause_for_tests()
    return written, failures


def failed_summary(failures: Sequence[str], total: int) -> OutputsFailed:
    """The error a command ends with when outputs failed."""
    return OutputsFailed(f"{len(failures)} of {total} output(s) not written (see above)")


class ResultsKeeper(Logger):
    """Keeps the session's Results (:attr:`results`) and holds signals back from the moment
    the session finishes (:attr:`deferral`, stopped by whoever writes the outputs)."""

    def __init__(self) -> None:
        self.results: Results | None = None
        self.deferral = DeferredSignals()

    def start(self, results: Results, total_cases: int) -> None:
        self.results = results

    def finish(self, results: Results) -> None:
        self.results = results
        self.deferral.start()

    def partial(self, exc: KeyboardInterrupt) -> Results:
        """The Results to write after the interrupt ``exc`` (the manager's PartialResults, or
        a signal that came while the last loggers ran), marked interrupted, with signals held
        back from now on; ``exc`` itself when nothing was measured yet."""
        results = getattr(exc, "results", None)
        results = self.results if results is None else results
        if results is None:
            raise exc
        self.deferral.start()
        results.interrupted = True
        return results


@contextlib.contextmanager
def outputs_before_signals(manager: Manager) -> Iterator[ResultsKeeper]:
    """Around running ``manager`` and writing its outputs: from the end of the session (or
    :meth:`ResultsKeeper.partial`) to the end of the block, Ctrl-C and SIGTERM are held back,
    then honoured. Yields the :class:`ResultsKeeper`, made the manager's first logger."""
    keeper = ResultsKeeper()
    manager.loggers.insert(0, keeper)
    try:
        yield keeper
    finally:
        keeper.deferral.stop()  # a signal held back is honoured here
