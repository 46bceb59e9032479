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


# ---------------------------------------------------------------- devices (issue 15)
def add_devfreq(root: Path, name: str, *, governor: str = "simple_ondemand",
                governors: str = "simple_ondemand userspace powersave",
                freqs_hz: list[int] | None = None, cur_hz: int | None = None,
                min_hz: int | None = None, max_hz: int | None = None) -> Path:
    """A devfreq device as the kernel lays it out: the files in
    ``/sys/devices/platform/NAME/devfreq/NAME`` and ``/sys/class/devfreq/NAME`` a symlink to
    that directory. Frequencies in Hz. Returns the real directory."""
    freqs = freqs_hz or [177_000_000, 266_000_000, 350_000_000, 420_000_000, 480_000_000,
                         543_000_000, 600_000_000]
    real = f"sys/devices/platform/{name}/devfreq/{name}"
    put(root, f"{real}/governor", f"{governor}\n")
    put(root, f"{real}/available_governors", f"{governors}\n")
    put(root, f"{real}/available_frequencies", " ".join(str(f) for f in freqs) + "\n")
    put(root, f"{real}/cur_freq", f"{cur_hz if cur_hz is not None else freqs[0]}\n")
    put(root, f"{real}/min_freq", f"{min_hz if min_hz is not None else freqs[0]}\n")
    put(root, f"{real}/max_freq", f"{max_hz if max_hz is not None else freqs[-1]}\n")
    put(root, f"{real}/target_freq", f"{freqs[0]}\n")
    link = root / "sys/class/devfreq" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"../../devices/platform/{name}/devfreq/{name}")
    return root / real


def add_rapl(root: Path, zone: str = "intel-rapl:0", *, energy_uj: int = 1_000_000,
             max_range_uj: int = 262_143_328_850, name: str = "package-0") -> Path:
    """A powercap RAPL zone (plus a core sub-zone, which must not be counted twice)."""
    base = f"sys/class/powercap/{zone}"
    put(root, f"{base}/name", f"{name}\n")
    put(root, f"{base}/energy_uj", f"{energy_uj}\n")
    put(root, f"{base}/max_energy_range_uj", f"{max_range_uj}\n")
    put(root, f"{base}/{zone}:0/name", "core\n")
    put(root, f"{base}/{zone}:0/energy_uj", "5\n")
    put(root, f"sys/class/powercap/{zone}:0/energy_uj", "5\n")
    return root / base


def add_battery(root: Path, name: str = "battery", *, current_ua: int = -500_000,
                voltage_uv: int = 4_000_000, status: str = "Charging") -> Path:
    """An Android-style battery reporting current_now (µA) and voltage_now (µV)."""
    base = f"sys/class/power_supply/{name}"
    put(root, f"{base}/type", "Battery\n")
    put(root, f"{base}/status", f"{status}\n")
    put(root, f"{base}/current_now", f"{current_ua}\n")
    put(root, f"{base}/voltage_now", f"{voltage_uv}\n")
    return root / base


#: the board :func:`make_board` builds: names the tests and ``evaluate`` refer to
MALI = "11800000.mali"
DDR = "10c20000.memory-controller"


def make_board(root: Path, *, big_little: bool = True, mali: bool = True, ddr: bool = True,
               rapl: bool = True, battery: bool = True, sensor_degrees: int | None = 45,
               governor: str = "interactive",
               governors: str = "interactive ondemand userspace powersave performance"
               ) -> Path:
    """A board like the paper's Odroid XU3 (Rancid Table 1) under ``root``: 8 CPUs, LITTLE
    cores 0-3 (capacity 512, 1.4 GHz) and big cores 4-7 (capacity 1024, 2.0 GHz); a Mali GPU
    on devfreq with no performance governor (tuning raises its min_freq, §IV-A1); a DDR
    memory controller on devfreq with one; a RAPL package zone (not on an XU3, but the energy
    meter's reference); a battery with current and voltage; and a thermal sensor that reports
    *whole degrees* (``sensor_degrees``), as some vendors' do. Boost is on.
    """
    caps = [512] * 4 + [1024] * 4 if big_little else None
    freqs = [1_400_000] * 4 + [2_000_000] * 4 if big_little else None
    make_machine(root, cpus=8, governor=governor, governors=governors, max_khz=freqs,
                 min_khz=200_000, cur_khz=800_000, capacities=caps, boost=1,
                 thermal={"cpu-millideg": 41000}, power="ac")
    if sensor_degrees is not None:
        put(root, "sys/class/thermal/thermal_zone1/type", "soc-degrees\n")
        put(root, "sys/class/thermal/thermal_zone1/temp", f"{sensor_degrees}\n")
    if mali:
        add_devfreq(root, MALI, governor="simple_ondemand",
                    governors="simple_ondemand userspace powersave")
    if ddr:
        add_devfreq(root, DDR, governor="simple_ondemand",
                    governors="simple_ondemand performance powersave",
                    freqs_hz=[165_000_000, 206_000_000, 275_000_000, 413_000_000,
                              543_000_000, 633_000_000, 728_000_000, 825_000_000])
    if rapl:
        add_rapl(root)
    if battery:
        add_battery(root)
    return root
