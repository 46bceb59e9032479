"""Readers of the machine state that matters to a benchmark (Rancid §III, §IV-C).

Rancid identifies the systematic error sources of benchmarking as processor frequency (§III-A),
temperature (§III-B), processor affinity on big.LITTLE CPUs (§III-C) and background processes
(§III-D), plus a recently booted system, battery power and debug builds (§IV-C). Every function
here reads one of them from a :class:`~steadybench.system.sysfs.SysRoot` and returns plain JSON
types; anything missing or unreadable becomes ``None`` with a reason instead of an exception,
so ``steadybench system show`` can explain what it could not see.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
import sysconfig
import time
from collections.abc import Callable
from typing import Any

from .devices import read_devfreq, read_nvidia, read_rapl
from .sysfs import CPU_DIR, SysRoot, parse_cpulist

_CPU_RE = re.compile(r"^cpu(\d+)$")


def _mhz(khz: int | None) -> float | None:
    return None if khz is None else khz / 1000.0


def cpu_ids(root: SysRoot) -> list[int]:
    """Numbers of the CPUs present under ``/sys/devices/system/cpu``."""
    ids = []
    for name in root.listdir(CPU_DIR):
        match = _CPU_RE.match(name)
        if match:
            ids.append(int(match.group(1)))
    return sorted(ids)


def cpufreq_dir(root: SysRoot, cpu: int) -> str | None:
    """The cpufreq directory of ``cpu`` (relative to the root), or None without cpufreq."""
    rel = f"{CPU_DIR}/cpu{cpu}/cpufreq"
    if root.is_dir(rel):
        return rel
    rel = f"{CPU_DIR}/cpufreq/policy{cpu}"
    if root.is_dir(rel):
        return rel
    return None


def read_cpu(root: SysRoot, cpu: int) -> dict[str, Any]:
    """One CPU: online, governor, frequencies (MHz), ``cpu_capacity``, SMT siblings."""
    base = f"{CPU_DIR}/cpu{cpu}"
    online_flag = root.read_int(f"{base}/online")
    info: dict[str, Any] = {
        "cpu": cpu,
        # cpu0 often has no "online" file: it cannot be taken offline
        "online": True if online_flag is None else online_flag == 1,
        "capacity": root.read_int(f"{base}/cpu_capacity"),
    }
    try:
        siblings = parse_cpulist(root.read(f"{base}/topology/thread_siblings_list"))
    except ValueError:
        siblings = []
    info["smt_siblings"] = [c for c in siblings if c != cpu]
    freq = cpufreq_dir(root, cpu)
    info["cpufreq"] = freq is not None
    if freq is None:
        return info
    governors = root.read(f"{freq}/scaling_available_governors")
    info.update(
        driver=root.read(f"{freq}/scaling_driver"),
        governor=root.read(f"{freq}/scaling_governor"),
        available_governors=governors.split() if governors else [],
        cur_mhz=_mhz(root.read_int(f"{freq}/scaling_cur_freq")),
        min_mhz=_mhz(root.read_int(f"{freq}/scaling_min_freq")),
        max_mhz=_mhz(root.read_int(f"{freq}/scaling_max_freq")),
        hw_min_mhz=_mhz(root.read_int(f"{freq}/cpuinfo_min_freq")),
        hw_max_mhz=_mhz(root.read_int(f"{freq}/cpuinfo_max_freq")),
    )
    return info


def read_cpus(root: SysRoot) -> list[dict[str, Any]]:
    return [read_cpu(root, cpu) for cpu in cpu_ids(root)]


def read_boost(root: SysRoot) -> dict[str, Any]:
    """Boost/turbo: ``cpufreq/boost`` (1 = on) and ``intel_pstate/no_turbo`` (0 = turbo on).

    ``enabled`` is True/False when either file says so, None when neither exists.
    """
    boost = root.read_int(f"{CPU_DIR}/cpufreq/boost")
    no_turbo = root.read_int(f"{CPU_DIR}/intel_pstate/no_turbo")
    says = []
    if boost is not None:
        says.append(boost == 1)
    if no_turbo is not None:
        says.append(no_turbo == 0)
    enabled = any(says) if says else None
    return {"cpufreq_boost": boost, "intel_no_turbo": no_turbo, "enabled": enabled}


def read_isolated(root: SysRoot) -> dict[str, Any]:
    """CPUs isolated from the scheduler (``isolcpus=``) and tickless (``nohz_full=``)."""
    out: dict[str, Any] = {}
    for key, rel in (("isolated", f"{CPU_DIR}/isolated"), ("nohz_full", f"{CPU_DIR}/nohz_full")):
        try:
            out[key] = parse_cpulist(root.read(rel))
        except ValueError:
            out[key] = []
    return out


#: the units a temperature file may be in, and the factor to °C
SENSOR_UNITS = {"millidegrees": 0.001, "decidegrees": 0.1, "degrees": 1.0}
#: per-sensor unit overrides for ``system show``/``check``: ``NAME_OR_PATH=UNIT,...``
UNITS_ENV = "STEADYBENCH_SENSOR_UNITS"
#: a raw reading at least this large in magnitude is taken as millidegrees (the rule below)
MILLI_FROM = 1000


def sensor_units(text: str | None = None) -> dict[str, str]:
    """Per-sensor unit overrides from ``NAME_OR_PATH=UNIT,...`` (default: the environment
    variable ``STEADYBENCH_SENSOR_UNITS``). Raises ValueError on an unknown unit."""
    text = os.environ.get(UNITS_ENV, "") if text is None else text
    out: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, unit = part.rpartition("=")
        unit = unit.strip()
        if not sep or not name.strip() or unit not in SENSOR_UNITS:
            raise ValueError(f"sensor unit {part.strip()!r}: write NAME_OR_PATH=UNIT with UNIT "
                             f"one of {', '.join(SENSOR_UNITS)}")
        out[name.strip()] = unit
    return out


def detect_unit(raw: float) -> str:
    """The unit of a temperature file nobody named: the stated rule.

    The kernel's thermal and hwmon interfaces report millidegrees Celsius, but some Android
    vendors' sensors report whole degrees (Rancid §IV-C: "sensor data is expressed in varying
    units among devices"). The rule: a reading whose magnitude is at least 1000 is millidegrees
    (1 °C or more); a smaller one is whole degrees, because as millidegrees it would mean a
    running chip below 1 °C. Either way the result must be plausible (−60 to 200 °C) or the
    sensor is reported as unusable. Override per sensor where the rule guesses wrong (a battery
    in tenths of a degree: ``decidegrees``).
    """
    return "millidegrees" if abs(raw) >= MILLI_FROM else "degrees"


def _celsius(root: SysRoot, rel: str, unit: str | None = None
             ) -> tuple[float | None, str | None, str | None]:
    """A sysfs temperature → (°C, None, unit) or (None, why not, unit). ``unit`` overrides the
    rule of :func:`detect_unit`."""
    text = root.read(rel)
    if text is None:
        return None, "unreadable", unit
    try:
        raw = float(int(text.split()[0]))
    except (IndexError, ValueError):
        return None, f"not a number: {text[:20]!r}", unit
    used = unit or detect_unit(raw)
    value = raw * SENSOR_UNITS[used]
    if not -60.0 <= value <= 200.0:  # sensors that "always return invalid values" (§IV-C)
        return None, f"implausible value {value:g} °C (read as {used})", used
    return value, None, used


def _unit_for(units: dict[str, str], name: str, path: str, zone: str) -> str | None:
    for key in (name, path, zone, path.lstrip("/")):
        if key in units:
            return units[key]
    return None


def read_thermal(root: SysRoot, units: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Thermal zones and hwmon temperature inputs, each ``{name, path, celsius, error, unit,
    unit_source}``. ``units`` maps a sensor's name (as listed), path or zone directory to its
    unit (over ``STEADYBENCH_SENSOR_UNITS``); the others follow :func:`detect_unit`."""
    try:
        given = {**sensor_units(), **(units or {})}
    except ValueError:
        given = dict(units or {})
    sensors: list[dict[str, Any]] = []

    def add(name: str, rel: str, zone: str) -> None:
        override = _unit_for(given, name, "/" + rel, zone)
        value, error, unit = _celsius(root, rel, override)
        sensors.append({"name": name, "path": "/" + rel, "celsius": value, "error": error,
                        "unit": unit, "unit_source": "set" if override else "detected"})

    for zone in root.listdir("sys/class/thermal"):
        if not zone.startswith("thermal_zone"):
            continue
        kind = root.read(f"sys/class/thermal/{zone}/type") or "?"
        add(f"{zone}:{kind}", f"sys/class/thermal/{zone}/temp", zone)
    for hw in root.listdir("sys/class/hwmon"):
        base = f"sys/class/hwmon/{hw}"
        chip = root.read(f"{base}/name") or hw
        for entry in root.listdir(base):
            match = re.match(r"^(temp\d+)_input$", entry)
            if not match:
                continue
            label = root.read(f"{base}/{match.group(1)}_label") or match.group(1)
            add(f"{hw}:{chip}:{label}", f"{base}/{entry}", hw)
    return sensors


def read_fans(root: SysRoot) -> list[dict[str, Any]]:
    """hwmon fans: ``{name, rpm}``."""
    fans = []
    for hw in root.listdir("sys/class/hwmon"):
        base = f"sys/class/hwmon/{hw}"
        chip = root.read(f"{base}/name") or hw
        for entry in root.listdir(base):
            match = re.match(r"^(fan\d+)_input$", entry)
            if match:
                fans.append({"name": f"{hw}:{chip}:{match.group(1)}",
                             "rpm": root.read_int(f"{base}/{entry}")})
    return fans


def read_load(root: SysRoot) -> dict[str, Any]:
    """Load average (1, 5, 15 min) from ``/proc/loadavg`` and uptime from ``/proc/uptime``."""
    out: dict[str, Any] = {"loadavg": None, "uptime_s": None}
    text = root.read("proc/loadavg")
    if text:
        with contextlib.suppress(ValueError):
            out["loadavg"] = [float(x) for x in text.split()[:3]]
    text = root.read("proc/uptime")
    if text:
        with contextlib.suppress(IndexError, ValueError):
            out["uptime_s"] = float(text.split()[0])
    return out


def _proc_ticks(root: SysRoot) -> dict[int, tuple[str, int]]:
    """pid → (command, utime + stime in clock ticks) from ``/proc/<pid>/stat``."""
    ticks: dict[int, tuple[str, int]] = {}
    for name in root.listdir("proc"):
        if not name.isdigit():
            continue
        text = root.read(f"proc/{name}/stat")
        if not text or ")" not in text:
            continue
        head, _, rest = text.rpartition(")")
        comm = head.partition("(")[2]
        fields = rest.split()
        try:  # fields[0] is the state (field 3 of proc(5)); utime, stime are fields 14, 15
            ticks[int(name)] = (comm, int(fields[11]) + int(fields[12]))
        except (IndexError, ValueError):
            continue
    return ticks


def top_processes(root: SysRoot, interval: float = 0.5, count: int = 5,
                  sleep: Callable[[float], None] = time.sleep,
                  exclude: set[int] | None = None) -> list[dict[str, Any]]:
    """The processes that used the most CPU over ``interval`` seconds, as ``{pid, name, cpu_pct}``.

    CPU use is the growth of ``utime + stime`` (``/proc/<pid>/stat``) divided by the interval;
    100 % is one core busy. ``exclude`` (default: this process, on the real root) is left out.
    """
    if exclude is None:
        exclude = {os.getpid()} if root.is_real else set()
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    first = _proc_ticks(root)
    sleep(interval)
    second = _proc_ticks(root)
    busy = []
    for pid, (comm, after) in second.items():
        if pid in exclude or pid not in first:
            continue
        delta = after - first[pid][1]
        if delta > 0:
            busy.append({"pid": pid, "name": comm,
                         "cpu_pct": round(100.0 * delta / hz / max(interval, 1e-9), 1)})
    busy.sort(key=lambda p: -p["cpu_pct"])
    return busy[:count]


def read_power(root: SysRoot) -> dict[str, Any]:
    """Power supplies: ``on_ac`` True (mains online), False (battery discharging), None unknown."""
    supplies = []
    mains_online = False
    discharging = False
    for name in root.listdir("sys/class/power_supply"):
        base = f"sys/class/power_supply/{name}"
        kind = root.read(f"{base}/type") or "?"
        online = root.read_int(f"{base}/online")
        status = root.read(f"{base}/status")
        supplies.append({"name": name, "type": kind, "online": online, "status": status})
        if kind in ("Mains", "USB", "USB_C", "USB_PD") and online == 1:
            mains_online = True
        if kind == "Battery" and status == "Discharging":
            discharging = True
    on_ac: bool | None = None
    if mains_online:
        on_ac = True
    elif discharging or supplies and any(s["type"] in ("Mains", "USB") for s in supplies):
        on_ac = False
    return {"on_ac": on_ac, "supplies": supplies}


def read_kernel(root: SysRoot) -> dict[str, Any]:
    """ASLR, ``perf_event_paranoid``, kernel release and command line."""
    return {
        "release": root.read("proc/sys/kernel/osrelease"),
        "aslr": root.read_int("proc/sys/kernel/randomize_va_space"),
        "perf_event_paranoid": root.read_int("proc/sys/kernel/perf_event_paranoid"),
        "cmdline": root.read("proc/cmdline"),
    }


def read_cpu_model(root: SysRoot) -> str | None:
    text = root.read("proc/cpuinfo")
    if not text:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "Processor", "cpu model"):
            return value.strip()
    return None


def python_state() -> dict[str, Any]:
    """The running interpreter: debug build, ``-X dev``, assertions, hash seed, GC (§IV-C:
    benchmark release builds with no debugging support)."""
    return {
        "version": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "debug_build": bool(sysconfig.get_config_var("Py_DEBUG")),
        "dev_mode": bool(sys.flags.dev_mode),
        "assertions": sys.flags.optimize == 0,
        "optimize": sys.flags.optimize,
        "hash_randomization": bool(sys.flags.hash_randomization),
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
        "gc_enabled": gc.isenabled(),
        "gc_threshold": list(gc.get_threshold()),
    }


def machine_state(root: SysRoot, top_interval: float = 0.5,
                  sleep: Callable[[float], None] = time.sleep,
                  units: dict[str, str] | None = None) -> dict[str, Any]:
    """Everything above in one JSON-ready dict (what ``system show --json`` prints);
    ``units`` overrides sensor units (:func:`read_thermal`)."""
    state: dict[str, Any] = {
        "root": str(root.root),
        "cpu_model": read_cpu_model(root),
        "cpus": read_cpus(root),
        "boost": read_boost(root),
        "isolation": read_isolated(root),
        "temperatures": read_thermal(root, units),
        "devfreq": read_devfreq(root),
        "rapl": read_rapl(root),
        "nvidia": read_nvidia(),
        "fans": read_fans(root),
        "power": read_power(root),
        "kernel": read_kernel(root),
        "python": python_state(),
    }
    state.update(read_load(root))
    state["top_processes"] = top_processes(root, top_interval, sleep=sleep) \
        if top_interval > 0 else []
    try:
        sensor_units()
        state["sensor_units_error"] = None
    except ValueError as exc:
        state["sensor_units_error"] = f"{UNITS_ENV}: {exc} (ignored)"
    return state


def hottest(root: SysRoot, units: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The readable sensor with the highest temperature, or None."""
    readable = [s for s in read_thermal(root, units) if s["celsius"] is not None]
    return max(readable, key=lambda s: s["celsius"]) if readable else None
