"""Meters: what is recorded for each run (Rancid §V-A, "Meter").

A meter is started just before the measured code and stopped just after it, and returns one
value per run. Meters nest around the timing: the first meter in the list is started first and
stopped last, and the wall-time reading of the measurement method is always innermost, so no
meter's own cost enters the time (Rancid: "execution time meters should be added last").
"""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigurationError


class Meter:
    """Base class. ``name`` keys the metric in Results; ``unit`` names its unit."""

    name: str = "meter"
    unit: str = ""

    def start(self) -> None:
        """Called just before the measured code."""

    def stop(self, ok: bool) -> float | None:
        """Called just after it; ``ok`` says whether it ran without raising. Returns the value."""
        raise NotImplementedError

    def close(self) -> None:
        """Called once after the last run of a case."""


class WallTimeMeter(Meter):
    """Elapsed wall time from a monotonic nanosecond clock, in seconds per execution.

    The measurement method reads this meter's clock around the measured code, innermost of all
    meters, and records the value through :meth:`record`; it is never started like the others.
    """

    name = "wall_time"
    unit = "s"

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.clock = clock

    @staticmethod
    def record(elapsed_ns: int, executions: int) -> float:
        return elapsed_ns / executions / 1e9

    def stop(self, ok: bool) -> float | None:  # pragma: no cover - never called by the runner
        raise RuntimeError("WallTimeMeter is read by the measurement method, not started/stopped")


class CpuTimeMeter(Meter):
    """CPU time of this process (user + system) during the run, in seconds."""

    name = "cpu_time"
    unit = "s"

    def __init__(self, clock: Callable[[], int] = time.process_time_ns) -> None:
        self.clock = clock
        self._t0 = 0

    def start(self) -> None:
        self._t0 = self.clock()

    def stop(self, ok: bool) -> float | None:
        return (self.clock() - self._t0) / 1e9


class TimestampMeter(Meter):
    """When the run started: seconds since the Unix epoch (``time.time``), so the runs can be
    placed in time and the time the countermeasures took between them can be seen (Rancid §VI:
    the cost of cool-down and warm-up is measured in total benchmarking time)."""

    name = "timestamp"
    unit = "s"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._t0 = 0.0

    def start(self) -> None:
        self._t0 = float(self.clock())

    def stop(self, ok: bool) -> float | None:
        return self._t0


class SuccessfulRunsMeter(Meter):
    """1 for a run that completed, 0 for one that raised (Rancid's SuccessfulRunsMeter)."""

    name = "success"
    unit = ""

    def stop(self, ok: bool) -> float | None:
        return 1.0 if ok else 0.0


class PeakMemoryMeter(Meter):
    """Peak Python heap allocated during the run, in bytes (``tracemalloc``).

    Tracing allocations slows the measured code down, so keep this meter out of benchmarks
    whose times you compare.
    """

    name = "peak_memory"
    unit = "B"

    def __init__(self) -> None:
        self._started_here = False

    def start(self) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start()
            self._started_here = True
        tracemalloc.reset_peak()
        self._base = tracemalloc.get_traced_memory()[0]

    def stop(self, ok: bool) -> float | None:
        _current, peak = tracemalloc.get_traced_memory()
        return float(max(peak - self._base, 0))

    def close(self) -> None:
        if self._started_here:
            tracemalloc.stop()
            self._started_here = False


def read_number(path: str | os.PathLike[str], scale: float = 1.0) -> float:
    """Read one number from a text file (for example a sysfs sensor) and multiply by ``scale``.

    Raises OSError when the file cannot be read (or is not a regular file of at most 1 MiB: a
    FIFO or a device is never read) and ValueError when it holds no number.
    """
    from ..system.sysfs import read_regular_file

    data = read_regular_file(path, limit=2**20)
    if data is None:
        raise OSError(f"{path}: not a readable regular file of at most 1 MiB")
    text = data.decode("utf-8", errors="replace").strip()
    try:
        return float(text.split()[0]) * scale
    except (IndexError, ValueError):
        raise ValueError(f"{path} does not hold a number: {text[:40]!r}") from None


class FileValueMeter(Meter):
    """A number read from a file after each run (Rancid's FileContentsMeter).

    ``scale`` converts the file's unit (sysfs temperatures are in millidegrees: scale=0.001).
    An unreadable file gives no value for that run rather than failing the benchmark.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        name: str | None = None,
        unit: str = "",
        scale: float = 1.0,
    ) -> None:
        self.path = Path(path)
        self.name = name or self.path.name
        self.unit = unit
        self.scale = scale
        self.last_error: str | None = None

    def stop(self, ok: bool) -> float | None:
        try:
            return read_number(self.path, self.scale)
        except (OSError, ValueError) as exc:
            self.last_error = str(exc)
            return None


class CallableMeter(Meter):
    """A user-defined reading: ``read()`` is called after each run (or, with ``delta=True``,
    before and after, and the difference is recorded)."""

    def __init__(
        self, name: str, read: Callable[[], float], unit: str = "", delta: bool = False
    ) -> None:
        if not callable(read):
            raise ConfigurationError(f"meter {name!r}: read must be callable")
        self.name = name
        self.unit = unit
        self.read = read
        self.delta = delta
        self._before = 0.0

    def start(self) -> None:
        if self.delta:
            self._before = float(self.read())

    def stop(self, ok: bool) -> float | None:
        value = float(self.read())
        return value - self._before if self.delta else value
