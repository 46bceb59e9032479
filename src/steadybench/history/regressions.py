"""Change points in each benchmark's history: where it became slower (or faster), by how much,
and how sure that is.

**Detection** is PELT (Killick, Fearnhead & Eckley, "Optimal detection of changepoints with a
linear computational cost", JASA 2012) from the ``ruptures`` library (Truong, Oudre & Vayatis,
"Selective review of offline change point detection methods", Signal Processing 2020), on the
series of mean log-times of the records (one point per record, oldest first), with the l2 cost
and a penalty of 2·σ²·ln n (the BIC of a shift in mean with known variance σ²):

* σ is the spread of one point: the run-to-run noise learned from the history
  (:mod:`steadybench.history.noise`, σ_run/√k for points of k executions), or, with at least
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

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .noise import noise_from_points

if TYPE_CHECKING:
    from .store import HistoryStore, Point

#: points needed before the spread of consecutive differences is trusted as the drift
MIN_POINTS_FOR_DRIFT = 8
#: fewest points in a series to look for a change in
MIN_POINTS = 3
SLOWER = "slower"
FASTER = "faster"


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
    logs = [math.log(v) for v in p.executions if v > 0]
    return sum(logs) / len(logs) if logs else math.log(p.value)


def _sigma(points: Sequence[Point], y: Sequence[float]) -> tuple[float | None, str]:
    import numpy as np

    noise = noise_from_points(points)
    sigma_pt = None
    source = ""
    if noise is not None:
        k = float(np.mean([max(1, len(p.executions)) for p in points]))
        sigma_pt = noise.sigma / math.sqrt(k)
        source = f"run-to-run noise from history ({noise.cov:.2%}, {noise.df} df)"
    if len(y) >= MIN_POINTS_FOR_DRIFT:
        diffs = np.diff(np.asarray(y))
        mad = float(np.median(np.abs(diffs - np.median(diffs))))
        drift = 1.4826 * mad / math.sqrt(2.0)
        if sigma_pt is None or drift > sigma_pt:
            return drift, "spread of consecutive records (1.4826·MAD/√2)"
    return sigma_pt, source


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
    penalty = 2.0 * sigma ** 2 * math.log(len(y))
    algo = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(np.asarray(y).reshape(-1, 1))
    breaks = [b for b in algo.predict(pen=penalty) if b < len(y)]
    edges = [0, *breaks, len(y)]
    changes = []
    for i, cut in enumerate(breaks):
        left = [v for p in points[edges[i]:cut] for v in p.executions]
        right = [v for p in points[cut:edges[i + 2]] for v in p.executions]
        before, after = float(np.median(left)), float(np.median(right))
        magnitude = after / before - 1.0
        test = wilcoxon_two_sample(np.asarray(right), np.asarray(left), "two-sided")
        conf = 1.0 - float(test.p_value)
        if conf < confidence or abs(magnitude) < min_change:
            continue
        a, b = points[cut - 1], points[cut]
        changes.append(Change(label=label, machine=machine, index=cut,
                              before_record=a.record_id, after_record=b.record_id,
                              before_commit=a.commit, after_commit=b.commit, after_name=b.name,
                              magnitude=magnitude, direction=SLOWER if magnitude > 0 else FASTER,
                              confidence=conf, p_value=float(test.p_value),
                              n_before=len(left), n_after=len(right), before_median=before,
                              after_median=after, unit=unit))
    return SeriesAnalysis(label, machine, len(points), sigma, source, changes)


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
