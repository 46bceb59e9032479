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
Calibrated by simulation (``benchmarks/history_regressions.py`` and ``benchmarks/over_time.py``;
the figures, as measured, in ``docs/history.md`` and ``docs/over-time-measured.md``).

* σ (the penalty's) is the spread of one point: the run-to-run noise of the recorded executions,
  measured robustly (:func:`robust_sigma`: a few slowed executions do not inflate it), times
  √(π/2)/√k for the median of k executions; or, with at least :data:`MIN_POINTS_FOR_DRIFT`
  points, the spread of consecutive differences (1.4826·MAD/√2) when that is larger.

**Drift is not a change** (issue 25, item 2: a +3 % linear drift was reported as a change in
85–100 % of series, a 0.3 %-per-record random walk in 32–100 %):

* a **trend term**: PELT runs on the series less a linear trend, the trend being the
  Theil–Sen slope (Sen 1968) of the pairs of records inside the segments of the previous pass
  (:func:`_segments`; the first pass has no trend, so a step is not taken for one);
* each candidate is **screened on record-level values against the between-record noise**:
  the detrended mean of up to :data:`WINDOW` records after it minus the same before it
  (:func:`_window_test`), whose standard deviation under "no change" comes from a model of the
  records, white noise σ_w plus a random walk s per record, estimated by REML with the trend
  and the candidate steps among the regressors (:func:`record_noise`,
  :mod:`steadybench.history.local_level`), the walk never below a stated least
  (:data:`WALK_RATIO_FLOOR`), and widened when the series' own window differences away from
  the candidate spread more (:func:`_calibrated`); two-sided normal p-value,
  Bonferroni-corrected over the n − 1 places a change could be (PELT chose the place from the
  same data); candidates are accepted strongest first, each one's windows bounded by those
  already accepted (:func:`_accept`). Below :data:`MIN_POINTS_FOR_DRIFT` records this test
  decides; from there on it only orders the candidates (:data:`SCREEN_CONFIDENCE`) and gives
  each change's magnitude;
* from :data:`MIN_POINTS_FOR_DRIFT` records on, **a likelihood-ratio test decides**
  (:func:`_confirmed`): the step in the local level model with the walk re-estimated under
  both hypotheses, judged against its own largest value over the places in series simulated
  without a step, the walk re-estimated in each (a parametric bootstrap at the walk estimated
  without the step, never below the stated least); the candidates are tested in turn, the
  largest ratio first, each with the steps confirmed before it, until one fails; the p-value
  reported is this test's. Up to :data:`INTERVENTION_RECORDS` records, where the walk is too
  poorly determined to be re-estimated without the step (it absorbs the step), the step is
  tested instead with the walk held at REML's upper bound estimated with the step, in the
  statistic and in the simulated null alike (the intervention test, Box & Tiao 1975). The
  window test's walk is estimated with the step among the regressors, and a step placed where
  a random walk wandered most absorbs that wander, so alone it calls wander a change;
* a **default minimum change** of :data:`DEFAULT_MIN_CHANGE` (2 %).

Each change reported has its commit range, its magnitude exp(d) − 1 (trend removed) and its
confidence 1 − p (the likelihood-ratio test's, from :data:`MIN_POINTS_FOR_DRIFT` records on;
the corrected window test's below). The rates measured by ``benchmarks/over_time.py`` are in
``docs/comparison.md``. Assumption, stated: between changes, a record's level moves by a linear
trend and a random walk, and its noise is independent between records.

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..stats.robust import robust_sd

# the direction words, a change and a series' analysis live in .changes: the counts' finder
# (steadybench.counts.history), chosen beside this one by .finders, builds them too
from .changes import FASTER, SLOWER, Change, SeriesAnalysis
from .noise import MIN_DF, record_level
from .thresholds import DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from .store import Point

#: points needed before the spread of consecutive differences is trusted as the drift
MIN_POINTS_FOR_DRIFT = 8
#: fewest points in a series to look for a change in
MIN_POINTS = 3
#: the penalty is PENALTY_FACTOR·σ²·max(ln n, MIN_LOG_N) per change point (module docs)
PENALTY_FACTOR = 3.0
MIN_LOG_N = 2.0
#: records each side of a candidate change in its test
WINDOW = 10
#: the least walk assumed, as a variance ratio q = s²/σ_w² to the white noise: a walk this small
#: cannot be told from white noise in a few hundred records (it raises the variance of a
#: 10-record difference by 14 %; REML estimates q = 0 in about half of 100-record series with
#: q = 0.032, the issue's 0.3 %/record walk under 1.7 % record noise), yet it doubles the
#: variance of the window test's difference, and without it 9–11 % of such series showed a
#: change (benchmarks/over_time.py). A stated assumption, like the between-run floor.
WALK_RATIO_FLOOR = 0.03
#: full-window places needed to check the noise model on the series itself
CALIBRATION_PLACES = 10
#: the window test's confidence as a screen of the candidates, from
#: :data:`MIN_POINTS_FOR_DRIFT` records on, where the likelihood-ratio test of
#: :func:`_step_p_value` decides (and its p-value is reported). 0: every candidate at least
#: ``min_change`` is tested. Gating on the window test as well lost 5 % steps in 30-record
#: walks under 0.88 % record noise, whose walk REML estimates from 30 records: of 400 such
#: series 92.5 % were found with no gate, 91.0 % with the gate at 30 %, 90.5 % at 60 % and
#: 84.5 % at 95 % (of 200; walk-only series with a change 4.2, 3.8, 3.8 and 3.0 %), with every
#: candidate tested (simulated as in benchmarks/over_time.py; docs/over-time-measured.md).
SCREEN_CONFIDENCE = 0.0
#: series of at most this many records test a step by the intervention test at a fixed walk
#: (:func:`~steadybench.history.local_level.intervention_lr`, the walk ratio q held at REML's
#: :data:`INTERVENTION_WALK_BOUND` upper bound with the step among the regressors); longer ones
#: by the likelihood ratio with q profiled. In short series q is poorly determined and, profiled
#: without the step, the walk absorbs the step: of 400 30-record walks with a 5 % step under
#: 0.88 % record noise the profiled ratio found 86.2 % (89.0 % even with its null at the true
#: q), the intervention test 92.0 %, with 3.5 % of 1,000 walks without a step reported changed
#: (3.1 %). With more records the bound, taken at the place where the walk wandered most, is
#: too small more often (at the 75 % bound: 3.9 % false at 40 records, 4.1 % at 50, 5.3 % at
#: 60, 6.7 % at 100), and the profiled ratio already finds 92–98 % there
#: (benchmarks/over_time.py; docs/over-time-measured.md). Its weak side, measured: walks larger than
#: the issue's (0.6–1.2 % per record under 0.88 % record noise, q = 0.46–1.9) gave 5.5–9.3 %
#: false changes in 30–40 records, against 3.1–4.9 % for the profiled ratio.
INTERVENTION_RECORDS = 40
#: the one-sided level of REML's upper bound on q at which the intervention test holds q. In
#: the 30-record walk cells above: the point estimate 94.5 % found / 4.4 % false, 50 % 94.5 /
#: 4.4, 60 % 93.8 / 3.7, 70 % 92.0 / 3.5, 75 % 90.5 / 3.0, 90 % 88.5 / 1.4; at 40 records 70 %
#: gave 93.5 / 4.3 and 60 % 94.5 / 4.9
INTERVENTION_WALK_BOUND = 0.7
#: passes of the joint estimate of the trend and the cuts
TREND_PASSES = 4
#: most pairs of records the Theil–Sen slope uses
THEIL_SEN_PAIRS = 200_000
#: changes smaller than this are not reported unless ``min_change`` says otherwise: about the
#: 95 % band between runs of identical code on the development VM (±3.2–3.7 %, issue 25)
#: halved — smaller record-to-record moves are the machine's. One value with the project
#: thresholds' default (:data:`steadybench.history.thresholds.DEFAULT_THRESHOLD`).
DEFAULT_MIN_CHANGE = DEFAULT_THRESHOLD.value
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


@dataclass(frozen=True)
class RecordNoise:
    """The record-level noise model of a series after its trend is removed:
    y_t = level_t + e_t with e_t ~ (0, σ_w²) and the level a random walk with increments of
    variance s² (s = 0: a steady level). Estimated by :func:`record_noise`; σ_w never below the
    spread the executions inside records show (or the between-run floor when nothing else is
    known)."""

    white: float
    walk: float
    slope: float
    source: str
    #: how much wider the windows' differences spread, in the series itself, than the model
    #: says (≥ 1; :func:`_calibrated`)
    inflation: float = 1.0

    def sd_of_difference(self, before: int, after: int) -> float:
        """The standard deviation of mean(after window) − mean(before window) under no change:
        σ_w²(1/a + 1/b) + s²·[Σ_{m<a} ((a−m)/a)² + Σ_{0<m<b} ((b−m)/b)²] (the level's walk
        between the windows' centres)."""
        a, b = after, before
        return self.inflation * math.sqrt(self.white ** 2 * (1.0 / a + 1.0 / b)
                                          + self.walk ** 2 * _walk_weight(a, b))


@functools.lru_cache(maxsize=1024)
def _walk_weight(a: int, b: int) -> float:
    """Σ_{m<a} ((a−m)/a)² + Σ_{0<m<b} ((b−m)/b)² of :meth:`RecordNoise.sd_of_difference`
    (depends on the window sizes only: computed once per pair)."""
    import numpy as np

    return float(np.sum(((a - np.arange(a)) / a) ** 2)
                 + np.sum(((b - np.arange(1, b)) / b) ** 2))


def theil_sen(y: Any, breaks: Sequence[int] = ()) -> float:
    """The Theil–Sen slope per record (Sen, JASA 1968): the median of the slopes of all pairs
    of records inside the same segment (``breaks`` cut the series: a step between two records
    is not a slope), robust to a few odd records; above :data:`THEIL_SEN_PAIRS` pairs, of a
    seeded random sample of them. 0 without a pair."""
    import numpy as np

    from .pairs import pair_slopes

    # only the sampled pairs' slopes are computed (the same values as sampling from all)
    every = pair_slopes(np.asarray(y, dtype=float), breaks, THEIL_SEN_PAIRS, 20251125)
    return float(np.median(every)) if every.size else 0.0


def record_noise(y: Sequence[float], floor: float, breaks: Sequence[int] = (),
                 slope: float = 0.0) -> RecordNoise:
    """The :class:`RecordNoise` of a series of record-level log values (oldest first): white
    noise and a random walk by REML with a trend and a step at each of ``breaks``
    (:func:`~steadybench.history.local_level.reml_noise`); the white noise never below
    ``floor``, the walk never below √:data:`WALK_RATIO_FLOOR` times the white noise (why: the
    constant's comment) unless the records rule that out (REML's 90 % upper bound on the walk
    is below it: then that bound). ``slope`` is the trend the window tests remove."""
    from .local_level import reml_noise

    n = len(y)
    found = reml_noise(y, breaks) if n >= MIN_POINTS_FOR_DRIFT else None
    if found is None:
        return RecordNoise(floor, 0.0, slope, "within-record spread (too few records for a "
                                              "model of the wander)")
    white, walk = max(found[0], floor), found[1]
    # the stated least, unless the records rule it out (q's 90 % upper bound is below it)
    least = min(math.sqrt(WALK_RATIO_FLOOR) * found[0], found[2])  # of the records' noise
    source = f"white noise and random walk by REML over {n} records, trend and candidate steps out"
    if walk < least:
        walk = least
        source += "; the walk at its stated least or at its 90 % upper bound, the smaller"
    return RecordNoise(white, walk, slope, source)


def _calibrated(ya: Sequence[float], model: RecordNoise,
                leave_out: Sequence[int] = ()) -> RecordNoise:
    """The model checked against the series itself: the robust spread (1.4826·MAD) of the
    full-window differences at every place whose windows do not span a step in ``leave_out``
    (the candidate being tested: places less than :data:`WINDOW` records from it are left
    out); when it is larger than the model's (a wander the model missed), every standard
    deviation is widened by that ratio. Needs :data:`WINDOW` such places, else the model
    stands.

    A window that spans the step under test counts the step as its own noise: in a 50-record
    series with a step in the middle, 19 of the 31 full-window places did, the model was
    widened 5–18 times and the step was found in 5 of 15 series (issue 25). Leaving out only
    the candidate under test (not every candidate) keeps a random walk's wander, which PELT
    cuts into many candidates, in the places that remain."""
    import dataclasses

    import numpy as np

    n = len(ya)
    places = [k for k in range(WINDOW, n - WINDOW + 1)
              if all(abs(k - b) >= WINDOW for b in leave_out)]
    if len(places) < CALIBRATION_PLACES:
        return model
    arr = np.asarray(ya, dtype=float) - model.slope * np.arange(n)
    c = np.concatenate([[0.0], np.cumsum(arr)])
    k = np.asarray(places)
    diffs = (c[k + WINDOW] - c[k]) / WINDOW - (c[k] - c[k - WINDOW]) / WINDOW
    ratio = robust_sd(diffs) / model.sd_of_difference(WINDOW, WINDOW)
    if ratio <= 1.0:
        return model
    return dataclasses.replace(model, inflation=ratio,
                               source=f"{model.source}; widened ×{ratio:.2f} to the spread of "
                                      "the series' own window differences")


def _window_test(y: Sequence[float], k: int, lo: int, hi: int,
                 model: RecordNoise) -> tuple[float, float, int, int]:
    """The detrended difference after − before at ``k`` over windows of at most
    :data:`WINDOW` records inside [lo, hi), its z, and the windows' sizes."""
    before = list(range(max(lo, k - WINDOW), k))
    after = list(range(k, min(hi, k + WINDOW)))
    mean_b = sum(y[i] - model.slope * i for i in before) / len(before)
    mean_a = sum(y[i] - model.slope * i for i in after) / len(after)
    d = mean_a - mean_b
    sd = model.sd_of_difference(len(before), len(after))
    z = math.copysign(math.inf, d) if sd == 0 and d != 0 else (0.0 if sd == 0 else d / sd)
    return d, z, len(before), len(after)


def _accept(ya: Sequence[float], candidates: Sequence[int], model: RecordNoise, places: int,
            confidence: float, min_change: float) -> list[int]:
    """The candidate cuts that stand, strongest first: each tested (:func:`_window_test`, at
    PELT's place or a neighbour) with windows bounded only by the cuts already accepted (a
    spurious candidate nearby does not shrink them), Bonferroni over ``places``; the noise
    model checked on the places whose windows do not span that candidate (:func:`_calibrated`)."""
    from ..stats.rank import _ndtr

    accepted: list[int] = []
    remaining = set(candidates)
    n = len(ya)
    while remaining:
        best: tuple[float, int, int, float] | None = None
        for c in remaining:
            lo = max([b for b in accepted if b < c], default=0)
            hi = min([b for b in accepted if b > c], default=n)
            own = _calibrated(ya, model, [c])
            for k in range(max(lo + 1, c - 1), min(hi - 1, c + 1) + 1):
                d, z, _, _ = _window_test(ya, k, lo, hi, own)
                if best is None or abs(z) > best[0]:
                    best = (abs(z), c, k, d)
        if best is None:
            break
        strength, c, k, d = best
        remaining.discard(c)
        if min(1.0, places * 2.0 * _ndtr(-strength)) > 1.0 - confidence:
            break
        if abs(math.expm1(d)) >= min_change and k not in accepted:
            accepted.append(k)
    return sorted(accepted)


def _step_lr(ya: Sequence[float], cut: int,
             others: Sequence[int]) -> tuple[float, float, int, bool]:
    """The likelihood ratio of a step at ``cut`` with ``others`` in both models, the walk ratio
    q its null is drawn at, the number of records it was taken on, and whether it is the
    intervention test (:data:`INTERVENTION_RECORDS`). The walk ratio is never below
    :data:`WALK_RATIO_FLOOR` unless its REML 90 % upper bound is: the maximum likelihood
    estimate is 0 in about half of 100-record series of the issue's walk at 1.67 % record noise,
    and a null drawn at 0 called 8.0 % of them changed.

    * Up to :data:`INTERVENTION_RECORDS` records, the intervention test
      (:func:`~steadybench.history.local_level.intervention_lr`) with q held at REML's
      :data:`INTERVENTION_WALK_BOUND` upper bound with the step among the regressors (a step
      does not inflate it) in the statistic and in its null.
    * Beyond, the ratio with q profiled with and without the step
      (:func:`~steadybench.history.local_level.step_lr`), its null at the q estimated without
      the step; a series longer than
      :data:`~steadybench.history.local_level.MAX_NULL_RECORDS` is tested on that many records
      around the step."""
    from .local_level import MAX_NULL_RECORDS, intervention_lr, step_lr, walk_ratio_upper

    n = len(ya)
    lo = min(max(cut - MAX_NULL_RECORDS // 2, 0), max(n - MAX_NULL_RECORDS, 0))
    hi = min(n, lo + MAX_NULL_RECORDS)
    inside = [c - lo for c in others if lo < c < hi]
    fixed = hi - lo <= INTERVENTION_RECORDS
    if fixed:
        q0 = walk_ratio_upper(ya[lo:hi], [*inside, cut - lo], INTERVENTION_WALK_BOUND)
    else:
        lr, q0 = step_lr(ya[lo:hi], cut - lo, inside)
    if q0 < WALK_RATIO_FLOOR:  # the stated least walk, unless the records rule it out
        q0 = max(q0, min(WALK_RATIO_FLOOR, walk_ratio_upper(ya[lo:hi], inside)))
    if fixed:
        lr = intervention_lr(ya[lo:hi], cut - lo, inside, q0)
    return lr, q0, hi - lo, fixed


def _confirmed(ya: Sequence[float], candidates: Sequence[int],
               confidence: float) -> dict[int, float]:
    """The candidate steps that the likelihood-ratio test confirms, with their p-values: the
    test that decides, and whose confidence is reported, from :data:`MIN_POINTS_FOR_DRIFT`
    records on (the window test only screens, :data:`SCREEN_CONFIDENCE`).

    The statistic (:func:`_step_lr`; up to :data:`INTERVENTION_RECORDS` records the
    intervention test at a held q instead, its null at that q) is the ratio of a step with the
    walk ratio q profiled with and without it
    (:func:`~steadybench.history.local_level.step_lr`); its null is the largest ratio over the
    n − 1 places in series of the model without the step, each draw profiling q again, at the
    q estimated without the step (:func:`~steadybench.history.local_level.max_lr_p_value`: a
    parametric bootstrap of the whole test, Efron & Tibshirani 1993 §16.4). The candidates are
    tested in turn, the largest ratio first, each with the steps confirmed before it in both
    models, and the first that fails ends the search: forward selection with a max-type test
    at each stage, as in binary segmentation (Vostrikova 1981; Bai & Perron, Econometrica
    1998, sequential tests of l + 1 against l breaks). The first test is then exactly the one
    the null was simulated for; testing every candidate with all the others as cuts (PELT cuts
    a long walk into many) let those cuts absorb the wander, and 7.7 % of 200-record walks
    showed a change (benchmarks/over_time.py).

    Why the walk is re-estimated without the step: the window test judges a step against the
    walk estimated with the step among the regressors; at the place where a random walk
    wandered most, that step absorbs the wander and the walk it is judged against shrinks
    (alone it called 7 % of 100-record walks changed). The null at the q estimated with the
    step is too small for the same reason: 0.3 %-per-record walks under 0.88 % record noise gave
    5.8–7.3 % false changes in 30-record series against 4.2–4.7 % at the q without it
    (docs/comparison.md)."""
    from .local_level import intervention_p_value, max_lr_p_value

    confirmed: dict[int, float] = {}
    remaining = set(candidates)
    while remaining:
        others = sorted(confirmed)
        lr, q0, m, fixed, cut = max(((*_step_lr(ya, c, others), c) for c in remaining),
                                    key=lambda found: found[0])
        p = (intervention_p_value if fixed else max_lr_p_value)(lr, m, q0)
        if p > 1.0 - confidence:
            break
        confirmed[cut] = p
        remaining.discard(cut)
    return confirmed


def _segments(ya: Sequence[float], sigma: float) -> tuple[list[int], float]:
    """PELT's cuts of the detrended series and the trend, estimated together: the slope
    inside the segments of the previous pass (a step is not a trend), :data:`TREND_PASSES`
    times."""
    import numpy as np
    import ruptures

    arr = np.asarray(ya, dtype=float)
    penalty = PENALTY_FACTOR * sigma ** 2 * max(math.log(arr.size), MIN_LOG_N)
    breaks: list[int] = []
    slope = 0.0
    for step in range(TREND_PASSES if arr.size >= MIN_POINTS_FOR_DRIFT else 1):
        if step > 0:  # the first pass without a trend: a step must not pass for one
            slope = theil_sen(arr, breaks)
        detrended = arr - slope * np.arange(arr.size)
        # KernelCPD with the linear kernel: PELT on the l2 cost, in ruptures' C code
        algo = ruptures.KernelCPD(kernel="linear", min_size=1).fit(detrended.reshape(-1, 1))
        new = [b for b in algo.predict(pen=penalty) if b < arr.size]
        if new == breaks:
            break
        breaks = new
    return breaks, slope


def find_changes(points: Sequence[Point], label: str = "", machine: str = "",
                 confidence: float = 0.95,
                 min_change: float | None = None) -> SeriesAnalysis:
    """Change points of one series (one benchmark on one machine), oldest point first.

    Candidates come from PELT on the detrended record values; each is then tested on
    record-level values (module docs): the detrended mean of up to :data:`WINDOW` records after
    it against the same before it, against the record noise model (:func:`record_noise`),
    two-sided, Bonferroni-corrected over the n − 1 places a change could be; from
    :data:`MIN_POINTS_FOR_DRIFT` records on that test only screens, and the likelihood-ratio
    test of :func:`_confirmed` decides. A change is reported when the deciding test's
    confidence is at least ``confidence`` and its magnitude at least ``min_change`` (default
    :data:`DEFAULT_MIN_CHANGE`) either way.
    """
    import numpy as np

    from ..compare.between import DEFAULT_SIGMA
    from ..stats.rank import _ndtr

    if min_change is None:
        min_change = DEFAULT_MIN_CHANGE
    unit = points[0].unit if points else "s"
    if len(points) < MIN_POINTS:
        return SeriesAnalysis(label, machine, len(points), None, "", [],
                              f"{len(points)} record(s): at least {MIN_POINTS} are needed")
    y = [record_level(p) for p in points]
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
        breaks, slope = _segments(ya, sigma)
        odd = one_off_records(breaks, list(np.asarray(ya) - slope * np.arange(len(ya))))
        if not odd or len(active) - len(odd) < MIN_POINTS:
            break
        set_aside.extend(active[i] for i in odd)
        active = [i for k, i in enumerate(active) if k not in set(odd)]
    kept = [points[i] for i in active]
    ya = [y[i] for i in active]
    # the record noise: never below the executions' own spread, nor the between-run floor
    # when the executions say nothing (compare.between.DEFAULT_SIGMA)
    floor = sigma if source.startswith("run-to-run") else DEFAULT_SIGMA
    if len(ya) < MIN_POINTS_FOR_DRIFT:
        floor = max(floor, sigma)
    model = record_noise(ya, floor, breaks, slope)
    places = max(1, len(ya) - 1)
    # from MIN_POINTS_FOR_DRIFT records on the likelihood-ratio test decides and the window
    # test only screens the candidates; below, the window test decides
    tested = len(ya) >= MIN_POINTS_FOR_DRIFT
    screen = SCREEN_CONFIDENCE if tested else confidence
    accepted = _accept(ya, breaks, model, places, screen, min_change)
    confirmed = _confirmed(ya, accepted, confidence) if tested else {}
    if tested:
        accepted = sorted(confirmed)
    # the trend and the noise again, with only the changes that stood as cuts; then each is
    # tested once more with them
    slope = theil_sen(np.asarray(ya), accepted) if len(ya) >= MIN_POINTS_FOR_DRIFT else slope
    model = record_noise(ya, floor, accepted, slope)
    changes = []
    for cut in accepted:
        lo = max([b for b in accepted if b < cut], default=0)
        hi = min([b for b in accepted if b > cut], default=len(ya))
        d, z, nb, na = _window_test(ya, cut, lo, hi, _calibrated(ya, model, [cut]))
        p = min(1.0, places * 2.0 * _ndtr(-abs(z)))
        magnitude = math.expm1(d)
        if 1.0 - p < screen or abs(magnitude) < min_change:
            continue
        if tested:
            p = confirmed[cut]
        conf = 1.0 - p
        if conf < confidence:
            continue
        left = [v for pt in kept[cut - nb:cut] for v in pt.executions]
        right = [v for pt in kept[cut:cut + na] for v in pt.executions]
        a, b = kept[cut - 1], kept[cut]
        changes.append(Change(label=label, machine=machine, index=active[cut],
                              before_record=a.record_id, after_record=b.record_id,
                              before_commit=a.commit, after_commit=b.commit, after_name=b.name,
                              magnitude=magnitude, direction=SLOWER if magnitude > 0 else FASTER,
                              confidence=conf, p_value=p,
                              n_before=nb, n_after=na,
                              before_median=float(np.median(left)) if left else math.nan,
                              after_median=float(np.median(right)) if right else math.nan,
                              unit=unit))
    note = None
    if set_aside:
        note = ("set aside as one-off records (different from both neighbours): "
                + ", ".join(f"#{points[i].record_id}" for i in sorted(set_aside)))
    return SeriesAnalysis(label, machine, len(points), sigma,
                          f"{source}; record noise: {model.source}", changes, note,
                          trend=model.slope, walk=model.walk)
