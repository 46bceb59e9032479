"""The environment a measurement was taken in, recorded with every result."""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import sys
import sysconfig
import time
from collections.abc import Callable
from typing import Any

from .model.results import now_iso


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU model name from /proc/cpuinfo, or the platform's processor string."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def clock_properties(
    clock: Callable[[], int] = time.perf_counter_ns, reads: int = 20_000
) -> dict[str, Any]:
    """Resolution and cost of one read of ``clock``, measured.

    The read cost is the median gap between back-to-back reads taken in blocks; the resolution
    is the smallest non-zero difference seen between consecutive reads (a clock cannot show a
    smaller step than it can resolve).
    """
    stamps = [clock() for _ in range(reads)]
    diffs = [b - a for a, b in zip(stamps, stamps[1:])]
    nonzero = [d for d in diffs if d > 0]
    diffs.sort()
    info: dict[str, Any] = {
        "read_cost_ns": diffs[len(diffs) // 2] if diffs else None,
        "resolution_ns": min(nonzero) if nonzero else None,
    }
    name = getattr(clock, "__name__", type(clock).__name__)
    info["name"] = name
    if name.endswith("_ns") and hasattr(time, "get_clock_info"):
        base = {
            "perf_counter_ns": "perf_counter",
            "monotonic_ns": "monotonic",
            "process_time_ns": "process_time",
            "thread_time_ns": "thread_time",
            "time_ns": "time",
        }.get(name)
        if base:
            ci = time.get_clock_info(base)
            info.update(
                implementation=ci.implementation,
                declared_resolution_s=ci.resolution,
                monotonic=ci.monotonic,
            )
    return info


def capture_environment(clock: Callable[[], int] | None = None) -> dict[str, Any]:
    """Python version and build, platform, CPU, core count, host name, time, and the clock."""
    env: dict[str, Any] = {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "build": " ".join(platform.python_build()),
            "compiler": platform.python_compiler(),
            "executable": sys.executable,
            "debug_build": bool(sysconfig.get_config_var("Py_DEBUG")),
            "dev_mode": sys.flags.dev_mode,
            "optimize": sys.flags.optimize,
        },
        "platform": platform.platform(),
        "system": platform.system(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "hostname": socket.gethostname(),
        "time": now_iso(),
    }
    with contextlib.suppress(AttributeError, OSError):
        env["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    env["clock"] = clock_properties(clock or time.perf_counter_ns)
    env["fingerprint"] = machine_fingerprint()
    return env


def machine_fingerprint(root: str = "/") -> dict[str, Any] | None:
    """The settings that matter when comparing results (docs/machine-control.md); None when
    the machine cannot be read."""
    from .errors import SteadybenchError
    from .system.fingerprint import fingerprint
    from .system.sysfs import SysRoot

    try:
        return fingerprint(SysRoot(root))
    except (OSError, SteadybenchError):
        return None
