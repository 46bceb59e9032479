"""Changes in a history of counts: exact differences, not a test against noise.

``history regressions`` finds changes in a series of times with a test against the
run-to-run noise (:mod:`steadybench.history.regressions`), and prints the confidence of each.
Counts have no such noise. The same code, interpreter and valgrind count the same in every
invocation (:mod:`.view`, :mod:`.layout`). What moves a count without a change of code is the
layout: the hash seed and the environment's size. With ``-p K`` each record holds K layouts'
counts, and their spread is how much the layout moves them.

So a series of counts is read record by record (:func:`find_count_changes`). A change is a
difference between two consecutive records that is larger than the layout spread of either.
There is no confidence to print: the verdict rests on the exact difference and the spread it
is set against. The project's thresholds (``steadybench.toml``) then decide which changes
matter, as for time.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..history.changes import FASTER, SLOWER, Change, SeriesAnalysis
from ..history.store import Point


@dataclass(frozen=True)
class CountChange(Change):
    """A difference between two consecutive records of a series of counts: a
    :class:`~steadybench.history.changes.Change` (so every reader of changes reads it) with
    what an exact verdict rests on.

    ``before_median``/``after_median`` are the two records' counts; ``difference`` is their
    exact difference; ``spread`` the larger of the two records' layout spreads (relative; 0
    for records of one layout, where none was measured); ``layouts`` the fewer layouts of the
    two. No test against noise is made, so ``confidence`` is 1 and ``p_value`` 0 (the
    difference is exact for counts of one identity, :mod:`steadybench.history.finders`), and
    the lines printed for it name no confidence.
    """

    difference: float = 0.0
    spread: float = 0.0
    layouts: int = 1

    @property
    def basis(self) -> str:
        """What the verdict rests on, in words."""
        if self.layouts < 2:
            return ("exact difference; one layout per record, so no layout spread was "
                    "measured (record with -p K to see it)")
        return (f"exact difference against a layout spread of {self.spread:.3%} "
                f"({self.layouts} layouts)")

    def line(self) -> str:
        """The change as ``history regressions`` prints it (no confidence: none applies)."""
        word = f"{'MORE' if self.direction == SLOWER else 'FEWER'} {self.unit.upper()}"
        name = f" ({self.after_name})" if self.after_name else ""
        return (f"{word}: {self.label} on {self.machine}: {self.magnitude:+.1%} in "
                f"{self.commit_range}{name} (exact: {self.before_median:,.1f} → "
                f"{self.after_median:,.1f} {self.unit}, {self.difference:+,.1f}; {self.basis})")

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "basis": self.basis}


def layout_spread(point: Point) -> float:
    """A record's layout spread: the range of its layouts' counts over their median (0 with
    one layout)."""
    values = [v for v in point.executions if v == v]
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else 0.0


def find_count_changes(points: Sequence[Point], label: str = "", machine: str = "",
                       min_change: float | None = None) -> SeriesAnalysis:
    """The changes of one series of counts, oldest point first: every pair of consecutive
    records whose counts differ by more than the larger of their layout spreads (and by at
    least ``min_change``, relative, when given)."""
    changes = []
    for i in range(1, len(points)):
        a, b = points[i - 1], points[i]
        if not a.value or a.value != a.value or b.value != b.value:
            continue
        magnitude = b.value / a.value - 1.0
        spread = max(layout_spread(a), layout_spread(b))
        if magnitude == 0 or abs(magnitude) <= spread:
            continue
        if min_change is not None and abs(magnitude) < min_change:
            continue
        changes.append(CountChange(
            label=label, machine=machine, index=i, before_record=a.record_id,
            after_record=b.record_id, before_commit=a.commit, after_commit=b.commit,
            after_name=b.name, magnitude=magnitude,
            direction=SLOWER if magnitude > 0 else FASTER, confidence=1.0, p_value=0.0,
            n_before=1, n_after=1, before_median=a.value, after_median=b.value, unit=a.unit,
            difference=b.value - a.value, spread=spread,
            layouts=min(len(a.executions) or 1, len(b.executions) or 1)))
    return SeriesAnalysis(label, machine, len(points), None,
                          "counts: exact differences between consecutive records against "
                          "their layout spread", list(changes))
