"""Meters: wall time, CPU time, successful runs, peak memory, file values, user readings."""

from .base import (
    CallableMeter,
    CpuTimeMeter,
    FileValueMeter,
    Meter,
    PeakMemoryMeter,
    SuccessfulRunsMeter,
    WallTimeMeter,
    read_number,
)

__all__ = [
    "CallableMeter",
    "CpuTimeMeter",
    "FileValueMeter",
    "Meter",
    "PeakMemoryMeter",
    "SuccessfulRunsMeter",
    "WallTimeMeter",
    "read_number",
]
