"""Countermeasures as runner actions (Rancid §IV-A and §IV-C, built on ``runner.actions``): what
their actions share (tuning costs, temperature and frequency readings, the fastest CPUs).

Each action lives with the builder that adds it, one module per countermeasure in
:mod:`steadybench.system.countermeasures` (``tune``: :class:`TuneAction`,
:class:`KeepMinFreqAction`; ``pin``: :class:`PinAction`, :class:`PinFallbackAction`,
:class:`SpinWarmUpAction`; ``cooldown``: :class:`MachineCoolDownAction`; ``warmup``:
:class:`FrequencyWarmUpAction`; ``quiet``, ``settle``, ``power``, ``gc``, ``priority``); each is
still importable from here (:data:`MOVED`). Attach one with ``runner.add_action(Stage.X,
action)`` or through a preset (:mod:`.presets`). A preset names countermeasures, not actions:
each name is a :class:`~steadybench.system.countermeasures.base.Countermeasure` in the
:data:`steadybench.registry.countermeasures` registry that checks the machine and builds its
actions; a plug-in adds its own the same way (``docs/extending.md``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..errors import SystemControlError
from ..runner.actions import RunContext
from .readers import cpufreq_dir, read_cpus, read_thermal
from .signals import Terminated  # noqa: F401 - importable from here, as before
from .sysfs import SysRoot

#: how often :meth:`TuneAction.close` runs the (idempotent) restore when interrupted
RESTORE_ATTEMPTS = 3


def machine_extra(ctx: RunContext) -> dict[str, Any]:
    return ctx.case.extra.setdefault("machine", {})


def record_cost(ctx: RunContext, name: str, seconds: float, rounds: int = 0) -> None:
    """Add what countermeasure ``name`` cost before this run to
    ``case.extra["machine"]["costs"][name]``: total seconds, rounds (warm-up workloads,
    re-applied files...), how many runs it acted before, the longest single cost."""
    costs = machine_extra(ctx).setdefault("costs", {})
    entry = costs.setdefault(name, {"time_s": 0.0, "rounds": 0, "runs": 0, "max_s": 0.0})
    entry["time_s"] = round(entry["time_s"] + seconds, 9)
    entry["rounds"] += int(rounds)
    if seconds > 0 or rounds:
        entry["runs"] += 1
    entry["max_s"] = max(entry["max_s"], round(seconds, 9))


# ---------------------------------------------------------------------------- affinity
def fastest_cpus(root: SysRoot, allowed: set[int] | None = None) -> tuple[list[int], str]:
    """The fastest cluster among the online (and ``allowed``) CPUs, and how it was chosen.

    Rancid §III-C/§IV-A3: on big.LITTLE CPUs pin to the big cluster. The cluster is the CPUs with
    the highest ``cpu_capacity``; without capacities, those with the highest maximum frequency
    (``cpuinfo_max_freq``); when all CPUs look alike, all of them.
    """
    cpus = [c for c in read_cpus(root) if c["online"] and (allowed is None or c["cpu"] in allowed)]
    if not cpus:
        raise SystemControlError("no online CPU is available for pinning")
    caps = {c["capacity"] for c in cpus if c["capacity"] is not None}
    if len(caps) > 1:
        best = max(caps)
        return [c["cpu"] for c in cpus if c["capacity"] == best], f"highest cpu_capacity {best}"
    freqs = {c.get("hw_max_mhz") for c in cpus if c.get("hw_max_mhz") is not None}
    if len(freqs) > 1:
        best_f = max(freqs)
        return ([c["cpu"] for c in cpus if c.get("hw_max_mhz") == best_f],
                f"highest maximum frequency {best_f:g} MHz")
    return [c["cpu"] for c in cpus], "all CPUs alike"


# ---------------------------------------------------------------------------- sensors
def temperature_reading(root: SysRoot, sensors: list[str] | None = None,
                        units: dict[str, str] | None = None) -> Callable[[], float]:
    """A reading (°C) of the hottest of ``sensors`` (names as ``system show`` lists them, or
    paths under the root); all readable sensors when None. ``units`` overrides the unit of
    named sensors (:func:`~.readers.read_thermal`). Raises when none is readable."""
    return _TemperatureReading(root, sensors, units)


def frequency_reading(root: SysRoot, cpus: Callable[[], list[int]]) -> Callable[[], float]:
    """A reading (MHz) of the slowest current frequency among ``cpus()``."""
    return _FrequencyReading(root, cpus)


class _TemperatureReading:
    """See :func:`temperature_reading` (readings are classes, not closures, so that worker
    processes can receive them with the countermeasures that use them)."""

    def __init__(self, root: SysRoot, sensors: list[str] | None,
                 units: dict[str, str] | None = None) -> None:
        self.root, self.sensors, self.units = root, sensors, units

    def __call__(self) -> float:
        found = read_thermal(self.root, self.units)
        if self.sensors:
            found = [s for s in found if s["name"] in self.sensors or s["path"] in self.sensors]
        values = [s["celsius"] for s in found if s["celsius"] is not None]
        if not values:
            errors = "; ".join(f"{s['name']}: {s['error']}" for s in found) or "none found"
            raise SystemControlError(f"no readable temperature sensor ({errors})")
        return max(values)


class _FrequencyReading:
    """See :func:`frequency_reading`."""

    def __init__(self, root: SysRoot, cpus: Callable[[], list[int]]) -> None:
        self.root, self.cpus = root, cpus

    def __call__(self) -> float:
        values = []
        for cpu in self.cpus():
            rel = cpufreq_dir(self.root, cpu)
            khz = self.root.read_int(f"{rel}/scaling_cur_freq") if rel else None
            if khz is not None:
                values.append(khz / 1000.0)
        if not values:
            raise SystemControlError("no readable scaling_cur_freq for the pinned CPUs")
        return min(values)


def max_frequency(root: SysRoot, cpus: list[int]) -> float | None:
    """The lowest ``scaling_max_freq`` (MHz) among ``cpus``: the frequency all of them can reach."""
    values = []
    for cpu in cpus:
        rel = cpufreq_dir(root, cpu)
        khz = root.read_int(f"{rel}/scaling_max_freq") if rel else None
        if khz is not None:
            values.append(khz / 1000.0)
    return min(values) if values else None


def current_affinity() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))




#: the actions that moved to the module of their countermeasure
#: (:mod:`steadybench.system.countermeasures`), importable from here as before
MOVED = {"TuneAction": "tune", "KeepMinFreqAction": "tune", "PinAction": "pin",
         "PinFallbackAction": "pin", "SpinWarmUpAction": "pin",
         "MachineCoolDownAction": "cooldown", "FrequencyWarmUpAction": "warmup",
         "QuietMachineAction": "quiet", "SettleAfterBootAction": "settle",
         "PowerSupplyAction": "power", "GcAction": "gc", "PriorityAction": "priority"}


def __getattr__(name: str) -> Any:
    """``from steadybench.system.actions import TuneAction`` as before the move (imported on
    first use: the countermeasure modules import this one's helpers)."""
    module = MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__package__}.countermeasures.{module}"), name)
