"""Discrete performance levels in a run series (Rancid §VI-D, Fig. 17a).

The paper saw managed executions whose run times "frequently jump between two different
performance levels", like the steps a frequency change makes, and others with one base level
and a few slow outliers. :func:`detect_levels` tells the two apart and gives the level values.

The rule (stated so a reader can check it):

1. Fit one-dimensional Gaussian mixtures with k = 1 … ``max_levels`` components to the run
   values by expectation–maximisation (Dempster, Laird & Rubin 1977), each started from a
   one-dimensional k-means on quantile seeds, so the fit is deterministic.
2. Score each fit by the Bayesian information criterion, BIC = −2 ln L + p ln n with
   p = 3k − 1 free parameters (Schwarz 1978); lower is better.
3. A fit with k ≥ 2 counts only when its components are *levels*, not outliers or a skewed
   shape: every component holds at least ``min_weight`` of the runs (10 %) and at least
   ``min_runs`` runs (5) by hard assignment, and every two adjacent components are separated
   by Ashman's D = √2 |μ₁ − μ₂| / √(σ₁² + σ₂²) ≥ ``min_separation`` (2: clean separation;
   Ashman, Bird & Zepf 1994).
4. The series has levels when the admissible fit with the lowest BIC has k ≥ 2. Each run is
   assigned to its most probable component; ``transitions`` counts changes of level between
   consecutive runs: k − 1 transitions is a *step* (one change, e.g. a throttle), more are
   *jumps* back and forth.

A series longer than 2000 values is fitted on 2000 values evenly spaced through it, and every
value is then assigned to its most probable level. A standard deviation is floored at 10⁻³ of
the series' own, so exactly repeated values (a
clock's resolution) do not make the likelihood infinite. Fewer than ``min_series`` values (20),
or values that are all equal, are one level: too few runs cannot tell levels from noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

MAX_LEVELS = 4
MIN_WEIGHT = 0.10
MIN_RUNS = 5
MIN_SEPARATION = 2.0
#: shorter series are not examined
MIN_SERIES = 20
#: a component's standard deviation is at least this fraction of the series' own
SD_FLOOR = 1e-3
EM_ITERATIONS = 200
#: EM stops when the log-likelihood per value improves by less than this
EM_TOLERANCE = 1e-7
#: longer series are fitted on this many values evenly spaced through the series (all values
#: are then assigned to the fitted levels)
FIT_VALUES = 2000


@dataclass(frozen=True)
class Level:
    """One level: its mean and standard deviation (the component's), its share of the runs
    and how many runs were assigned to it."""

    value: float
    sd: float
    weight: float
    runs: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Level:
        """A level as :meth:`to_dict` wrote it in an evaluation's JSON (a missing or
        non-numeric figure reads as NaN, or 0 runs)."""
        read = {f.name: _float(data.get(f.name)) for f in fields(cls)}
        runs = read.pop("runs")
        return cls(**read, runs=int(runs) if math.isfinite(runs) else 0)


def _float(item: Any) -> float:
    ok = isinstance(item, int | float) and not isinstance(item, bool)
    return float(item) if ok else math.nan


@dataclass(frozen=True)
class LevelResult:
    """What :func:`detect_levels` found: ``levels`` (by increasing value; one when the series
    has no distinct levels), ``multi_level``, ``kind`` (``"single"``, ``"step"`` or
    ``"jumps"``), ``transitions``, the BIC of each k tried, and each run's level index."""

    levels: list[Level]
    multi_level: bool
    kind: str
    transitions: int
    n: int
    bic: dict[int, float] = field(default_factory=dict)
    assignment: list[int] = field(default_factory=list)

    def to_dict(self, with_assignment: bool = False) -> dict[str, Any]:
        out = {"multi_level": self.multi_level, "kind": self.kind,
               "transitions": self.transitions, "n": self.n,
               "levels": [lv.to_dict() for lv in self.levels],
               "bic": {str(k): v for k, v in self.bic.items()}}
        if with_assignment:
            out["assignment"] = list(self.assignment)
        return out


@dataclass
class _Fit:
    k: int
    weights: Any
    means: Any
    sds: Any
    loglik: float
    resp: Any

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + (3 * self.k - 1) * math.log(self.resp.shape[0])


def _log_densities(x: Any, weights: Any, means: Any, sds: Any) -> Any:
    import numpy as np

    z = (x[:, None] - means[None, :]) / sds[None, :]
    return np.log(weights)[None, :] - 0.5 * z * z - np.log(sds)[None, :] - 0.5 * math.log(
        2 * math.pi)


def _kmeans(x: Any, k: int) -> Any:
    """One-dimensional k-means (Lloyd) from the quantile seeds; returns the labels."""
    import numpy as np

    centres = np.quantile(x, (np.arange(k) + 0.5) / k)
    labels = np.zeros(x.size, dtype=int)
    for _ in range(100):
        labels_new = np.argmin(np.abs(x[:, None] - centres[None, :]), axis=1)
        for j in range(k):
            members = x[labels_new == j]
            if members.size:
                centres[j] = members.mean()
        if np.array_equal(labels_new, labels):
            break
        labels = labels_new
    return labels


def fit_mixture(x: Any, k: int, sd_floor: float) -> _Fit:
    """A k-component Gaussian mixture fitted to ``x`` by EM (see the module's rule)."""
    import numpy as np

    labels = _kmeans(x, k)
    resp = np.zeros((x.size, k))
    resp[np.arange(x.size), labels] = 1.0
    loglik = -math.inf
    weights = means = sds = None
    for _ in range(EM_ITERATIONS):
        counts = resp.sum(axis=0) + 1e-300
        weights = np.maximum(counts / x.size, 1e-300)
        means = (resp * x[:, None]).sum(axis=0) / counts
        var = (resp * (x[:, None] - means[None, :]) ** 2).sum(axis=0) / counts
        sds = np.maximum(np.sqrt(var), sd_floor)
        dens = _log_densities(x, weights, means, sds)
        top = dens.max(axis=1, keepdims=True)
        total = top[:, 0] + np.log(np.exp(dens - top).sum(axis=1))  # log-sum-exp
        new = float(total.sum())
        resp = np.exp(dens - total[:, None])
        done = new - loglik <= EM_TOLERANCE * x.size
        loglik = new
        if done:
            break
    return _Fit(k, weights, means, sds, loglik, resp)


def _admissible(fit: _Fit, labels: Any, n: int, min_weight: float, min_runs: int,
                min_separation: float) -> bool:
    import numpy as np

    if fit.k == 1:
        return True
    order = np.argsort(fit.means)
    counts = np.bincount(labels, minlength=fit.k)
    if any(fit.weights[j] < min_weight or counts[j] < max(min_runs, min_weight * n)
           for j in order):
        return False
    for a, b in zip(order[:-1], order[1:]):
        d = math.sqrt(2) * abs(fit.means[b] - fit.means[a]) / math.sqrt(
            fit.sds[a] ** 2 + fit.sds[b] ** 2)
        if d < min_separation:
            return False
    return True


def detect_levels(values: Sequence[float], *, max_levels: int = MAX_LEVELS,
                  min_weight: float = MIN_WEIGHT, min_runs: int = MIN_RUNS,
                  min_separation: float = MIN_SEPARATION,
                  min_series: int = MIN_SERIES) -> LevelResult:
    """Find the discrete levels of a run series by the rule of this module's docstring."""
    import numpy as np

    raw = np.asarray([float(v) for v in values if v is not None and math.isfinite(float(v))],
                     dtype=float)
    n = int(raw.size)
    spread = float(np.std(raw)) if n else 0.0
    if n < max(min_series, 2 * min_runs) or spread == 0.0:
        value = float(np.mean(raw)) if n else math.nan
        return LevelResult([Level(value, spread, 1.0, n)] if n else [], False, "single", 0, n,
                           {}, [0] * n)
    centre = float(np.median(raw))
    x = (raw - centre) / spread  # fitted in standard units: the same fit for any scale
    sample = x if n <= FIT_VALUES else x[np.linspace(0, n - 1, FIT_VALUES).round().astype(int)]
    m = int(sample.size)
    best: tuple[float, _Fit, Any] | None = None
    bic: dict[int, float] = {}
    for k in range(1, max(1, min(max_levels, m // min_runs)) + 1):
        fit = fit_mixture(sample, k, SD_FLOOR)
        labels = np.argmax(fit.resp, axis=1)
        bic[k] = fit.bic
        if not _admissible(fit, labels, m, min_weight, min_runs, min_separation):
            continue
        if best is None or fit.bic < best[0]:
            best = (fit.bic, fit, labels)
    assert best is not None  # k = 1 is always admissible
    _, fit, labels = best
    if m < n:  # every value to its most probable level
        labels = np.argmax(_log_densities(x, fit.weights, fit.means, fit.sds), axis=1)
    order = list(np.argsort(fit.means))
    rank = {int(j): i for i, j in enumerate(order)}
    assignment = [rank[int(j)] for j in labels]
    counts = np.bincount(labels, minlength=fit.k)
    levels = [Level(float(fit.means[j] * spread + centre), float(fit.sds[j] * spread),
                    float(fit.weights[j]), int(counts[j])) for j in order]
    transitions = sum(1 for a, b in zip(assignment, assignment[1:]) if a != b)
    multi = fit.k >= 2
    kind = "single" if not multi else "step" if transitions <= fit.k - 1 else "jumps"
    return LevelResult(levels, multi, kind, transitions, n, bic, assignment)
