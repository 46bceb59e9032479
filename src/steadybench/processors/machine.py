"""Flagging runs measured while the machine was not steady (Rancid §III, Figs. 3–11).

The machine-control meters record, per run, the CPU frequency of the pinned cores
(``cpu_freq``, MHz) and temperatures (``temperature``, °C). Rancid shows that runs made at a
lower frequency or on a hot processor are slower for reasons that have nothing to do with the
code; this processor finds them so they can be seen, and removed when asked.
"""

from __future__ import annotations

import math

from ..model.results import RUN_OK, RUN_REMOVED, CaseResult
from .base import Processor, _refresh_stream


class MachineStateFlagger(Processor):
    """Flag ok runs whose CPU frequency fell below the case's highest by more than
    ``frequency_tolerance``, or whose temperature exceeded ``temperature_limit`` °C.

    The indices go to ``case.analyses["machine_flags"]`` and a warning says how many runs were
    affected. With ``remove=True`` those runs also leave the statistics (status ``removed``).
    Cases without the meters are left alone.
    """

    def __init__(
        self,
        frequency_tolerance: float = 0.05,
        temperature_limit: float | None = None,
        remove: bool = False,
    ) -> None:
        self.frequency_tolerance = frequency_tolerance
        self.temperature_limit = temperature_limit
        self.remove = remove

    def process_case(self, case: CaseResult) -> None:
        if not case.keep_samples:
            return
        ok = [i for i, s in enumerate(case.status) if s == RUN_OK]
        flags: dict[str, list[int]] = {}
        freq = case.metrics.get("cpu_freq")
        if freq is not None:
            readings = [freq[i] for i in ok if not math.isnan(freq[i])]
            if readings:
                floor = max(readings) * (1.0 - self.frequency_tolerance)
                flags["frequency_changed"] = [i for i in ok if freq[i] < floor]
        temp = case.metrics.get("temperature")
        if temp is not None and self.temperature_limit is not None:
            flags["hot"] = [i for i in ok if temp[i] > self.temperature_limit]
        flags = {k: v for k, v in flags.items() if v}
        if not flags:
            return
        case.analyses["machine_flags"] = flags
        if "frequency_changed" in flags:
            case.warnings.append(
                f"{len(flags['frequency_changed'])} run(s) ran at a CPU frequency more than "
                f"{self.frequency_tolerance:.0%} below the highest seen"
            )
        if "hot" in flags:
            case.warnings.append(
                f"{len(flags['hot'])} run(s) ran above {self.temperature_limit:g} °C"
            )
        if self.remove:
            for index in {i for indices in flags.values() for i in indices}:
                case.status[index] = RUN_REMOVED
            _refresh_stream(case)
