"""Machine control for Linux: read, tune with exact restore, countermeasures, presets (Rancid
§III-IV). See ``docs/machine-control.md``.

Everything takes a filesystem root (default ``/``) so tests run against fake sys/proc trees.
"""

from .advice import Rules, assess, check
from .fingerprint import fingerprint, fingerprint_differences
from .journal import Journal, default_journal_path, state_dir
from .presets import COUNTERMEASURES, PRESETS, apply_preset, build_preset, load_preset
from .readers import machine_state
from .sysfs import SysRoot, format_cpulist, parse_cpulist
from .tuning import make_plan, reset, tune

__all__ = [
    "COUNTERMEASURES",
    "PRESETS",
    "Journal",
    "Rules",
    "SysRoot",
    "apply_preset",
    "assess",
    "build_preset",
    "check",
    "default_journal_path",
    "fingerprint",
    "fingerprint_differences",
    "format_cpulist",
    "load_preset",
    "machine_state",
    "make_plan",
    "parse_cpulist",
    "reset",
    "state_dir",
    "tune",
]
