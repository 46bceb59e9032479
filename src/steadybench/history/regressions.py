"""Change points in each benchmark's history: where it became slower (or faster), by how much,
and how sure that is.

**Detection** is PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a
linear computational cost", JASA 2012) from the ``ruptures`` library (Truong, Oudre & Vayatis,
"Selective review of offline change point detection methods", Signal Processing 2020), on the
series of mean log-times of the records (one point per record, oldest first), with the l2 cost
and a penalty of 3·σ²·max(ln n, 2) per change point: the BIC of a shift in mean with known
variance σ² (2·σ²·ln n) made stricter, because BIC's ln n is an asymptotic weight that is too
light for a handful of records. A record that differs from both neighbours alone, in the same
direction (a whole CI job slowed), is set aside and the search repeated without it (the newest
record is never set aside). Each point is the median log-time of the record's executions.
Calibrated by simulation (4–5 executions per record; the script's figures in
``docs/history.md``): with 1% noise between executions, flat series of 5–60 records show a change
in about 2% of the series, a 20% step in the last of three records is found in 98%; with 8% of
executions slowed by 10–100%, 2.5% and 91%.

* σ is the spread of one point: the run-to-run noise of the recorded executions, measured
  robustly (:func:`robust_sigma`: a few slowed executions do not inflate it), times √(π/2)/√k
  for the median of k executions; or, with at least
  :data:`MIN_POINTS_FOR_DRIFT` points, the spread of consecutive differences
  (1.4826·MAD/√2, robust to the changes themselves) when that is larger, because versions
  measured at different times also differ by the machine's drift.

**Confidence** of each change: the two-sided Wilcoxon–Mann–Whitney test (R's ``wilcox.test``,
:func:`steadybench.stats.rank.wilcoxon_two_sample`, the median protocol of ``compare``) between
the executions of the segment before and the segment after it; the confidence is 1 − p. The
magnitude is median(after) / median(before) − 1. Assumption, stated: the executions inside one
segment are exchangeable (no drift within a segment).

Why ruptures and not Apache Otava (the issue's first choice, an E-Divisive with a t-test
significance step): ``apache-otava`` 0.8.0 pins ``numpy==2.2.0.*`` and ``scipy<1.17`` and
installs the BigQuery, Slack and Graphite clients, so it cannot be installed beside this
project's numpy 2.4 / scipy 1.17; MongoDB's ``signal-processing-algorithms`` (E-Divisive)
requires ``numpy<2``. ruptures is maintained, has wheels, and depends only on numpy and scipy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..stats.robust import robust_sd
from .noise import MIN_DF

if TYPE_CHECKING:
    from .store import HistoryStore, Point

#: points needed before the spread of consecutive differences is trusted as the drift
MIN_POINTS_FOR_DRIFT = 8
#: fewest points in a series to look for a change in
MIN_POINTS = 3
#: the penalty is PENALTY_FACTOR·σ²·max(ln n, MIN_LOG_N) per change point (module docs)
PENALTY_FACTOR = 3.0
MIN_LOG_N = 2.0
SLOWER = "slower"
FASTER = "faster"


def confidence_text(confidence: float) -> str:
    """``97.1%``; never "100.0%" for a p-value that is small but not zero (``> 99.9%``)."""
    return "> 99.9%" if confidence > 0.999 else f"{confidence:.1%}"


@dataclass(frozen=True)
class Change:
    """One change point of one benchmark's series."""

    label: str
    machine: str
    #: index of the first point after the change, in the series
    index: int
    before_record: int
    after_record: int
    before_commit: str | None
    after_commit: str | None
    after_name: str | None
    magnitude: float
    direction: str
    confidence: float
    p_value: float
    n_before: int
    n_after: int
    before_median: float
    after_median: float
    unit: str

    @property
    def commit_range(self) -> str:
        """``before..after`` (git's range notation: the commits in ``after`` not in
        ``before``); record ids where there is no commit."""
        left = self.before_commit[:10] if self.before_commit else f"#{self.before_record}"
        right = self.after_commit[:10] if self.after_commit else f"#{self.after_record}"
        return f"{left}..{right}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "commit_range": self.commit_range}


@dataclass(frozen=True)
class SeriesAnalysis:
    """What was found in one series, and why nothing could be looked for when so."""

    label: str
    machine: str
    points: int
    sigma: float | None
    sigma_source: str
    changes: list[Change]
    note: str | None = None


def _point_value(p: Point) -> float:
    """The median log-time of a record's executions (one slowed execution does not move it)."""
    import statistics

    logs = [math.log(v) for v in p.executions if v > 0]
    # statistics.median: the same value as numpy's, without its overhead on a few numbers
    return float(statistics.median(logs)) if logs else math.log(p.value)


@functools.lru_cache(maxsize=64)
def _mad_scale(composition: tuple[tuple[int, int], ...]) -> float:
    """The expected pooled MAD of standard normal groups of these (size, count) pairs, by the
    seeded simulation (the same composition always gives the same factor, so it is computed
    once per composition: a dashboard analyses many series of the same shape)."""
    import numpy as np

    rng = np.random.default_rng(20240501)
    reps = 400
    parts = []
    for k, count in composition:
        z = rng.standard_normal((reps, count, k))
        parts.append(np.abs(z - np.median(z, axis=2, keepdims=True)).reshape(reps, -1))
    return float(np.mean(np.median(np.concatenate(parts, axis=1), axis=1)))


def robust_sigma(groups: Sequence[Sequence[float]]) -> tuple[float, int] | None:
    """The spread σ of log-times between executions of the same code, robust to a few slowed
    executions: the median absolute deviation of every execution from its own group's median,
    pooled over the groups, divided by the same statistic's expectation for standard normal
    groups of the same sizes (computed once by a seeded simulation, so the result is exactly
    reproducible). This is the MAD (Hampel 1974) with its small-sample consistency factor;
    1.4826 is the factor's limit for large groups. Returns σ and the number of executions, or
    None without a group of two or more."""
    import numpy as np

    sizes = [len(g) for g in groups if len(g) >= 2]
    if not sizes:
        return None
    by_size: dict[int, list[Sequence[float]]] = {}
    for g in groups:
        if len(g) >= 2:
            by_size.setdefault(len(g), []).append(g)
    deviations = []
    for same in by_size.values():  # the groups of one size as rows: one median per row
        rows = np.asarray(same, dtype=float)
        deviations.append(np.abs(rows - np.median(rows, axis=1, keepdims=True)).ravel())
    raw = float(np.median(np.concatenate(deviations)))
    sizes_counts = np.unique(sizes, return_counts=True)
    scale = _mad_scale(tuple((int(k), int(c)) for k, c in zip(*sizes_counts)))
    return raw / scale, int(sum(sizes))


def _sigma(points: Sequence[Point], y: Sequence[float]) -> tuple[float | None, str]:
    import numpy as np

    groups = [[math.log(v) for v in p.executions if v > 0] for p in points]
    found = robust_sigma(groups)
    sigma_pt = None
    source = ""
    if found is not None and found[1] - sum(1 for g in groups if len(g) >= 2) >= MIN_DF:
        sigma_run, n = found
        k = float(np.mean([max(1, len(p.executions)) for p in points]))
        # the median of k values varies up to π/2 times as much as their mean (its
        # large-sample efficiency, Kenney & Keeping 1962); smaller k is less, so this is safe
        sigma_pt = sigma_run * math.sqrt(math.pi / 2.0) / math.sqrt(k)
        source = (f"run-to-run noise from history (robust σ {sigma_run:.2%} of ln time over "
                  f"{n} executions)")
    if len(y) >= MIN_POINTS_FOR_DRIFT:
        drift = robust_sd(np.diff(np.asarray(y))) / math.sqrt(2.0)
        if sigma_pt is None or drift > sigma_pt:
            return drift, "spread of consecutive records (1.4826·MAD/√2)"
    return sigma_pt, source


def one_off_records(breaks: list[int], y: Sequence[float]) -> list[int]:
    """Positions of records that differ from both neighbouring segments in the same direction
    (up then down, or down then up) and alone: a record slowed or sped up as a whole (a busy
    machine during that CI job) is not a change of the code. The newest record is never one: a
    change there stays, nothing after it says yet whether it lasts."""
    edges = [0, *breaks, len(y)]
    found = []
    for j in range(1, len(edges) - 2):
        start, end = edges[j], edges[j + 1]
        if end - start != 1:
            continue
        before = y[edges[j - 1]:start]
        after = y[end:edges[j + 2]]
        left, right = sum(before) / len(before), sum(after) / len(after)
        if (y[start] - left) * (y[start] - right) > 0:
            found.append(start)
    return found


def find_changes(points: Sequence[Point], label: str = "", machine: str = "",
                 confidence: float = 0.95, min_change: float = 0.0) -> SeriesAnalysis:
    """Change points of one series (one benchmark on one machine), oldest point first.

    A change is reported when its confidence is at least ``confidence`` and its magnitude at
    least ``min_change`` (a fraction) either way.
    """
    import numpy as np
    import ruptures

    from ..stats.rank import wilcoxon_two_sample

    unit = points[0].unit if points else "s"
    if len(points) < MIN_POINTS:
        return SeriesAnalysis(label, machine, len(points), None, "", [],
                              f"{len(points)} record(s): at least {MIN_POINTS} are needed")
    y = [_point_value(p) for p in points]
    sigma, source = _sigma(points, y)
    if sigma is None:
        return SeriesAnalysis(label, machine, len(points), None, "", [],
                              "run-to-run noise unknown (records of one execution each and "
                              f"fewer than {MIN_POINTS_FOR_DRIFT} of them): record with several "
                              "executions")
    sigma = max(sigma, 1e-6)
    # PELT, then set aside one-off records and search again without them, until none is left
    active = list(range(len(points)))
    set_aside: list[int] = []
    while True:
        ya = [y[i] for i in active]
        penalty = PENALTY_FACTOR * sigma ** 2 * max(math.log(len(ya)), MIN_LOG_N)
        # KernelCPD with the linear kernel: PELT on the l2 cost, in ruptures' C code
        algo = ruptures.KernelCPD(kernel="linear", min_size=1).fit(
            np.asarray(ya).reshape(-1, 1))
        breaks = [b for b in algo.predict(pen=penalty) if b < len(ya)]
        odd = one_off_records(breaks, ya)
        if not odd or len(active) - len(odd) < MIN_POINTS:
            break
        set_aside.extend(active[i] for i in odd)
        active = [i for k, i in enumerate(active) if k not in set(odd)]
    kept = [points[i] for i in active]
    edges = [0, *breaks, len(kept)]
    changes = []
    for i, cut in enumerate(breaks):
        left = [v for p in kept[edges[i]:cut] for v in p.executions]
        right = [v for p in kept[cut:edges[i + 2]] for v in p.executions]
        before, after = float(np.median(left)), float(np.median(right))
        magnitude = after / before - 1.0
        test = wilcoxon_two_sample(np.asarray(right), np.asarray(left), "two-sided")
        conf = 1.0 - float(test.p_value)
        if conf < confidence or abs(magnitude) < min_change:
            continue
        a, b = kept[cut - 1], kept[cut]
        changes.append(Change(label=label, machine=machine, index=active[cut],
                              before_record=a.record_id, after_record=b.record_id,
                              before_commit=a.commit, after_commit=b.commit, after_name=b.name,
                              magnitude=magnitude, direction=SLOWER if magnitude > 0 else FASTER,
                              confidence=conf, p_value=float(test.p_value),
                              n_before=len(left), n_after=len(right), before_median=before,
                              after_median=after, unit=unit))
    note = None
    if set_aside:
        note = ("set aside as one-off records (different from both neighbours): "
                + ", ".join(f"#{points[i].record_id}" for i in sorted(set_aside)))
    return SeriesAnalysis(label, machine, len(points), sigma, source, changes, note)


def regressions(store: HistoryStore, labels: Sequence[str] | None = None,
                machine: str | None = None, branch: str | None = None,
                confidence: float = 0.95, min_change: float = 0.0) -> list[SeriesAnalysis]:
    """Every benchmark's series (each machine on its own) analysed with :func:`find_changes`."""
    out = []
    for label in labels or store.labels():
        points = store.series(label, machine=machine, branch=branch)
        by_machine: dict[str, list[Point]] = {}
        for p in points:
            by_machine.setdefault(p.machine, []).append(p)
        for name, series in sorted(by_machine.items()):
            out.append(find_changes(series, label, name, confidence, min_change))
    return out
