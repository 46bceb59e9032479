"""What the dashboard shows, read from the history store: every series (a benchmark's parameter
set on a machine) with its points placed in commit order, its change points, its latest value
and its change against the previous record and the baseline.

**Commit order.** The x axis of every chart is the order of commits, not time: each commit sits
at the rank of the first record made at it (records are made as commits land, in CI). The
assumption, stated: the history was recorded in commit order. A record without commit data is a
position of its own.

**Change points** come from :func:`steadybench.history.finders.analyse_steady` (PELT, and the
rank test between segments) at the stated confidence, kept when they reach the benchmark's
threshold (:mod:`steadybench.history.thresholds`). A series is **regressed** when its newest
change point is a slowdown: nothing after it has changed it back ("open").
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..record import case_label

if TYPE_CHECKING:
    from ..changes import Change
    from ..store import HistoryStore, Point
    from ..thresholds import Thresholds

TIME, COUNTS = "time", "counts"


@dataclass(frozen=True)
class CommitInfo:
    """One position of the x axis: a commit (or a record without one)."""

    key: str
    sha: str | None
    date: str
    branch: str | None
    message: str


@dataclass(frozen=True)
class Series:
    """One line of a benchmark page and one row of the index."""

    label: str
    #: the benchmark page it belongs to (the label without its parameters)
    page: str
    params: str
    machine: str
    group: str
    unit: str
    measure: str
    points: tuple[Point, ...]
    #: the x position (commit rank) of each point
    positions: tuple[int, ...]
    changes: tuple[Change, ...]
    threshold: str
    baseline_index: int
    note: str | None = None

    @property
    def latest(self) -> Point:
        return self.points[-1]

    def change_vs(self, index: int) -> float | None:
        """The latest value's change against point ``index`` (a fraction)."""
        if index < 0 or index >= len(self.points) - 1 or self.points[index].value <= 0:
            return None
        return self.latest.value / self.points[index].value - 1.0

    @property
    def vs_previous(self) -> float | None:
        return self.change_vs(len(self.points) - 2)

    @property
    def vs_baseline(self) -> float | None:
        return self.change_vs(self.baseline_index)

    @property
    def open_change(self) -> Change | None:
        """The newest change point when it is a slowdown (regressed, not yet changed back)."""
        if self.changes and self.changes[-1].direction == "slower":
            return self.changes[-1]
        return None


@dataclass(frozen=True)
class Page:
    """A benchmark page: every parameter set on every machine."""

    slug: str
    name: str
    series: tuple[Series, ...]


@dataclass(frozen=True)
class Dashboard:
    commits: tuple[CommitInfo, ...]
    pages: tuple[Page, ...]
    where: str
    confidence: float
    thresholds: Thresholds

    @property
    def series(self) -> list[Series]:
        return [s for p in self.pages for s in p.series]


def group_of(benchmark: str) -> str:
    """The group a benchmark belongs to: its file or module (what comes before ``::``), else
    the part of its name before the first ``.``; "" when neither."""
    if "::" in benchmark:
        return benchmark.split("::", 1)[0]
    return benchmark.split(".", 1)[0] if "." in benchmark else ""


def git_commits(repository: str | os.PathLike[str] | None) -> dict[str, tuple[str, str]]:
    """sha → (commit date, subject) of every commit git knows in ``repository`` (empty when
    there is no repository or no git)."""
    try:
        proc = subprocess.run(["git", "log", "--all", "--format=%H%x00%cI%x00%s"],
                              cwd=repository or None, capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if proc.returncode != 0:
        return {}
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split("\0")
        if len(parts) == 3:
            out[parts[0]] = (parts[1], parts[2])
    return out


def _analyse(job: tuple[Sequence[Point], str, str, float]) -> Any:
    from ..finders import analyse_steady

    points, label, machine, confidence = job
    return analyse_steady(points, label, machine, confidence, 0.0)  # busy records left out


def analyse_all(jobs: list[tuple[Sequence[Point], str, str, float]], workers: int) -> list[Any]:
    """Change points of every series, in ``workers`` forked processes when there are many
    (:func:`~steadybench.history.publish.pool.fork_map`)."""
    from .pool import fork_map

    return fork_map(lambda i: _analyse(jobs[i]), len(jobs), workers)


def collect(store: HistoryStore, thresholds: Thresholds, *, confidence: float = 0.95,
            baseline: str | None = None, repository: str | os.PathLike[str] | None = None,
            workers: int = 1, progress: Callable[[str], None] | None = None) -> Dashboard:
    """Everything the site shows, from one pass over the store."""
    import time

    started = time.monotonic()
    every = store.every_series()
    catalogue = store.catalogue()
    first_record: dict[str, int] = {}
    for points in every.values():
        for p in points:
            key = p.commit or f"#{p.record_id}"
            if key not in first_record or p.record_id < first_record[key]:
                first_record[key] = p.record_id
    order = sorted(first_record, key=first_record.__getitem__)
    rank = {key: i for i, key in enumerate(order)}
    known = git_commits(repository) if any(not k.startswith("#") for k in order) else {}
    about: dict[str, Point] = {}
    for points in every.values():
        for p in points:
            about.setdefault(p.commit or f"#{p.record_id}", p)
    commits = []
    for key in order:
        p = about[key]
        date, message = known.get(p.commit or "", (p.created, ""))
        commits.append(CommitInfo(key, p.commit, date, p.branch, message))
    if progress:
        progress(f"{len(every)} series over {len(order)} commits read in "
                 f"{time.monotonic() - started:.1f} s; finding change points")
    keys = sorted(every)
    started = time.monotonic()
    found = analyse_all([(every[k], k[0], k[1], confidence) for k in keys], workers)
    if progress:
        from .pool import processes

        progress(f"change points found in {time.monotonic() - started:.1f} s in "
                 f"{processes(len(keys), workers)} process(es); writing the site")
    pages: dict[str, list[Series]] = {}
    for (label, machine), analysis in zip(keys, found, strict=True):
        points = tuple(every[(label, machine)])
        bench, impl, params = catalogue.get(label, (label, label, ""))
        page = case_label(bench, impl, {})
        rule = thresholds.for_label(label)
        changes = tuple(c for c in analysis.changes
                        if rule.passes(c.before_median, c.after_median))
        base = 0
        if baseline:
            named = [i for i, p in enumerate(points[:-1]) if p.name == baseline]
            base = named[-1] if named else -1
        unit = points[-1].unit
        pages.setdefault(page, []).append(Series(
            label, page, params, machine, group_of(bench), unit,
            TIME if unit == "s" else COUNTS, points,
            tuple(rank[p.commit or f"#{p.record_id}"] for p in points), changes, rule.text(),
            base, analysis.note))
    ordered = sorted(pages)
    width = max(4, len(str(len(ordered))))
    return Dashboard(tuple(commits),
                     tuple(Page(f"{i + 1:0{width}d}", name,
                                tuple(sorted(pages[name], key=lambda s: (s.params, s.machine))))
                           for i, name in enumerate(ordered)),
                     store.where, confidence, thresholds)
