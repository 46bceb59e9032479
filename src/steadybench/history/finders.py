"""How one benchmark's series is searched for changes: cut where what the values are made of
changes, and each stretch read by the finder its measure needs.

**Where a series is cut.** Counts are comparable only when the same valgrind, interpreter (or
program), layouts and method produced them (issue 26, item 3;
:class:`steadybench.counts.backend.CountIdentity`, stored with each measurement since schema
version 3). A new valgrind can move a count by a percent with no change of code, so a change
found across such a boundary would be the tool's, not the code's. :func:`stretches` cuts the
series wherever the unit or the identity changes; no change is ever reported across a cut, and
the analysis says where each cut is and what changed, in one line. A series of times has no
identity (None throughout): it is cut only where its unit changes, which a time series never
does, so it is read whole, as before.

**Which finder.** A stretch of times is read by the test against run-to-run noise
(:func:`steadybench.history.regressions.find_changes`); a stretch of counts by exact
differences against the layout spread (:func:`steadybench.counts.history.find_count_changes`).
:func:`finder_for` chooses one from the stretch's unit, once; the finders share one call
signature (:class:`ChangeFinder`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .changes import SeriesAnalysis
from .store import HistoryStore, Point


class ChangeFinder(Protocol):
    """Finds the changes of one stretch of a series (oldest point first, one unit, one
    identity)."""

    def __call__(self, points: Sequence[Point], label: str, machine: str, confidence: float,
                 min_change: float | None) -> SeriesAnalysis: ...


def find_time_changes(points: Sequence[Point], label: str, machine: str, confidence: float,
                      min_change: float | None) -> SeriesAnalysis:
    """Times: PELT candidates tested against the run-to-run noise."""
    from .regressions import find_changes

    return find_changes(points, label, machine, confidence, min_change)


def find_exact_changes(points: Sequence[Point], label: str, machine: str, confidence: float,
                       min_change: float | None) -> SeriesAnalysis:
    """Counts: exact differences against the layout spread (no confidence applies)."""
    from ..counts.history import find_count_changes

    return find_count_changes(points, label, machine, min_change)


def finder_for(unit: str) -> ChangeFinder:
    """The finder a stretch in ``unit`` is read by."""
    from ..output.format import COUNT_UNITS

    return find_exact_changes if unit in COUNT_UNITS else find_time_changes


@dataclass(frozen=True)
class Cut:
    """Where a series is cut: the first point after it and what changed, in words."""

    index: int
    before_record: int
    after_record: int
    what: str

    def line(self) -> str:
        return (f"counts made under different conditions from record #{self.after_record} on "
                f"(after #{self.before_record}: {self.what}): the series is split there and "
                "no change is reported across it")


def _parsed(identity: str | None) -> dict[str, object] | None:
    try:
        found = json.loads(identity) if identity else None
    except ValueError:
        return {"identity": identity}
    return found if isinstance(found, dict) else None


def what_changed(a: Point, b: Point) -> str:
    """Which part of the unit or identity differs between two points, in words ('' when
    nothing does)."""
    from ..counts.backend import identity_differences

    if a.unit != b.unit:
        return f"unit {a.unit!r} vs {b.unit!r}"
    if a.identity == b.identity:
        return ""
    return "; ".join(identity_differences(_parsed(a.identity), _parsed(b.identity))) \
        or "identity differs"


def stretches(points: Sequence[Point]) -> tuple[list[tuple[int, list[Point]]], list[Cut]]:
    """The series cut wherever its unit or identity changes: (start index, points) of each
    stretch, oldest first, and the cuts."""
    parts: list[tuple[int, list[Point]]] = []
    cuts: list[Cut] = []
    for i, point in enumerate(points):
        what = what_changed(points[i - 1], point) if i else ""
        if not parts or what:
            if what:
                cuts.append(Cut(i, points[i - 1].record_id, point.record_id, what))
            parts.append((i, []))
        parts[-1][1].append(point)
    return parts, cuts


def analyse_series(points: Sequence[Point], label: str, machine: str,
                   confidence: float = 0.95, min_change: float | None = None,
                   ) -> SeriesAnalysis:
    """One series' changes: each stretch (:func:`stretches`) read by its unit's finder, the
    changes' indices in the whole series, every cut said in the note. With no cut, exactly
    what the stretch's finder says."""
    parts, cuts = stretches(points)
    if not parts:
        return find_time_changes(points, label, machine, confidence, min_change)
    found = [(start, finder_for(part[0].unit)(part, label, machine, confidence, min_change))
             for start, part in parts]
    if not cuts:
        return found[0][1]
    changes = [dataclasses.replace(c, index=c.index + start)
               for start, analysis in found for c in analysis.changes]
    last = found[-1][1]
    notes = [cut.line() for cut in cuts]
    notes += [f"records from #{points[start].record_id}: {a.note}" for start, a in found
              if a.note]
    return dataclasses.replace(last, points=len(points), changes=changes,
                               note="; ".join(notes))


def analyse_steady(points: Sequence[Point], label: str, machine: str,
                   confidence: float = 0.95, min_change: float | None = None,
                   ) -> SeriesAnalysis:
    """:func:`analyse_series` of the records not measured on a busy machine
    (:attr:`Point.busy`): such a record is shifted far beyond the variation between records,
    and would read as a step. The changes' indices are those of ``points``; the note says how
    many records were left out."""
    from ..cpu_pressure import busy_test

    busy = busy_test()  # the busy share read once, not once a record
    kept = [i for i, p in enumerate(points) if not busy(p.cpu_pressure)]
    if len(kept) == len(points):
        return analyse_series(points, label, machine, confidence, min_change)
    analysis = analyse_series([points[i] for i in kept], label, machine, confidence, min_change)
    left = (f"{len(points) - len(kept)} of {len(points)} records left out: measured on a busy "
            "machine (steadybench.cpu_pressure)")
    return dataclasses.replace(
        analysis, changes=[dataclasses.replace(c, index=kept[c.index]) for c in analysis.changes],
        note="; ".join(n for n in (analysis.note, left) if n))


def regressions(store: HistoryStore, labels: Sequence[str] | None = None,
                machine: str | None = None, branch: str | None = None,
                confidence: float = 0.95,
                min_change: float | None = None) -> list[SeriesAnalysis]:
    """Every benchmark's series (each machine on its own), cut where its unit or its counts'
    identity changes and each stretch read by its measure's finder (:func:`analyse_series`)."""
    out = []
    for label in labels or store.labels():
        points = store.series(label, machine=machine, branch=branch)
        by_machine: dict[str, list[Point]] = {}
        for p in points:
            by_machine.setdefault(p.machine, []).append(p)
        for name, series in sorted(by_machine.items()):
            out.append(analyse_steady(series, label, name, confidence, min_change))
    return out
