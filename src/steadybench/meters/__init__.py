"""Meters: wall time, CPU time, successful runs, peak memory, file values, user readings.

Meters are found by name in :data:`METERS`, the :data:`steadybench.registry.meters` registry
(with the machine meters ``cpu_freq``, ``temperature``, ``loadavg`` and ``devfreq`` of
:mod:`steadybench.system.meters`, and the energy meters ``energy`` and ``gpu_energy`` of
:mod:`steadybench.meters.energy`); another package adds one with a :class:`Meter` subclass and
a ``steadybench.meters`` entry point (``docs/extending.md``). A preset's ``[monitor]`` table
names the meters to record.
"""

from typing import Any

from .. import registry
from .base import (
    CallableMeter,
    CpuTimeMeter,
    FileValueMeter,
    Meter,
    PeakMemoryMeter,
    SuccessfulRunsMeter,
    TimestampMeter,
    WallTimeMeter,
    read_number,
)

#: meter name → class: the :data:`steadybench.registry.meters` registry
METERS = registry.meters


def make_meter(name: str, **options: Any) -> Meter:
    """The meter called ``name`` with ``options`` (values may be command-line strings)."""
    return METERS.create(name, **options)


__all__ = [
    "METERS",
    "CallableMeter",
    "CpuTimeMeter",
    "FileValueMeter",
    "Meter",
    "PeakMemoryMeter",
    "SuccessfulRunsMeter",
    "TimestampMeter",
    "WallTimeMeter",
    "make_meter",
    "read_number",
]
