"""Fake ``sys``/``proc`` trees for the machine-control tests (never the real /sys or /proc)."""

from __future__ import annotations

import hashlib
from pathlib import Path

CPU = "sys/devices/system/cpu"


def put(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return path


def make_machine(root: Path, *, cpus: int = 4, governor: str = "powersave",
                 governors: str = "performance powersave", cpufreq: bool = True,
                 max_khz: list[int] | None = None, min_khz: int = 800000,
                 cur_khz: int = 1200000, capacities: list[int] | None = None,
                 boost: int | None = 1, no_turbo: int | None = None,
                 thermal: dict[str, int | str] | None = None,
                 hwmon: dict[str, int] | None = None, fans: dict[str, int] | None = None,
                 loadavg: str = "0.10 0.20 0.30 1/100 999", uptime: float = 86400.0,
                 power: str | None = "ac", isolated: str = "",
                 procs: dict[int, tuple[str, int]] | None = None) -> Path:
    """Write a fake machine under ``root`` and return ``root``.

    ``thermal`` maps zone type → millidegrees (or raw text, for garbage); ``procs`` maps pid →
    (command, utime ticks).
    """
    root.mkdir(parents=True, exist_ok=True)
    max_khz = max_khz or [3000000] * cpus
    put(root, f"{CPU}/online", f"0-{cpus - 1}\n")
    put(root, f"{CPU}/isolated", f"{isolated}\n")
    for i in range(cpus):
        base = f"{CPU}/cpu{i}"
        if i:
            put(root, f"{base}/online", "1\n")
        if capacities is not None:
            put(root, f"{base}/cpu_capacity", f"{capacities[i]}\n")
        put(root, f"{base}/topology/thread_siblings_list", f"{i}\n")
        if cpufreq:
            f = f"{base}/cpufreq"
            put(root, f"{f}/scaling_governor", f"{governor}\n")
            put(root, f"{f}/scaling_available_governors", f"{governors}\n")
            put(root, f"{f}/scaling_driver", "acpi-cpufreq\n")
            put(root, f"{f}/scaling_cur_freq", f"{cur_khz}\n")
            put(root, f"{f}/scaling_min_freq", f"{min_khz}\n")
            put(root, f"{f}/scaling_max_freq", f"{max_khz[i]}\n")
            put(root, f"{f}/cpuinfo_min_freq", f"{min_khz}\n")
            put(root, f"{f}/cpuinfo_max_freq", f"{max_khz[i]}\n")
    if cpufreq and boost is not None:
        put(root, f"{CPU}/cpufreq/boost", f"{boost}\n")
    if no_turbo is not None:
        put(root, f"{CPU}/intel_pstate/no_turbo", f"{no_turbo}\n")
    for n, (kind, value) in enumerate((thermal or {}).items()):
        put(root, f"sys/class/thermal/thermal_zone{n}/type", f"{kind}\n")
        put(root, f"sys/class/thermal/thermal_zone{n}/temp", f"{value}\n")
    if hwmon or fans:
        put(root, "sys/class/hwmon/hwmon0/name", "coretemp\n")
        for n, (label, value) in enumerate((hwmon or {}).items(), start=1):
            put(root, f"sys/class/hwmon/hwmon0/temp{n}_label", f"{label}\n")
            put(root, f"sys/class/hwmon/hwmon0/temp{n}_input", f"{value}\n")
        for n, (_label, rpm) in enumerate((fans or {}).items(), start=1):
            put(root, f"sys/class/hwmon/hwmon0/fan{n}_input", f"{rpm}\n")
    put(root, "proc/loadavg", f"{loadavg}\n")
    put(root, "proc/uptime", f"{uptime} {uptime * 1.5}\n")
    put(root, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU 9000\n")
    put(root, "proc/sys/kernel/osrelease", "6.1.0-fake\n")
    put(root, "proc/sys/kernel/randomize_va_space", "2\n")
    put(root, "proc/sys/kernel/perf_event_paranoid", "2\n")
    put(root, "proc/cmdline", "BOOT_IMAGE=/vmlinuz quiet\n")
    if power == "ac":
        put(root, "sys/class/power_supply/AC/type", "Mains\n")
        put(root, "sys/class/power_supply/AC/online", "1\n")
    elif power == "battery":
        put(root, "sys/class/power_supply/AC/type", "Mains\n")
        put(root, "sys/class/power_supply/AC/online", "0\n")
        put(root, "sys/class/power_supply/BAT0/type", "Battery\n")
        put(root, "sys/class/power_supply/BAT0/status", "Discharging\n")
    for pid, (comm, ticks) in (procs or {}).items():
        set_proc(root, pid, comm, ticks)
    return root


def set_proc(root: Path, pid: int, comm: str, ticks: int) -> None:
    """A /proc/<pid>/stat line with ``ticks`` of user time (fields per proc(5))."""
    fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0", str(ticks), "0"]
    fields += ["0"] * 30
    put(root, f"proc/{pid}/stat", f"{pid} ({comm}) {' '.join(fields)}\n")


def snapshot(root: Path) -> dict[str, str]:
    """A digest of every file under ``root``/sys and /proc (to prove byte-identical restores)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out
