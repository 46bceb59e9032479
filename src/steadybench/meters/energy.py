"""Energy meters: joules per run from RAPL, a power supply, or an NVIDIA GPU (Rancid §III:
"the variable could be some metric of performance or energy").

- :class:`RaplEnergyMeter`: the powercap RAPL counters (``/sys/class/powercap/intel-rapl:N/
  energy_uj``, one per package, µJ) read before and after the run. A counter wraps to 0 after
  ``max_energy_range_uj``; when the reading after is smaller than the one before, the counter
  wrapped once and the energy is ``after + max_energy_range_uj - before`` (assumption, named: a
  run shorter than one wrap period, minutes at full load).
- :class:`SupplyEnergyMeter`: Android-style ``power_supply`` ``current_now`` (µA) ×
  ``voltage_now`` (µV) read before and after the run, the energy being the mean of the two
  powers times the run's duration (trapezoid rule over one interval: a rough figure for runs
  whose power changes inside them; the kernel updates these readings every few seconds on many
  phones, so use it on long runs).
- :class:`NvmlEnergyMeter`: the GPU's total energy counter (``nvmlDeviceGetTotalEnergyConsumption``,
  mJ, Volta and later) before and after.

:class:`EnergyMeter` (registered as ``energy``) is RAPL where it is readable, else the power
supply; ``gpu_energy`` is NVML. Every meter's value is joules (unit ``J``) and is stored per run
like any other metric, so ``compare --metric energy`` compares it. A reading that fails gives
no value for that run (NaN), never a failed benchmark; :attr:`available` says at build time
whether the meter can read anything, and ``reason`` why not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..system.devices import POWER_SUPPLY_DIR, POWERCAP_DIR, rapl_zones, read_supply_power
from ..system.sysfs import SysRoot
from .base import Meter


def _root(root: SysRoot | str) -> SysRoot:
    return root if isinstance(root, SysRoot) else SysRoot(root)


def rapl_delta(before: int, after: int, max_range: int | None) -> int:
    """Energy (µJ) between two readings of one RAPL counter, across one wrap-around."""
    if after >= before:
        return after - before
    if not max_range:
        raise ValueError("the RAPL counter went backwards and max_energy_range_uj is unknown")
    return after + max_range - before


class RaplEnergyMeter(Meter):
    """Joules used by the CPU packages during the run (sum of the top-level RAPL zones)."""

    name = "energy"
    unit = "J"

    def __init__(self, root: SysRoot | str = "/", zones: list[str] | None = None) -> None:
        self.root = _root(root)
        self.zones = zones if zones is not None else rapl_zones(self.root)
        self.ranges = {z: self.root.read_int(f"{POWERCAP_DIR}/{z}/max_energy_range_uj")
                       for z in self.zones}
        self._before: dict[str, int | None] = {}
        self.last_error: str | None = None

    @property
    def reason(self) -> str | None:
        """Why this meter cannot read (None: it can)."""
        if not self.zones:
            return f"no RAPL zone under /{POWERCAP_DIR} (no energy_uj)"
        if any(self._read(z) is None for z in self.zones):
            return "RAPL energy_uj is not readable (root only since Linux 5.10)"
        return None

    def _read(self, zone: str) -> int | None:
        return self.root.read_int(f"{POWERCAP_DIR}/{zone}/energy_uj")

    def start(self) -> None:
        self._before = {z: self._read(z) for z in self.zones}

    def stop(self, ok: bool) -> float | None:
        total = 0
        for zone in self.zones:
            before, after = self._before.get(zone), self._read(zone)
            if before is None or after is None:
                self.last_error = f"{zone}: energy_uj unreadable"
                return None
            try:
                total += rapl_delta(before, after, self.ranges.get(zone))
            except ValueError as exc:
                self.last_error = f"{zone}: {exc}"
                return None
        return total / 1e6


class SupplyEnergyMeter(Meter):
    """Joules drawn from the power supplies reporting ``current_now`` and ``voltage_now``."""

    name = "energy"
    unit = "J"

    def __init__(self, root: SysRoot | str = "/", supplies: list[str] | None = None,
                 clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.root = _root(root)
        # the supplies are found once; each reading then reads two files per supply
        self.supplies = [s["name"] for s in read_supply_power(self.root)
                         if supplies is None or s["name"] in supplies]
        self.clock = clock
        self._p0: float | None = None
        self._t0 = 0
        self.last_error: str | None = None

    def _power(self) -> float | None:
        total = 0.0
        for name in self.supplies:
            base = f"{POWER_SUPPLY_DIR}/{name}"
            current = self.root.read_int(f"{base}/current_now")
            voltage = self.root.read_int(f"{base}/voltage_now")
            if current is None or voltage is None:
                return None
            total += abs(current) * abs(voltage) / 1e12
        return total if self.supplies else None

    @property
    def reason(self) -> str | None:
        if self._power() is None:
            return "no power supply reports current_now and voltage_now"
        return None

    def start(self) -> None:
        self._p0 = self._power()
        self._t0 = self.clock()

    def stop(self, ok: bool) -> float | None:
        t1 = self.clock()
        p1 = self._power()
        if self._p0 is None or p1 is None:
            self.last_error = "current_now/voltage_now unreadable"
            return None
        return (self._p0 + p1) / 2.0 * (t1 - self._t0) / 1e9


class EnergyMeter(Meter):
    """``energy``: RAPL where it is readable, else the power supply (see the module notes)."""

    name = "energy"
    unit = "J"

    def __init__(self, root: SysRoot | str = "/",
                 clock: Callable[[], int] = time.perf_counter_ns) -> None:
        rapl = RaplEnergyMeter(root)
        supply = SupplyEnergyMeter(root, clock=clock)
        why_rapl = rapl.reason
        self.inner: RaplEnergyMeter | SupplyEnergyMeter = rapl if why_rapl is None else supply
        self.source = "rapl" if why_rapl is None else "power_supply"
        self.reason = None if why_rapl is None else supply.reason
        if self.reason is not None:
            self.reason = f"{why_rapl}; {self.reason}"

    @property
    def available(self) -> bool:
        return self.reason is None

    def start(self) -> None:
        self.inner.start()

    def stop(self, ok: bool) -> float | None:
        return self.inner.stop(ok)


class NvmlEnergyMeter(Meter):
    """``gpu_energy``: joules the NVIDIA GPU ``index`` used during the run (NVML counter)."""

    name = "gpu_energy"
    unit = "J"

    def __init__(self, index: int = 0, nvml: Any = None) -> None:
        from ..system.nvidia import NvmlUnavailable, load_nvml

        self.index = int(index)
        self.reason: str | None = None
        self._before: float | None = None
        self.last_error: str | None = None
        self._handle: Any = None
        try:
            self.nvml = load_nvml(nvml)
            self._handle = self.nvml.nvmlDeviceGetHandleByIndex(self.index)
            self._read()
        except NvmlUnavailable as exc:
            self.reason = str(exc)
        except Exception as exc:  # no such GPU, or no energy counter on it
            self.reason = f"GPU {self.index}: no energy counter ({exc or type(exc).__name__})"

    @property
    def available(self) -> bool:
        return self.reason is None

    def _read(self) -> float:
        return float(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle))

    def __getstate__(self) -> dict[str, Any]:
        """A worker process loads NVML again (a module does not pickle)."""
        out = dict(self.__dict__)
        out["nvml"] = None
        out["_handle"] = None
        return out

    def _ensure(self) -> None:
        if self._handle is None and self.reason is None:
            from ..system.nvidia import load_nvml

            self.nvml = load_nvml()
            self._handle = self.nvml.nvmlDeviceGetHandleByIndex(self.index)

    def start(self) -> None:
        try:
            self._ensure()
            self._before = self._read()
        except Exception as exc:  # the GPU must never fail the benchmark
            self.last_error = str(exc)
            self._before = None

    def stop(self, ok: bool) -> float | None:
        if self._before is None:
            return None
        try:
            return (self._read() - self._before) / 1000.0
        except Exception as exc:
            self.last_error = str(exc)
            return None
