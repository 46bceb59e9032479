"""CPU pressure: how much of a stretch of time other work kept runnable tasks from a CPU.

Linux's pressure stall information (PSI, ``/proc/pressure/cpu``, kernel 4.20 and later) counts
the microseconds during which at least one runnable task waited for a CPU (the ``some`` line's
``total``). Read before and after a case, its growth over the wall time between is the share of
that time the machine was contended: about 0 when the benchmark had the machine to itself, near
1 beside two CPU hogs on two cores.

Why it matters: on a contended machine a whole run is shifted, by 20-40 % at load 6 on the
2-core development VM (``benchmarks/over_time.py``), far beyond the variation between runs the
comparison across time models (``steadybench.compare.between``). Such a run cannot be compared
with a run taken at another time at any stated confidence; ``compare`` and ``run``'s change
since the last run call it inconclusive and name ``steadybench ab``, which interleaves both
versions so that the contention falls on both. pyperf records the load average for the same
reason (its ``load_avg_1min`` metadata); the pressure is the direct measure.

Without PSI (older kernels, other systems, some containers) nothing is measured and nothing is
decided on it (:func:`read_cpu_some` returns None).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: where the kernel exposes CPU pressure; tests point it at a fake tree
PSI_CPU = Path("/proc/pressure/cpu")

#: the share of a case's time under contention from which its results are not compared
#: across time (measured on the development VM: see docs/comparison.md, "A busy machine")
BUSY_SHARE = 0.10

#: the environment variable that sets another share, or ``off`` (a machine that is always
#: shared, where the user accepts what that costs; the test suite, whose subject elsewhere is
#: not the machine's load)
BUSY_VARIABLE = "STEADYBENCH_BUSY_SHARE"


def read_cpu_some(path: Path | None = None) -> float | None:
    """The ``some`` total of ``/proc/pressure/cpu`` in seconds, or None when unreadable."""
    try:
        text = (path or PSI_CPU).read_text()
    except OSError:
        return None
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "some":
            for field in fields[1:]:
                key, _, value = field.partition("=")
                if key == "total":
                    try:
                        return int(value) / 1e6
                    except ValueError:
                        return None
    return None


@dataclass(frozen=True)
class PressureMark:
    """A reading to measure from: the PSI total and the wall clock at that moment."""

    some: float | None
    wall: float

    @classmethod
    def now(cls, path: Path | None = None) -> PressureMark:
        return cls(read_cpu_some(path), time.monotonic())

    def share_until(self, later: PressureMark) -> float | None:
        """The share of the wall time from this mark to ``later`` during which some task
        waited for a CPU, in [0, 1]; None without PSI or without elapsed time."""
        if self.some is None or later.some is None or later.wall <= self.wall:
            return None
        share = (later.some - self.some) / (later.wall - self.wall)
        return min(max(share, 0.0), 1.0)


def busy_text(share: float) -> str:
    """``the CPU was contended 45% of the time (Linux PSI)``."""
    return f"the CPU was contended {share:.0%} of the time (Linux PSI)"


def busy_share() -> float | None:
    """The share from which a case counts as busy: :data:`BUSY_SHARE`, or what
    ``STEADYBENCH_BUSY_SHARE`` says (None for ``off``)."""
    text = os.environ.get(BUSY_VARIABLE, "").strip()
    if not text:
        return BUSY_SHARE
    if text.lower() == "off":
        return None
    try:
        value = float(text.rstrip("%")) / (100.0 if text.endswith("%") else 1.0)
    except ValueError:
        value = math.nan
    if not 0.0 < value <= 1.0:
        from .errors import ConfigurationError

        raise ConfigurationError(f"{BUSY_VARIABLE}={text!r}: give a share in (0, 1] such as "
                                 "0.1 or 10%, or off")
    return value


def busy_test() -> Callable[[float | None], bool]:
    """:func:`is_busy` with the busy share read once (for many records at a time)."""
    limit = busy_share()
    return lambda share: share is not None and limit is not None and share >= limit


def is_busy(share: float | None) -> bool:
    """True when a measured share reaches the busy share (:func:`busy_share`)."""
    return busy_test()(share)
