"""The exact files steadybench may change: the one place that names them.

Issue 12, item 3: the allow-list used to be "anything under ``/sys`` or ``/proc/sys``", so a
planted journal made ``system reset`` (run as root) write a pipe command into
``/proc/sys/kernel/core_pattern``. Now the tuning settings (:mod:`.tuning`) take the file names
they write from here, every planned change is checked against :func:`is_allowed`, a journal
naming any other file is refused as corrupt (:mod:`.journal`), and every write checks the
*resolved* path as well (:mod:`.writer`), so a symlink cannot lead a write elsewhere.

Paths are written relative to the root with a leading slash, as journals store them. The cpufreq
directory of a CPU is ``cpuN/cpufreq`` or, on kernels that expose policies, ``cpufreq/policyN``
(``cpuN/cpufreq`` is usually a symlink to the latter; the resolved path must match too).
"""

from __future__ import annotations

import re

from ..errors import SystemControlError
from .sysfs import CPU_DIR

#: boost/turbo switches: (path, value meaning "boost on", bytes that switch it off)
BOOST_SWITCHES: tuple[tuple[str, int, bytes], ...] = (
    (f"/{CPU_DIR}/cpufreq/boost", 1, b"0\n"),
    (f"/{CPU_DIR}/intel_pstate/no_turbo", 0, b"1\n"),
)
#: the cpufreq policy files tuning writes (the governor, or the minimum frequency instead)
GOVERNOR_FILE = "scaling_governor"
MIN_FREQ_FILE = "scaling_min_freq"
CPUFREQ_FILES = (GOVERNOR_FILE, MIN_FREQ_FILE)

#: the devfreq files tuning writes (GPU and memory-bus governors, or the minimum frequency)
DEVFREQ_GOVERNOR_FILE = "governor"
DEVFREQ_MIN_FILE = "min_freq"
DEVFREQ_FILES = (DEVFREQ_GOVERNOR_FILE, DEVFREQ_MIN_FILE)

_CPUFREQ_DIRS = (rf"/{CPU_DIR}/cpu[0-9]+/cpufreq", rf"/{CPU_DIR}/cpufreq/policy[0-9]+")
#: ``/sys/class/devfreq/NAME`` and, resolved, the device's own ``.../devfreq/NAME`` directory
_DEVFREQ_DIRS = (r"/sys/class/devfreq/[A-Za-z0-9_:.,+@-]+",
                 r"/sys/devices/(?:[A-Za-z0-9_:.,+@-]+/)+devfreq/[A-Za-z0-9_:.,+@-]+")
_PATTERN = re.compile(
    "^(?:"
    + "|".join([re.escape(path) for path, _on, _off in BOOST_SWITCHES]
               + [f"{d}/(?:{'|'.join(CPUFREQ_FILES)})" for d in _CPUFREQ_DIRS]
               + [f"{d}/(?:{'|'.join(DEVFREQ_FILES)})" for d in _DEVFREQ_DIRS])
    + r")\Z")  # \Z, not $: "$" also matches before a final line break (issue 27 item 10)

#: the allow-list in words, for messages and the documentation
DESCRIPTION = (f"/{CPU_DIR}/cpufreq/boost, /{CPU_DIR}/intel_pstate/no_turbo, the "
               f"{' and '.join(CPUFREQ_FILES)} files of /{CPU_DIR}/cpuN/cpufreq or "
               f"/{CPU_DIR}/cpufreq/policyN, and the {' and '.join(DEVFREQ_FILES)} files of "
               "/sys/class/devfreq/NAME (or the device directory it links to)")


def is_allowed(rel: str) -> bool:
    """Whether steadybench may change ``rel`` (relative to the root, leading slash)."""
    return isinstance(rel, str) and "/../" not in rel + "/" and "/./" not in rel + "/" \
        and _PATTERN.fullmatch(rel) is not None


def check_allowed(rel: str, what: str = "file") -> str:
    """``rel`` if it is on the allow-list, else SystemControlError saying what is allowed."""
    if not is_allowed(rel):
        raise SystemControlError(f"{what} {rel!r} is not one of the files steadybench may "
                                 f"change ({DESCRIPTION})")
    return rel
