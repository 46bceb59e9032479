"""The report's figures: collected while the views are built, drawn all at once afterwards
(in ``fork``-ed worker processes when there are many), each with a bounded wait.

A figure is an :class:`Image`: its name, a function that builds the matplotlib figure, and,
once drawn, its PNG as a ``data:`` URI. :func:`draw_all` draws every image of a
:class:`FigureSet`; a figure not drawn within :data:`FIGURE_TIMEOUT` seconds (or
``STEADYBENCH_FIGURE_TIMEOUT``) is left out, its caption says why, and one warning names how
many were left out: a figure that hangs never hangs the report.

The waits use :class:`multiprocessing.pool.AsyncResult` (the futures of a
:class:`multiprocessing.pool.Pool`): unlike :mod:`concurrent.futures` on Python 3.11 its pool can
end a worker stuck in a figure (:meth:`~multiprocessing.pool.Pool.terminate`). In-process
figures are drawn in a daemon thread each, so a hung one is left behind instead of waited for.
"""

from __future__ import annotations

import base64
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..fileio import atomic_write_bytes

#: figures are drawn in worker processes when there are at least this many
PARALLEL_FIGURES = 12
#: at most this many worker processes draw figures
MAX_WORKERS = 4
#: seconds the report waits for one figure (a figure takes 0.1 s to a few seconds)
FIGURE_TIMEOUT = 120.0


@dataclass
class Image:
    """A figure to embed: drawn later (maybe in another process), then its PNG as a data URI."""

    name: str
    make: Callable[[], Any]
    caption: str = ""
    src: str = ""


@dataclass
class FigureSet:
    """The figures of one report, in the order they were added, and where files go."""

    plots_dir: Path | None
    plot_format: str
    images: list[Image] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    #: cases given figures of their own so far (the views stop at their MAX_CASE_FIGURES)
    cases_drawn: int = 0

    def add(self, name: str, make: Callable[[], Any], caption: str = "") -> Image:
        image = Image(name, make, caption)
        self.images.append(image)
        return image


_JOBS: list[Image] = []
_FORMAT = "png"


def _render(index: int) -> tuple[bytes, bytes | None]:
    """Draw figure ``index`` of :data:`_JOBS`: (PNG, the other format or None)."""
    from .figures.common import figure_bytes

    fig = _JOBS[index].make()
    png = figure_bytes(fig, "png")
    other = figure_bytes(fig, _FORMAT) if _FORMAT != "png" else None
    # no fig.clear(): it re-creates every axes' ticks (0.1 s a figure) only to drop them
    return png, other


def _worker_init() -> None:
    """A drawing worker: Ctrl-C is the parent's to handle, and SIGTERM ends it at once (a
    handler inherited from the parent would run Python code that may wait on a lock some other
    thread of the parent held when it forked)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _env_number(name: str, kind: type, default: Any) -> Any:
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value <= 0:
        raise ConfigurationError(f"{name} must be a positive number, got {text!r}")
    return value


def workers(count: int) -> int:
    """Worker processes for ``count`` figures: ``STEADYBENCH_REPORT_WORKERS``, else one per
    core up to :data:`MAX_WORKERS` when there are at least :data:`PARALLEL_FIGURES`."""
    env = os.environ.get("STEADYBENCH_REPORT_WORKERS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            raise ConfigurationError(f"STEADYBENCH_REPORT_WORKERS must be a whole number, "
                                     f"got {env!r}") from None
    if count < PARALLEL_FIGURES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_WORKERS, cores or 1))


def figure_timeout() -> float:
    """Seconds to wait for one figure: ``STEADYBENCH_FIGURE_TIMEOUT`` or :data:`FIGURE_TIMEOUT`."""
    return float(_env_number("STEADYBENCH_FIGURE_TIMEOUT", float, FIGURE_TIMEOUT))


Drawn = tuple[bytes, bytes | None] | None


def _in_process(count: int, timeout: float) -> list[Drawn]:
    """Draw each figure in a daemon thread of its own, waiting at most ``timeout`` for it."""
    out: list[Drawn] = []
    for index in range(count):
        box: list[tuple[bytes, bytes | None]] = []
        failure: list[BaseException] = []

        def draw(i: int = index, box: list = box, failure: list = failure) -> None:
            try:
                box.append(_render(i))
            except BaseException as exc:  # re-raised in the report's thread
                failure.append(exc)

        thread = threading.Thread(target=draw, name=f"steadybench-figure-{index}", daemon=True)
        thread.start()
        thread.join(timeout)
        if failure:
            raise failure[0]
        out.append(box[0] if box else None)
    return out


def _in_workers(count: int, processes: int, timeout: float) -> list[Drawn]:
    """Draw the figures in ``processes`` forked workers; wait at most ``timeout`` per figure
    from when its turn to be waited for comes; a worker stuck in a figure is ended with the
    pool."""
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(processes, initializer=_worker_init)
    out: list[Drawn] = []
    try:
        pending = [pool.apply_async(_render, (i,)) for i in range(count)]
        for job in pending:
            try:
                out.append(job.get(timeout))
            except multiprocessing.TimeoutError:
                out.append(None)
        pool.close()
    finally:
        pool.terminate()  # ends the workers, a hung one too
        pool.join()
    return out


def draw_all(figs: FigureSet) -> list[str]:
    """Draw every figure (in ``fork``-ed workers when there are many and several cores);
    each worker reads the figure list it inherited, so no data is copied to it. A figure not
    drawn in time keeps an empty ``src``, a caption saying so, and one warning counts them.
    Returns the names of the figures left out."""
    global _JOBS, _FORMAT

    _JOBS, _FORMAT = figs.images, figs.plot_format
    count = len(figs.images)
    timeout = figure_timeout()
    try:
        processes = workers(count)
        # fork only on Linux (elsewhere system libraries are not safe to fork) and only from
        # a single-threaded process: a lock another thread holds at the fork stays locked
        # forever in the child
        if processes > 1 and sys.platform.startswith("linux") \
                and threading.active_count() == 1:
            outputs = _in_workers(count, processes, timeout)
        else:
            outputs = _in_process(count, timeout)
    finally:
        _JOBS = []
    missed = []
    for image, drawn in zip(figs.images, outputs):
        if drawn is None:
            missed.append(image.name)
            image.caption = (f"not drawn: it took longer than {timeout:g} s "
                             "(STEADYBENCH_FIGURE_TIMEOUT)")
            continue
        png, other = drawn
        image.src = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        if figs.plots_dir is not None:
            data = png if figs.plot_format == "png" else other
            figs.written.append(atomic_write_bytes(
                figs.plots_dir / f"{image.name}.{figs.plot_format}", data or b""))
    if missed:
        warnings.warn(f"the report left out {len(missed)} figure(s) not drawn within "
                      f"{timeout:g} s each: {', '.join(missed[:5])}"
                      f"{' …' if len(missed) > 5 else ''}", RuntimeWarning, stacklevel=2)
    return missed


def eager_image(figs: FigureSet, fig: Any, name: str) -> dict[str, str]:
    """Draw ``fig`` now (a context section's figures are part of its markup): a PNG data URI,
    written to the plots folder too when one was asked for."""
    from .figures.common import figure_bytes

    png = figure_bytes(fig, "png")
    if figs.plots_dir is not None:
        data = png if figs.plot_format == "png" else figure_bytes(fig, figs.plot_format)
        figs.written.append(atomic_write_bytes(figs.plots_dir / f"{name}.{figs.plot_format}",
                                               data))
    return {"src": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
            "name": name}
