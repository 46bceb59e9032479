"""Meters that watch the machine while it measures (Rancid §II-A, §V-A "Meter").

Sampled after each run and stored alongside the times, so a report can plot frequency,
temperature and load against the run times and a processor can flag runs where the frequency
changed or a sensor passed a threshold. Metric names and units are fixed: ``cpu_freq`` (MHz),
``temperature`` (°C), ``loadavg`` (no unit), ``devfreq:NAME`` (MHz, one per devfreq device:
the GPU and memory-bus frequency steps of Rancid §VI-D). A reading that fails gives no value
for that run (NaN in the column) rather than failing the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable

from ..meters.base import Meter
from .actions import current_affinity, frequency_reading, temperature_reading
from .devices import DEVFREQ_DIR
from .readers import read_load
from .sysfs import SysRoot


class _ReadingMeter(Meter):
    def __init__(self, read: Callable[[], float]) -> None:
        self.read = read
        self.last_error: str | None = None

    def stop(self, ok: bool) -> float | None:
        try:
            return float(self.read())
        except Exception as exc:  # a sensor must never fail the benchmark
            self.last_error = str(exc)
            return None


class CpuFrequencyMeter(_ReadingMeter):
    """The slowest current frequency (MHz) among the CPUs this process may run on (the pinned
    cores), read from ``scaling_cur_freq`` just after each run."""

    name = "cpu_freq"
    unit = "MHz"

    def __init__(self, root: SysRoot, cpus: Callable[[], list[int]] = current_affinity) -> None:
        super().__init__(frequency_reading(root, cpus))


class TemperatureMeter(_ReadingMeter):
    """The hottest of the chosen sensors (°C; all readable ones by default) after each run."""

    name = "temperature"
    unit = "°C"

    def __init__(self, root: SysRoot, sensors: list[str] | None = None,
                 units: dict[str, str] | None = None) -> None:
        super().__init__(temperature_reading(root, sensors, units))


class LoadMeter(_ReadingMeter):
    """The 1-minute load average after each run."""

    name = "loadavg"
    unit = ""

    def __init__(self, root: SysRoot) -> None:
        super().__init__(_LoadReading(root))


class _LoadReading:
    """The 1-minute load average under ``root`` (a class, not a closure, so a worker process
    can receive it)."""

    def __init__(self, root: SysRoot) -> None:
        self.root = root

    def __call__(self) -> float:
        load = read_load(self.root)["loadavg"]
        if load is None:
            raise OSError("/proc/loadavg unreadable")
        return load[0]


class DevfreqMeter(_ReadingMeter):
    """The current frequency (MHz) of one devfreq device (a GPU, a memory bus), read from
    ``/sys/class/devfreq/NAME/cur_freq`` (Hz) just after each run. Named ``devfreq:NAME``."""

    unit = "MHz"

    def __init__(self, root: SysRoot | str = "/", device: str = "") -> None:
        root = root if isinstance(root, SysRoot) else SysRoot(root)
        if not device:
            from ..errors import ConfigurationError

            raise ConfigurationError("devfreq meter: name the device (/sys/class/devfreq/NAME)")
        self.name = f"devfreq:{device}"
        super().__init__(_DevfreqReading(root, device))


class _DevfreqReading:
    def __init__(self, root: SysRoot, device: str) -> None:
        self.root, self.device = root, device

    def __call__(self) -> float:
        hz = self.root.read_int(f"{DEVFREQ_DIR}/{self.device}/cur_freq")
        if hz is None:
            raise OSError(f"/{DEVFREQ_DIR}/{self.device}/cur_freq unreadable")
        return hz / 1e6
