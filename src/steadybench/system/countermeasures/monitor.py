"""The ``monitor`` countermeasure: meters that watch the machine with every run (changing nothing).

Its preset builder and the action it adds, in one module (pyperf keeps one ``Operation``
per setting the same way); registered as ``monitor`` in
:data:`steadybench.registry.countermeasures`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ... import registry
from ...errors import ConfigurationError
from ...meters.base import Meter
from ..actions import current_affinity
from ..devices import devfreq_names
from ..meters import CpuFrequencyMeter, DevfreqMeter, LoadMeter, TemperatureMeter
from .base import Built, Countermeasure, FixedCpus, PresetMachine, sensor_names, sensor_units

#: the meters the monitor records by default (each skipped, with the reason, where unavailable)
MONITOR_METERS = ["cpu_freq", "temperature", "loadavg", "timestamp", "devfreq", "energy",
                  "gpu_energy"]


class Monitor(Countermeasure):
    """Meters that watch the machine: ``cpu_freq``, ``temperature``, ``loadavg``,
    ``timestamp``, ``devfreq`` (one ``devfreq:NAME`` per device), ``energy`` (RAPL or the power
    supply), ``gpu_energy`` (NVML), or any other registered meter that needs no options
    (:data:`steadybench.registry.meters`)."""

    options: ClassVar[dict[str, Any]] = {"meters": MONITOR_METERS, "sensors": None,
                                         "units": None}

    def build(self, machine: PresetMachine, o: dict[str, Any]) -> Built:
        return [], ""

    def meters(self, machine: PresetMachine,
               o: dict[str, Any]) -> tuple[list[Meter], list[dict[str, str]]]:
        from ...meters.base import TimestampMeter
        from ...meters.energy import EnergyMeter, NvmlEnergyMeter

        meters: list[Meter] = []
        skipped: list[dict[str, str]] = []
        wanted = o["meters"]
        if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
            raise ConfigurationError("[monitor] meters: a list of meter names (" +
                                     ", ".join(MONITOR_METERS) + ", or a registered meter)")
        pinned = machine.pinned
        for name in wanted:
            meter: Meter
            if name == "cpu_freq":
                meter = CpuFrequencyMeter(
                    machine.root, FixedCpus(pinned) if pinned is not None else current_affinity)
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:cpu_freq",
                                    "reason": "no readable scaling_cur_freq (no cpufreq files)"})
                    continue
            elif name == "temperature":
                meter = TemperatureMeter(machine.root, sensor_names(o, "monitor"),
                                         sensor_units(o, "monitor"))
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:temperature",
                                    "reason": str(meter.last_error)})
                    continue
            elif name == "loadavg":
                meter = LoadMeter(machine.root)
                if meter.stop(True) is None:
                    skipped.append({"name": "monitor:loadavg",
                                    "reason": "/proc/loadavg unreadable"})
                    continue
            elif name == "timestamp":
                meter = TimestampMeter()
            elif name == "devfreq":
                devices = devfreq_names(machine.root)
                if not devices:
                    skipped.append({"name": "monitor:devfreq",
                                    "reason": "no devfreq device (/sys/class/devfreq)"})
                for dev in devices:
                    dmeter = DevfreqMeter(machine.root, dev)
                    if dmeter.stop(True) is None:
                        skipped.append({"name": f"monitor:{dmeter.name}",
                                        "reason": str(dmeter.last_error)})
                    else:
                        meters.append(dmeter)
                continue
            elif name in ("energy", "gpu_energy"):
                emeter = EnergyMeter(machine.root) if name == "energy" else NvmlEnergyMeter()
                if not emeter.available:
                    skipped.append({"name": f"monitor:{name}", "reason": str(emeter.reason)})
                    continue
                meter = emeter
            else:
                try:
                    if registry.meters.canonical(name) == "wall_time":
                        raise ConfigurationError("wall_time is read by the measurement method, "
                                                 "not by a monitor")
                    meter = registry.meters.create(name)
                except ConfigurationError as exc:
                    raise ConfigurationError(f"[monitor] meters: {exc}") from exc
            meters.append(meter)
        return meters, skipped
