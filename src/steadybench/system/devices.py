"""Readers of the devices beyond the CPU: devfreq (GPU, memory bus), RAPL, power supplies, NVML.

Rancid §III-A and §IV-A1: on phones and boards the biggest frequency effects are the GPU's (its
default governor "tends to change frequency levels often"), and §VI-D suspects memory (DDR)
frequency steps behind an unexplained anomaly. Linux exposes both through *devfreq*
(``/sys/class/devfreq/<device>``: ``governor``, ``available_governors``, ``cur_freq``,
``min_freq``, ``max_freq``, ``available_frequencies``, frequencies in Hz). Energy comes from the
powercap RAPL zones (``/sys/class/powercap/intel-rapl:N/energy_uj``) on x86 and from the power
supplies' ``current_now`` × ``voltage_now`` on Android; NVIDIA GPUs are read through NVML
(:mod:`.nvidia`). Every reader returns plain JSON types and never raises for a missing file.
"""

from __future__ import annotations

import re
from typing import Any

from .sysfs import SysRoot

DEVFREQ_DIR = "sys/class/devfreq"
POWERCAP_DIR = "sys/class/powercap"
POWER_SUPPLY_DIR = "sys/class/power_supply"

#: name fragments that mark a devfreq device as a GPU or a memory bus (assumption: vendors name
#: their devices after the block, e.g. ``11800000.mali``, ``kgsl-3d0``, ``dmc``, ``ddrfreq``)
GPU_HINTS = ("gpu", "mali", "kgsl", "adreno", "g3d", "sgx", "pvr", "3d0")
MEMORY_HINTS = ("ddr", "dmc", "memory", "mem", "bus", "cci", "llcc", "bw", "emc", "dram")

_RAPL_TOP = re.compile(r"^[a-z]+-rapl:\d+$")


def devfreq_kind(name: str, governor_hint: str = "") -> str:
    """``gpu``, ``memory`` or ``other``, from the device's name (see :data:`GPU_HINTS`)."""
    low = name.lower()
    if any(h in low for h in GPU_HINTS):
        return "gpu"
    if any(h in low for h in MEMORY_HINTS):
        return "memory"
    return "other"


def devfreq_names(root: SysRoot) -> list[str]:
    """The devfreq devices under ``/sys/class/devfreq``."""
    return [n for n in root.listdir(DEVFREQ_DIR) if not n.startswith(".")]


def _mhz_hz(hz: int | None) -> float | None:
    return None if hz is None else hz / 1e6


def read_devfreq_device(root: SysRoot, name: str) -> dict[str, Any]:
    """One devfreq device: kind, governor(s), current/min/max frequency and the steps (MHz)."""
    base = f"{DEVFREQ_DIR}/{name}"
    governors = root.read(f"{base}/available_governors")
    steps_text = root.read(f"{base}/available_frequencies") or ""
    steps = []
    for word in steps_text.split():
        try:
            steps.append(int(word) / 1e6)
        except ValueError:
            continue
    return {
        "name": name,
        "path": "/" + base,
        "kind": devfreq_kind(name),
        "governor": root.read(f"{base}/governor"),
        "available_governors": governors.split() if governors else [],
        "cur_mhz": _mhz_hz(root.read_int(f"{base}/cur_freq")),
        "min_mhz": _mhz_hz(root.read_int(f"{base}/min_freq")),
        "max_mhz": _mhz_hz(root.read_int(f"{base}/max_freq")),
        "steps_mhz": sorted(steps),
    }


def read_devfreq(root: SysRoot) -> list[dict[str, Any]]:
    """Every devfreq device (see :func:`read_devfreq_device`)."""
    return [read_devfreq_device(root, n) for n in devfreq_names(root)]


def rapl_zones(root: SysRoot) -> list[str]:
    """The top-level powercap RAPL zones (``intel-rapl:0``, ``intel-rapl:1``...: one per
    package). Their sub-zones (``intel-rapl:0:0``: cores, uncore, DRAM) are parts of the package
    and are left out so nothing is counted twice."""
    return [z for z in root.listdir(POWERCAP_DIR) if _RAPL_TOP.match(z)
            and root.exists(f"{POWERCAP_DIR}/{z}/energy_uj")]


def read_rapl(root: SysRoot) -> list[dict[str, Any]]:
    """Each top-level RAPL zone: ``{zone, name, energy_uj, max_energy_range_uj, readable}``.

    ``energy_uj`` is readable by root only on kernels since 5.10 (CVE-2020-8694), so
    ``readable`` is False for other users there.
    """
    out = []
    for zone in rapl_zones(root):
        base = f"{POWERCAP_DIR}/{zone}"
        energy = root.read_int(f"{base}/energy_uj")
        out.append({"zone": zone, "name": root.read(f"{base}/name") or zone,
                    "energy_uj": energy,
                    "max_energy_range_uj": root.read_int(f"{base}/max_energy_range_uj"),
                    "readable": energy is not None})
    return out


def read_supply_power(root: SysRoot) -> list[dict[str, Any]]:
    """Power supplies that report ``current_now`` (µA) and ``voltage_now`` (µV), with the power
    they give (W, the magnitude: Android batteries report discharge as negative or positive
    current depending on the vendor)."""
    out = []
    for name in root.listdir(POWER_SUPPLY_DIR):
        base = f"{POWER_SUPPLY_DIR}/{name}"
        current = root.read_int(f"{base}/current_now")
        voltage = root.read_int(f"{base}/voltage_now")
        if current is None or voltage is None:
            continue
        out.append({"name": name, "type": root.read(f"{base}/type") or "?",
                    "current_ua": current, "voltage_uv": voltage,
                    "watts": abs(current) * abs(voltage) / 1e12})
    return out


def read_nvidia() -> dict[str, Any]:
    """NVIDIA GPUs through NVML (:func:`steadybench.system.nvidia.read_nvidia`)."""
    from .nvidia import read_nvidia as read

    return read()


def device_lines(state: dict[str, Any]) -> list[str]:
    """The devices of a :func:`~steadybench.system.readers.machine_state` in words (one line
    each), for ``system show``."""

    def mhz(value: float | None) -> str:
        return "-" if value is None else f"{value:g}"

    lines = []
    for d in state.get("devfreq") or []:
        gov = d.get("governor") or "?"
        lines.append(f"devfreq {d['name']} ({d['kind']}): governor {gov}, "
                     f"{mhz(d.get('cur_mhz'))} MHz (min {mhz(d.get('min_mhz'))}, "
                     f"max {mhz(d.get('max_mhz'))}; available: "
                     f"{' '.join(d.get('available_governors') or []) or 'none listed'})")
    if not state.get("devfreq"):
        lines.append("devfreq: no devices (/sys/class/devfreq): no GPU or memory-bus "
                     "frequency to read or set")
    for z in state.get("rapl") or []:
        reading = f"{z['energy_uj']} µJ" if z["readable"] else "energy_uj not readable (root)"
        lines.append(f"RAPL {z['zone']} ({z['name']}): {reading}, wraps at "
                     f"{z.get('max_energy_range_uj')} µJ")
    nv = state.get("nvidia") or {}
    if nv.get("available"):
        for g in nv.get("gpus", []):
            clocks = g.get("clocks_mhz") or {}
            lines.append(f"NVIDIA GPU {g['index']} {g['name']}: graphics "
                         f"{mhz(clocks.get('graphics'))} MHz, memory {mhz(clocks.get('memory'))} "
                         f"MHz, {mhz(g.get('temperature_c'))} °C, {mhz(g.get('power_w'))} W")
    elif nv:
        lines.append(f"NVIDIA: {nv.get('reason')}")
    return lines
