"""The ``gpu`` countermeasure: lock the GPU clocks (the action is in
:mod:`steadybench.system.nvidia`).

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``gpu`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from ...errors import ConfigurationError
from ...runner.runner import Stage
from .base import Built, Countermeasure, PresetMachine, Skip


class Gpu(Countermeasure):
    """Lock NVIDIA graphics clocks through NVML (before the benchmark), reset at the end."""

    options: ClassVar[dict[str, Any]] = {"mhz": None, "gpus": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        from ..nvidia import GpuClockLockAction, read_nvidia

        state = read_nvidia()
        if not state["available"]:
            raise Skip(str(state["reason"]))
        mhz = o["mhz"]
        if mhz is not None and (isinstance(mhz, bool) or not isinstance(mhz, int) or mhz <= 0):
            raise ConfigurationError(f"[gpu] mhz must be a positive integer, got {mhz!r}")
        gpus = o["gpus"]
        if gpus is not None and (not isinstance(gpus, list) or not all(
                isinstance(g, int) and not isinstance(g, bool) for g in gpus)):
            raise ConfigurationError("[gpu] gpus: a list of GPU indices")
        if os.geteuid() != 0:
            raise Skip("needs root: NVML locks clocks for root only")
        action = GpuClockLockAction(gpus, mhz)
        return [(Stage.BEFORE_BENCHMARK, action)], action.describe()
