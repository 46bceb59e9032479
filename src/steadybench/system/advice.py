"""Advice and warnings about a machine state, and the fitness check of a preset.

Each finding names one of Rancid's error sources (§III: frequency, temperature, affinity,
background load; §IV-C: recently booted, battery power, debug builds) and says what to do.
Levels: ``missing`` (the machine does not expose it; steadybench cannot read or control it),
``warning`` (it will skew measurements), ``advice`` (worth doing for steadier numbers) and
``info``. :func:`check` applies a preset's :class:`Rules` and returns the reasons a machine is
not fit to benchmark.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .sysfs import CPU_DIR, format_cpulist


@dataclass
class Rules:
    """Thresholds that decide whether the machine is fit (``system check``) and that the
    countermeasures wait on. Every field can be set in a custom preset file."""

    #: °C above which a sensor counts as hot (the cool-down upper threshold)
    max_temperature: float = 70.0
    #: seconds after boot before the machine counts as settled (Rancid §IV-C)
    min_uptime: float = 300.0
    #: 1-minute load average allowed per online CPU
    max_load_per_cpu: float = 0.5
    #: CPU use (%, 100 = one core) allowed for any other single process
    max_process_cpu: float = 10.0
    #: fail the check on battery power
    require_ac: bool = True
    #: fail the check when the frequency governor is not "performance" (only where it can be
    #: read); presets that tune at run time set this False
    require_performance_governor: bool = False
    #: fail the check on a debug build or ``-X dev``
    require_release_python: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _finding(level: str, topic: str, message: str) -> dict[str, str]:
    return {"level": level, "topic": topic, "message": message}


def assess(state: dict[str, Any], rules: Rules | None = None) -> list[dict[str, str]]:
    """Findings about a :func:`~steadybench.system.readers.machine_state` dict."""
    rules = rules or Rules()
    out: list[dict[str, str]] = []
    cpus = state.get("cpus", [])
    online = [c for c in cpus if c.get("online")]
    offline = [c["cpu"] for c in cpus if not c.get("online")]
    if offline:
        out.append(_finding("info", "cpus", f"CPUs {format_cpulist(offline)} are offline"))
    freq = [c for c in online if c.get("cpufreq")]
    if not freq:
        out.append(_finding(
            "missing", "frequency",
            f"no cpufreq files (/{CPU_DIR}/cpu*/cpufreq): the frequency can neither be read nor "
            "set; governor tuning, frequency warm-up and the cpu_freq meter are unavailable "
            "(normal on a virtual machine, where the host controls the frequency)"))
    else:
        slow = [c["cpu"] for c in freq if c.get("governor") != "performance"]
        if slow:
            names = sorted({str(c.get("governor")) for c in freq if c["cpu"] in slow})
            has_perf = all("performance" in c.get("available_governors", []) for c in freq)
            fix = ("run `steadybench system tune` as root" if has_perf else
                   "no performance governor: `system tune` raises the minimum frequency to the "
                   "maximum instead")
            out.append(_finding("warning", "frequency",
                                f"CPUs {format_cpulist(slow)} use governor {'/'.join(names)}, "
                                f"not performance: the frequency will vary ({fix})"))
        unpinned = [c["cpu"] for c in freq if c.get("min_mhz") is not None and
                    c.get("max_mhz") is not None and c["min_mhz"] < c["max_mhz"] and
                    c.get("governor") != "performance"]
        if unpinned:
            out.append(_finding("info", "frequency",
                                f"CPUs {format_cpulist(unpinned)} may run between their minimum "
                                "and maximum frequency"))
    boost = state.get("boost", {})
    if boost.get("enabled"):
        out.append(_finding("warning", "boost",
                            "boost/turbo is on: the frequency depends on temperature and on how "
                            "many cores are busy (`steadybench system tune` switches it off)"))
    elif boost.get("enabled") is None and freq:
        out.append(_finding("info", "boost", "no boost/turbo control file"))
    for dev in state.get("devfreq") or []:
        fixed = dev.get("governor") == "performance" or (
            dev.get("min_mhz") is not None and dev.get("min_mhz") == dev.get("max_mhz"))
        if not fixed:
            fix = ("`steadybench system tune` sets the performance governor"
                   if "performance" in (dev.get("available_governors") or []) else
                   "no performance governor: `steadybench system tune` raises min_freq to "
                   "max_freq (Rancid §IV-A1)")
            out.append(_finding("warning", "frequency",
                                f"devfreq {dev['name']} ({dev.get('kind')}) uses governor "
                                f"{dev.get('governor')}: its frequency will vary ({fix})"))
    capacities = {c.get("capacity") for c in online if c.get("capacity") is not None}
    if len(capacities) > 1:
        big = max(capacities)
        big_cpus = [c["cpu"] for c in online if c.get("capacity") == big]
        out.append(_finding("advice", "affinity",
                            f"CPUs differ in capacity (big.LITTLE): pin benchmarks to the big "
                            f"cores {format_cpulist(big_cpus)} (the managed preset does)"))
    isolated = state.get("isolation", {}).get("isolated", [])
    if isolated:
        out.append(_finding("info", "affinity",
                            f"isolated CPUs {format_cpulist(isolated)}: benchmarks are pinned "
                            "there by the managed preset"))
    if state.get("sensor_units_error"):
        out.append(_finding("warning", "temperature", state["sensor_units_error"]))
    temps = state.get("temperatures", [])
    readable = [t for t in temps if t.get("celsius") is not None]
    for t in temps:
        if t.get("unit") == "degrees" and t.get("unit_source") == "detected" \
                and t.get("celsius") is not None:
            out.append(_finding("info", "temperature",
                                f"sensor {t['name']} reports whole degrees (a raw value below "
                                "1000 is read as °C, not m°C; override with "
                                "STEADYBENCH_SENSOR_UNITS if wrong)"))
        if t.get("error"):
            out.append(_finding("info", "temperature",
                                f"sensor {t['name']} ({t['path']}) is not usable: {t['error']}"))
    if not readable:
        out.append(_finding(
            "missing", "temperature",
            "no readable thermal zone (/sys/class/thermal) or hwmon sensor (/sys/class/hwmon): "
            "temperature cannot be watched; cool-down and the temperature meter are unavailable"))
    else:
        hot = [t for t in readable if t["celsius"] > rules.max_temperature]
        for t in hot:
            out.append(_finding("warning", "temperature",
                                f"{t['name']} is at {t['celsius']:g} °C, above "
                                f"{rules.max_temperature:g} °C: the CPU may be throttled"))
    load = state.get("loadavg")
    n_online = max(len(online), 1)
    if load is None:
        out.append(_finding("missing", "load", "/proc/loadavg unreadable"))
    elif load[0] > rules.max_load_per_cpu * n_online:
        out.append(_finding("warning", "load",
                            f"load average {load[0]:g} is above {rules.max_load_per_cpu:g} per CPU "
                            f"({n_online} online): the machine is busy"))
    for proc in state.get("top_processes", []):
        if proc["cpu_pct"] > rules.max_process_cpu:
            out.append(_finding("warning", "load",
                                f"process {proc['pid']} ({proc['name']}) uses "
                                f"{proc['cpu_pct']:g} % CPU"))
    uptime = state.get("uptime_s")
    if uptime is None:
        out.append(_finding("missing", "uptime", "/proc/uptime unreadable"))
    elif uptime < rules.min_uptime:
        out.append(_finding("warning", "uptime",
                            f"booted {uptime:.0f} s ago: start-up work may still be running "
                            f"(wait until {rules.min_uptime:g} s)"))
    power = state.get("power", {})
    if power.get("on_ac") is False:
        out.append(_finding("warning", "power",
                            "on battery power: governors may save power; connect the charger"))
    elif power.get("on_ac") is None:
        out.append(_finding("info", "power",
                            "no power supply information (/sys/class/power_supply): assumed mains"))
    py = state.get("python", {})
    if py.get("debug_build"):
        out.append(_finding("warning", "python", "Python is a debug build: times are not those "
                                                 "of a release build"))
    if py.get("dev_mode"):
        out.append(_finding("warning", "python", "Python runs with -X dev (extra checks)"))
    if py.get("assertions"):
        out.append(_finding("info", "python", "assertions are on (python -O removes them)"))
    if py.get("gc_enabled") is False:
        out.append(_finding("info", "python", "the garbage collector is disabled"))
    kernel = state.get("kernel", {})
    if kernel.get("aslr") == 0:
        out.append(_finding("info", "kernel", "ASLR is off: memory layout is the same in every "
                                              "process, so layout effects are not averaged out"))
    return out


def check(state: dict[str, Any], rules: Rules) -> list[str]:
    """Reasons the machine is not fit to benchmark under ``rules`` (empty when fit)."""
    reasons = []
    online = [c for c in state.get("cpus", []) if c.get("online")]
    n_online = max(len(online), 1)
    hot = [t for t in state.get("temperatures", []) if t.get("celsius") is not None
           and t["celsius"] > rules.max_temperature]
    for t in hot:
        reasons.append(f"{t['name']} at {t['celsius']:g} °C > {rules.max_temperature:g} °C")
    load = state.get("loadavg")
    if load is not None and load[0] > rules.max_load_per_cpu * n_online:
        reasons.append(f"load average {load[0]:g} > {rules.max_load_per_cpu * n_online:g} "
                       f"({rules.max_load_per_cpu:g} per CPU)")
    for proc in state.get("top_processes", []):
        if proc["cpu_pct"] > rules.max_process_cpu:
            reasons.append(f"process {proc['pid']} ({proc['name']}) uses {proc['cpu_pct']:g} % "
                           f"CPU > {rules.max_process_cpu:g} %")
    uptime = state.get("uptime_s")
    if uptime is not None and uptime < rules.min_uptime:
        reasons.append(f"booted {uptime:.0f} s ago < {rules.min_uptime:g} s")
    if rules.require_ac and state.get("power", {}).get("on_ac") is False:
        reasons.append("on battery power")
    if rules.require_performance_governor:
        slow = [c["cpu"] for c in online if c.get("cpufreq") and c.get("governor") != "performance"]
        if slow:
            reasons.append(f"CPUs {format_cpulist(slow)} not on the performance governor")
    py = state.get("python", {})
    if rules.require_release_python and py.get("debug_build"):
        reasons.append("Python debug build")
    if rules.require_release_python and py.get("dev_mode"):
        reasons.append("Python -X dev mode")
    return reasons
