"""The variation between invocations: comparing results taken at different times.

Two separate ``steadybench run``\\ s of identical code differ by more than their executions'
spread says: the machine shifts every execution of one invocation together (frequency, cache
and memory placement, neighbours; Kalibera & Jones, "Rigorous benchmarking in reasonable time",
ISMM 2013, call it the variation at the level of a run). So a run is a **random effect**:

    ln(time of execution j of run r) = μ + u_r + e_rj,   u_r ~ (0, τ²),  e_rj ~ (0, σ²)

and the log-ratio of two runs' medians, d = ln m_B − ln m_N, has variance
se_B² + se_N² + 2τ², where se is the standard error of a run's log-median from its own
executions (a seeded bootstrap, Efron & Tibshirani 1993 §6) and τ the run-to-run spread. The
executions inside one run cannot estimate τ, so τ comes, in this order, from:

1. **the data**: several invocations on each side — their run-level values (:func:`from_runs`,
   Welch's test on them);
2. **this machine's earlier runs** of the benchmark (the last-run store or the history), once
   :data:`MIN_RUNS` are known: the spread σ_L of one run-level log-median, from the biweight
   midvariance of consecutive levels' differences (robust to a real change among them;
   :func:`robust_spread`), which already holds a run's own se; the comparison then uses
   max(2σ_L², se_B² + se_N²) (:func:`from_levels`);
3. **a stated default floor**, :data:`DEFAULT_SIGMA` (1 % per run: the issue's measurements on
   the development VM found 0.5–1 % per run, and a 95 % band of ±3.2–3.7 % between runs of
   identical code).

A drift probe (a reference workload timed during the run, ``benchmarks/drift_probe.py``) is
not a source: measured on the development VM, under CPU contention and on a quiet guest whose
host slowed whole runs, dividing by it halved the run-to-run spread of an interpreter loop and
made that of other workloads two to ten times larger (``docs/over-time-measured.md``, "A drift
probe").

**A heavy-tail guard** (:class:`HeavyTail`). The biweight gives a run far from the others little
or no weight, so on a machine whose runs now and then land in a slow burst (the development
VM's host alternates between two speeds 1.35–1.7× apart, and a run with most of its executions
in the slow phase is 25–40 % slower) σ_L describes only the quiet runs, and a pair with one run
in a burst is called "slower" or "faster". So the same earlier levels are also read without a
model: of their m − 1 consecutive differences (each the shift between two earlier runs of
identical code, as d is), the count c as large as |d|. When the t-test calls a difference at
level α but c ≥ :data:`TAIL_MIN_COUNT` and c/(m − 1) > α, the verdict is *inconclusive*:
shifts that large are common here between runs of the same code. A real step among the earlier
levels spoils one difference and one unusual earlier run two, so neither vetoes on its own
(hence the minimum of 3). Measured on normal levels (``benchmarks/guard_cost.py``) the guard
costs little; it applies only to a spread learned from earlier runs (source ``history``), not
to the ``data`` or the ``default`` floor.

The test is Student's t on d/SE with Welch–Satterthwaite degrees of freedom over the three
components (each se with n − 1, τ² with its own: ∞ for the floor; for m earlier runs, the
effective degrees of freedom of the biweight estimate, 2·E²/Var by a seeded simulation — 5.1
for 10 runs, 11.7 for 20, 31 for 50; the MAD of the differences used before had 2.6, 5.6 and
15, and was stated as 3.3, 7.0 and 18); the interval
exp(d ± t·SE) is the interval of median(BASE)/median(NEW), the figure printed beside it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .median import median

#: the stated default run-to-run spread (σ of ln time of a run's shift) when nothing is known
DEFAULT_SIGMA = 0.01
#: earlier run-level values needed before this machine's own spread replaces the floor: with
#: fewer, its estimate has under 5 degrees of freedom (10 runs: 5.1; 5 runs: 2.1, a t quantile
#: of 4.2 that made every interval twice as wide as the floor's)
MIN_RUNS = 10
#: bootstrap resamples of a run's log-median (seeded: the result is reproducible)
BOOTSTRAP = 1000
BOOTSTRAP_SEED = 20251125
#: the biweight's tuning constant (in MADs) and its calibration simulation's size and seed
BIWEIGHT_C = 9.0
CALIBRATION_DRAWS = 20000
CALIBRATION_SEED = 20251126

SOURCES = ("data", "history", "default")
#: the power at which :meth:`AcrossTime.detectable` states the smallest change a comparison
#: can find (80 %, the usual planning figure: Cohen 1988)
DETECT_POWER = 0.8
#: the fewest earlier consecutive shifts at least as large as |d| that can make the heavy-tail
#: guard veto a verdict. A real step among the earlier levels makes one such shift; one
#: unusual earlier run makes two (into it and out of it); so 3 asks the machine to have shown
#: it more than once. With 2, one 33 % burst among 40 steady runs made 9 of 16 real 5 %
#: slowdowns inconclusive (``docs/over-time-measured.md``, the guard re-scored)
TAIL_MIN_COUNT = 3


@dataclass(frozen=True)
class RunNoise:
    """How much separate invocations of the same code differ on this machine.

    ``sigma`` is the standard deviation of a run-level ln(time) (for ``history``, the spread of
    whole runs' log-medians; for ``default``, the floor on the shift alone); ``df`` its degrees
    of freedom (inf for the floor); ``runs`` how many runs it was learned from."""

    sigma: float
    df: float
    source: str
    runs: int
    where: str = "this machine"
    #: the consecutive differences of the earlier run levels (source ``history``), oldest
    #: first: what the heavy-tail guard counts (:class:`HeavyTail`)
    shifts: tuple[float, ...] = field(default=(), repr=False)

    @property
    def band(self) -> float:
        """The 95 % band of the ratio between two runs of identical code, as a fraction
        (exp(1.96·√2·σ) − 1)."""
        return math.expm1(1.959964 * math.sqrt(2.0) * self.sigma)

    def describe(self) -> str:
        """``between runs on this machine: ±1.8 %, from 14 earlier runs``."""
        if self.source == "default":
            return (f"between runs: ±{self.band:.1%} (95 %), the default floor: no earlier "
                    "runs known here")
        if self.source == "data":
            return f"between runs: ±{self.band:.1%} (95 %), from the {self.runs} runs compared"
        return (f"between runs on {self.where}: ±{self.band:.1%} (95 %), from {self.runs} "
                "earlier runs")

    def to_dict(self) -> dict[str, Any]:
        out = {**asdict(self), "band": self.band, "text": self.describe()}
        del out["shifts"]  # the kept levels hold them; the guard's counts are in the test's
        return out


@dataclass(frozen=True)
class HeavyTail:
    """The heavy-tail guard's reading of the earlier levels for one observed difference d:
    ``count`` of the ``total`` consecutive differences of earlier run levels on this machine
    were at least |d|; ``largest`` is the largest of them in size (a signed difference of
    ln(time), positive when the later run was slower)."""

    count: int
    total: int
    largest: float

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0

    def vetoes(self, alpha: float) -> bool:
        """True when shifts as large as d are too common here for a test at level ``alpha``
        to call it a change: at least :data:`TAIL_MIN_COUNT` of them and a share above α."""
        return self.count >= TAIL_MIN_COUNT and self.share > alpha

    def describe(self) -> str:
        """``6 of 39 consecutive earlier runs on this machine differed as much (up to +37 %)``."""
        return (f"{self.count} of {self.total} consecutive earlier runs on this machine "
                f"differed as much (up to {math.expm1(self.largest):+.0%})")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share, "text": self.describe()}


def heavy_tail(d: float, noise: RunNoise) -> HeavyTail | None:
    """The guard's count for difference ``d`` under ``noise``; None unless the spread was
    learned from earlier runs (its consecutive shifts known)."""
    if noise.source != "history" or not noise.shifts:
        return None
    shifts = np.asarray(noise.shifts, dtype=float)
    size = np.abs(shifts)
    return HeavyTail(count=int(np.sum(size >= abs(d))), total=int(shifts.size),
                     largest=float(shifts[int(np.argmax(size))]))


DEFAULT = RunNoise(sigma=DEFAULT_SIGMA, df=math.inf, source="default", runs=0)


def _biweight_midvariance(x: np.ndarray) -> np.ndarray:
    """The biweight midvariance of each row (Mosteller & Tukey, *Data Analysis and Regression*,
    1977; Lax, "Robust estimators of scale", JASA 1985, found it the most efficient of the
    robust scales he compared): values more than 9 MADs from the median get no weight, the rest
    a smoothly decreasing one."""
    med = np.median(x, axis=-1, keepdims=True)
    mad = np.median(np.abs(x - med), axis=-1, keepdims=True)
    u = (x - med) / (BIWEIGHT_C * np.where(mad > 0, mad, np.inf))
    w = np.abs(u) < 1.0
    num = np.sum(w * (x - med) ** 2 * (1.0 - u * u) ** 4, axis=-1)
    den = np.sum(w * (1.0 - u * u) * (1.0 - 5.0 * u * u), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x.shape[-1] * num / (den * den)
    return np.where(den != 0, out, 0.0)


@functools.lru_cache(maxsize=64)
def _spread_calibration(m: int) -> tuple[float, float]:
    """For ``m`` run levels of independent normal values: the mean of the half biweight
    midvariance of their consecutive differences (its small-sample bias, divided out) and its
    effective degrees of freedom 2·E²/Var (the Satterthwaite match of a scaled χ²), by a seeded
    simulation (so exactly reproducible; Monte Carlo error under 1 %)."""
    rng = np.random.default_rng(CALIBRATION_SEED + m)
    v = _biweight_midvariance(np.diff(rng.standard_normal((CALIBRATION_DRAWS, m)), axis=1)) / 2
    mean = float(np.mean(v))
    return mean, 2.0 * mean * mean / float(np.var(v))


def robust_spread(levels: Sequence[float]) -> float:
    """The spread of one value of a series whose level may step now and then: the biweight
    midvariance of consecutive differences, halved, its small-sample bias divided out
    (:func:`_spread_calibration`); a step spoils one difference, which gets little or no
    weight."""
    vals = np.asarray(levels, dtype=float)
    if vals.size < 3:
        return 0.0
    v = float(_biweight_midvariance(np.diff(vals)[None, :])[0]) / 2.0
    return math.sqrt(v / _spread_calibration(int(vals.size))[0])


def from_levels(levels: Sequence[float], where: str = "this machine") -> RunNoise | None:
    """The run-to-run spread from earlier runs' log-medians, oldest first (:func:`robust_spread`,
    with the degrees of freedom its simulation gives); None with fewer than :data:`MIN_RUNS`
    values."""
    vals = [v for v in levels if math.isfinite(v)]
    if len(vals) < MIN_RUNS:
        return None
    sigma = robust_spread(vals)
    return RunNoise(sigma=sigma, df=_spread_calibration(len(vals))[1], source="history",
                    runs=len(vals), where=where,
                    shifts=tuple(float(x) for x in np.diff(np.asarray(vals, dtype=float))))


def log_median_se(values: np.ndarray, seed: int = BOOTSTRAP_SEED) -> float:
    """The bootstrap standard error of ln(median) of one run's executions."""
    v = np.log(np.asarray(values, dtype=float))
    n = v.size
    if n < 2 or np.all(v == v[0]):
        return 0.0
    rng = np.random.default_rng(seed)
    meds = np.median(v[rng.integers(0, n, size=(BOOTSTRAP, n))], axis=1)
    return float(np.std(meds, ddof=1))


@dataclass(frozen=True)
class AcrossTime:
    """The comparison of two runs under the random-effect model: d = ln m_B − ln m_N."""

    difference: float
    se: float
    df: float
    statistic: float
    p_faster: float
    p_slower: float
    se_base: float
    se_new: float
    noise: RunNoise
    #: the heavy-tail guard's count for this difference (None: noise not from earlier runs)
    tail: HeavyTail | None = None

    @property
    def p_two_sided(self) -> float:
        return min(1.0, 2.0 * min(self.p_faster, self.p_slower))

    def differs(self, confidence: float) -> bool:
        """The t-test calls a difference at ``confidence`` (two-sided)."""
        return self.p_two_sided < 1.0 - confidence

    def vetoed(self, confidence: float) -> bool:
        """The t-test calls a difference at ``confidence`` but the heavy-tail guard says
        earlier runs of identical code here shifted as much too often (module docs)."""
        return (self.differs(confidence) and self.tail is not None
                and self.tail.vetoes(1.0 - confidence))

    def inconclusive_text(self) -> str:
        """The verdict when :meth:`vetoed`: ``inconclusive: 6 of 39 consecutive earlier runs
        on this machine differed as much (up to +37 %); decide with `steadybench ab```."""
        said = self.tail.describe() if self.tail is not None else "heavy-tailed noise"
        return f"inconclusive: {said}; decide with `steadybench ab`"

    def power(self, change: float, confidence: float) -> float:
        """:func:`change_power` with this comparison's standard error and degrees of
        freedom."""
        return change_power(change, self.se, self.df, confidence)

    def detectable(self, confidence: float, power: float = DETECT_POWER) -> float:
        """:func:`detectable_change` with this comparison's standard error and degrees of
        freedom."""
        return detectable_change(self.se, self.df, confidence, power)

    def interval(self, confidence: float) -> tuple[float, float]:
        """The interval of median(BASE)/median(NEW) at ``confidence``."""
        from scipy import stats

        q = float(stats.t.ppf(0.5 + confidence / 2.0, self.df))
        return math.exp(self.difference - q * self.se), math.exp(self.difference + q * self.se)

    def to_dict(self) -> dict[str, Any]:
        return {"difference": self.difference, "se": self.se, "df": self.df,
                "statistic": self.statistic, "p_faster": self.p_faster,
                "p_slower": self.p_slower, "se_base": self.se_base, "se_new": self.se_new,
                "noise": self.noise.to_dict(),
                "heavy_tail": None if self.tail is None else self.tail.to_dict()}


def change_power(change: float, se: float, df: float, confidence: float) -> float:
    """The probability that a comparison across time with standard error ``se`` (of ln time)
    and ``df`` degrees of freedom calls a true change of ``change`` (NEW/BASE − 1, e.g. 0.05
    for 5 % slower) a difference at ``confidence``: the two-sided t-test's power from the
    noncentral t, noncentrality |ln(1 + change)|/SE
    (:func:`steadybench.compare.plan.two_sided_t_power`; the wrong-direction share of it is
    below α/2)."""
    from .plan import two_sided_t_power

    shift = abs(math.log1p(change))
    if se == 0:
        return 1.0 if shift > 0 else 1.0 - confidence
    return two_sided_t_power(shift / se, df, 1.0 - confidence)


def detectable_change(se: float, df: float, confidence: float,
                      power: float = DETECT_POWER) -> float:
    """The smallest slowdown (NEW/BASE − 1) that a comparison with standard error ``se`` and
    ``df`` degrees of freedom finds with probability ``power`` at ``confidence``: the minimum
    detectable change, what "no change" from two runs can rule out. A smaller change needs
    both versions measured together (``steadybench ab``)."""
    if se == 0:
        return 0.0
    df_key = df if not math.isfinite(df) else float(f"{df:.2g}")
    return math.expm1(_detect_ncp(df_key, 1.0 - confidence, power) * se)


@functools.lru_cache(maxsize=4096)
def _detect_ncp(df: float, alpha: float, power: float) -> float:
    """The noncentrality at which the two-sided t-test at level α has ``power``: solved once per
    degrees of freedom, which :func:`detectable_change` rounds to two significant digits (a
    compare of 10^6 undecided rows solved it 8 ms a row; the rounding moves the change by far
    less than the 0.1 % it is printed to)."""
    from scipy.optimize import brentq

    from .plan import two_sided_t_power

    return float(brentq(lambda x: two_sided_t_power(x, df, alpha) - power, 0.0, 60.0))


def _satterthwaite(parts: Sequence[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variance components (var, df)."""
    total = sum(v for v, _ in parts)
    denom = sum(v * v / df for v, df in parts if v > 0 and math.isfinite(df) and df > 0)
    if total <= 0:
        return math.inf
    return math.inf if denom == 0 else total * total / denom


def _t_test(d: float, se: float, df: float, se_a: float, se_b: float,
            noise: RunNoise) -> AcrossTime:
    """The t-test of d/SE, with the heavy-tail guard's count when the noise has one."""
    from scipy import stats

    t = (math.inf if d > 0 else -math.inf if d < 0 else 0.0) if se == 0 else d / se
    dist = stats.t(df) if math.isfinite(df) else stats.norm()
    return AcrossTime(difference=d, se=se, df=df, statistic=t, p_faster=float(dist.sf(t)),
                      p_slower=float(dist.cdf(t)), se_base=se_a, se_new=se_b, noise=noise,
                      tail=heavy_tail(d, noise))


def across_time(base: np.ndarray, new: np.ndarray, noise: RunNoise) -> AcrossTime:
    """Test median(BASE) = median(NEW) for one run on each side (module docs)."""
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    d = math.log(median(a)) - math.log(median(b))
    se_a, se_b = log_median_se(a), log_median_se(b)
    within = se_a ** 2 + se_b ** 2
    if noise.source == "history":
        between = max(2.0 * noise.sigma ** 2 - within, 0.0)
    else:
        between = 2.0 * noise.sigma ** 2
    var = within + between
    df = _satterthwaite([(se_a ** 2, a.size - 1), (se_b ** 2, b.size - 1),
                         (between, noise.df)])
    return _t_test(d, math.sqrt(var), df, se_a, se_b, noise)


def from_runs(base_runs: Sequence[float], new_runs: Sequence[float]) -> AcrossTime:
    """Several invocations on each side: Welch's test on their run-level ln(median)s
    (``base_runs``/``new_runs`` are the runs' medians, at least 2 a side)."""
    la, lb = np.log(np.asarray(base_runs, dtype=float)), np.log(np.asarray(new_runs, float))
    if la.size < 2 or lb.size < 2:
        raise ValueError("several invocations need at least 2 runs a side")
    qa, qb = float(np.var(la, ddof=1)) / la.size, float(np.var(lb, ddof=1)) / lb.size
    df = _satterthwaite([(qa, la.size - 1), (qb, lb.size - 1)])
    pooled = math.sqrt((float(np.var(la, ddof=1)) + float(np.var(lb, ddof=1))) / 2.0)
    noise = RunNoise(sigma=pooled, df=float(la.size + lb.size - 2), source="data",
                     runs=int(la.size + lb.size), where="these runs")
    d = float(np.mean(la) - np.mean(lb))
    return _t_test(d, math.sqrt(qa + qb), df, math.sqrt(qa), math.sqrt(qb), noise)
