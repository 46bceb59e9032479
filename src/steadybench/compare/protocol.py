"""Comparing two samples with the Speedup-Test protocol (``003`` §2, Fig. 1), in both directions.

**The unit is the independent execution.** Runs inside one process share its state and its
moment on the machine, so they are not independent (``003`` §2 item 3; Kalibera & Jones, ISMM
2013): a side with a single execution has unknown run-to-run noise, and is never tested on its
runs. Such a comparison is inconclusive, with the reason and the command that would decide
(``steadybench ab``). Plain sample files, CSV columns and hyperfine exports hold one value per
execution of a program (``003``'s setting; hyperfine runs each command as a new process);
pyperf files hold one mean per worker process.

For each matched benchmark two protocols run on the executions:

* **mean protocol** — a side with < 30 executions is checked for normality first (Shapiro–Wilk,
  at the fixed level :data:`NORMALITY_LEVEL`, as in ``003`` Example 2.1, whatever the declared
  confidence; only the small side is checked); rejected → "inconclusive: needs ≥ 30 runs", or
  an exact/Monte Carlo permutation test with ``small_sample="permutation"``. Then Welch's
  t-test, always (seed ``003`` uses Welch; choosing Student's t after an F-test let the level
  reach 7–12 % with unequal variances and n, issue 25 item 3); the F-test is information;
* **median protocol** — the Brunner–Munzel test (:mod:`steadybench.stats.brunner_munzel`), of
  P(NEW < BASE) = ½: unlike Wilcoxon–Mann–Whitney it keeps its level when the spreads differ
  (WMW: 12–17 % at a stated 5 % with equal medians, unequal spreads and n); the two-sample
  Kolmogorov–Smirnov test (R 4.2, ties handled) is reported as information.

The interval printed is the distribution-free interval of the BASE/NEW scale ratio
(:func:`steadybench.stats.rank.ratio_interval`), printed beside **its own estimate**, the
Hodges–Lehmann ratio (the median of all ratios BASE_i/NEW_j); the ratio of medians
(``003`` §2.3) stays in the JSON and CSV (``speedup``). Nothing here is O(n²) in the number of
values.

**Results taken at different times** (two runs of ``steadybench run``, history records): a run is
a random effect (:mod:`steadybench.compare.between`); both protocols become the test of that
model, and the interval is that of the ratio of medians, printed beside it.

**Both directions.** The reference tool asks one question ("is NEW faster?") at level 1 − C.
steadybench asks two ("faster?" and "slower?"), so to keep the chance of calling identical
programs different at most 1 − C it decides with the two-sided p-value 2·min(p_faster,
p_slower) < 1 − C; the Holm correction then covers several benchmarks. **Thresholds**: with
``threshold`` X, faster or slower also needs the interval of the ratio outside
[1/(1+X), 1+X]; with ``equivalence``, an interval inside it concludes "unchanged within ±X".
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..defaults import PROCESSES
from ..errors import ConfigurationError, SteadybenchError
from ..stats.speedup import (
    SMALL_SAMPLE,
    is_constant,
    mean_test,
    normality_check,
    speedup,
    variance_test,
)
from .choices import SMALL_SAMPLE_MODES
from .median import median
from .readers import Sample

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no significant difference"
INCONCLUSIVE = "inconclusive: needs ≥ 30 runs"
#: the verdict of a comparison across time with a side measured on a contended machine
BUSY = "inconclusive: busy machine"
#: the verdict of a comparison across time that the heavy-tail guard vetoed: earlier runs of
#: identical code on this machine shifted as much too often (:class:`~steadybench.compare.
#: between.HeavyTail`); the row's warning says how often and names ``steadybench ab``
HEAVY_TAIL = "inconclusive: heavy-tailed noise"
#: verdict when a side has a single execution: its run-to-run noise is unknown
ONE_EXECUTION = "inconclusive: one execution"
#: the level of the normality check, fixed (``003`` Example 2.1 checks at 95% whatever the
#: level of the t-test that follows); it is a check of an assumption, not the verdict
NORMALITY_LEVEL = 0.95

#: levels tried by ``--confidence auto``, highest first (the reference tool's 50%..99% range)
AUTO_LEVELS = tuple(round(0.99 - 0.01 * i, 2) for i in range(50))

PROTOCOLS = ("median", "mean")
BETWEEN_RUNS = ("auto", "on", "off")


@dataclass
class CompareOptions:
    """How a comparison is made; see ``docs/comparison.md``."""

    #: declared confidence level in (0, 1); None means ``auto``
    confidence: float | None = 0.95
    small_sample: str = "inconclusive"
    #: practical threshold X (fraction): faster/slower need the ratio's interval outside
    #: [1/(1+X), 1+X]
    threshold: float = 0.0
    #: conclude "unchanged within ±X" when the interval lies inside that band
    equivalence: bool = False
    #: which protocol gives the verdict
    verdict_by: str = "median"
    show_min: bool = False
    correction: str = "holm"
    #: permutations of the small-sample permutation test
    resamples: int = 9999
    seed: int = 0
    #: compute the interval of the speedup (off in simulations, for speed)
    speedup_ci: bool = True
    #: run-to-run noise known from history, for sides with one execution: a function of a
    #: Sample returning a :class:`steadybench.history.noise.Noise` or None
    noise: Any = None
    #: the variation between invocations (:mod:`steadybench.compare.between`): "auto" uses it
    #: when both sides are results of separate invocations (steadybench results, history
    #: records), "on" for any input, "off" never
    between_runs: str = "auto"
    #: this machine's run-to-run spread: a function of a Sample returning a
    #: :class:`~steadybench.compare.between.RunNoise` or None (then the default floor)
    run_noise: Any = None

    def check(self) -> None:
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise ConfigurationError(
                f"confidence must be between 0 and 1 (exclusive), got {self.confidence}")
        if self.small_sample not in SMALL_SAMPLE_MODES:
            raise ConfigurationError(f"small-sample mode must be one of {SMALL_SAMPLE_MODES}")
        if self.verdict_by not in PROTOCOLS:
            raise ConfigurationError(f"verdict protocol must be one of {PROTOCOLS}")
        if not 0 <= self.threshold < 1:
            raise ConfigurationError(
                f"threshold must be between 0% and 100%, got {self.threshold}")
        if self.equivalence:
            if self.threshold <= 0:
                raise ConfigurationError("--equivalence needs --threshold X% (the band it "
                                         "concludes within)")
            if self.confidence is None:
                raise ConfigurationError("--equivalence needs a fixed --confidence, not auto")
        if self.between_runs not in BETWEEN_RUNS:
            raise ConfigurationError(f"between-runs mode must be one of {BETWEEN_RUNS}")
        if self.resamples < 100:
            raise ConfigurationError(f"permutation resamples must be at least 100, "
                                     f"got {self.resamples}")


def describe_unit(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 1:  # one execution (every in-process run): no numpy reduction needed
        v = float(values[0])  # median and min of one value; its mean is numpy's sum from
        # 0.0, so -0.0 + 0.0 = 0.0 (NaN and infinities stay)
        return {"n": 1, "mean": v + 0.0, "median": v, "min": v, "stdev": None}
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "median": median(values),
        "min": float(values.min()),
        "stdev": float(values.std(ddof=1)) if values.size > 1 else None,
    }


def _exact(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Both samples constant: the difference is known exactly, no test is defined."""
    da, db = float(a[0]), float(b[0])
    return {"test": "exact (zero variance)", "status": "ok", "statistic": None, "df": None,
            "p_faster": 0.0 if da > db else 1.0, "p_slower": 0.0 if da < db else 1.0,
            "assumptions": {}, "reason": "both samples are constant: tests are undefined, the "
                                         "verdict follows from the values"}


def mean_protocol(a: np.ndarray, b: np.ndarray, confidence: float,
                  opts: CompareOptions, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """The mean branch of ``003`` Fig. 1 at ``confidence``."""
    cache = {} if cache is None else cache
    if is_constant(a) and is_constant(b):
        return _exact(a, b)
    out: dict[str, Any] = {"status": "ok", "assumptions": {}, "reason": ""}
    checks = {side: normality_check(arr, NORMALITY_LEVEL)
              for side, arr in (("base", a), ("new", b)) if arr.size < SMALL_SAMPLE}
    if checks:
        out["assumptions"]["normality"] = {**checks, "level": NORMALITY_LEVEL}
        bad = [(side.upper(), chk) for side, chk in checks.items()
               if chk["rejected"] or chk["rejected"] is None]
        if bad:
            why = "; ".join(
                f"{side}: {'normality rejected (Shapiro–Wilk p = ' + format(chk['pvalue'], '.3g') + ')' if chk['rejected'] else chk['note']}"  # noqa: E501
                for side, chk in bad)
            return _small_sample_fallback("mean", why, a, b, opts, cache, out)
    var = variance_test(a, b, confidence)
    var["note"] = ("information only: Welch's test is used whatever it says (an F-test "
                   "before Student's t lets the level drift to 7–12 %, issue 25 item 3)")
    out["assumptions"]["variance"] = var
    mt = mean_test(a, b, equal_var=False)
    assert mt is not None  # both-constant handled above
    low, high = mt.lower_bound(0.5 + confidence / 2), mt.upper_bound(0.5 + confidence / 2)
    out.update(test=f"{mt.kind} t", statistic=mt.statistic, df=mt.df, p_faster=mt.p_faster,
               p_slower=mt.p_slower,
               ci_difference={"low": low, "high": high, "confidence": confidence,
                              "of": "mean(BASE) − mean(NEW)"},
               one_sided_low=mt.lower_bound(confidence))
    return out


def _small_sample_fallback(stat: str, why: str, a: np.ndarray, b: np.ndarray,
                           opts: CompareOptions, cache: dict[str, Any],
                           out: dict[str, Any]) -> dict[str, Any]:
    """A small sample whose assumption was rejected (``003`` Fig. 1): a permutation test of
    ``stat`` with ``--small-sample permutation`` (exact under "same distribution", whatever its
    shape), else "inconclusive: needs ≥ 30 runs"."""
    if opts.small_sample == "permutation":
        from ..stats.permutation import permutation_test

        key = f"perm-{stat}"
        if key not in cache:
            cache[key] = permutation_test(a, b, stat, opts.resamples, opts.seed)
        perm = cache[key]
        out.update(test=f"permutation ({stat}, {perm.method})", statistic=perm.statistic,
                   df=None, p_faster=perm.p_greater, p_slower=perm.p_less,
                   p_two_sided_test=perm.p_two_sided,
                   reason=f"{why}; permutation test used")
        return out
    out.update(test=None, status="inconclusive", statistic=None, df=None,
               p_faster=None, p_slower=None, reason=f"{why}: needs ≥ 30 runs")
    return out


def median_protocol(a: np.ndarray, b: np.ndarray, confidence: float,
                    opts: CompareOptions, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """The median branch: the Brunner–Munzel test (:mod:`steadybench.stats.brunner_munzel`;
    it keeps its level when the spreads differ, where Wilcoxon–Mann–Whitney does not), with
    the two-sample Kolmogorov–Smirnov test (R's ``ks.test``) reported as information on the
    shapes."""
    from ..stats.brunner_munzel import brunner_munzel
    from ..stats.ks import ks_two_sample

    cache = {} if cache is None else cache
    if is_constant(a) and is_constant(b):
        return _exact(a, b)
    out: dict[str, Any] = {"status": "ok", "assumptions": {}, "reason": ""}
    if "rank" not in cache:
        cache["rank"] = (brunner_munzel(b, a), ks_two_sample(a, b))
    bm, ks = cache["rank"]
    out["assumptions"]["distribution"] = {
        "test": f"kolmogorov-smirnov ({ks.method})", "statistic": ks.statistic,
        "pvalue": ks.p_value, "note": "information only: the rank test is valid whatever the "
                                      "shapes; a small p says they differ in more than location"}
    # brunner_munzel(NEW, BASE): "BASE tends to be larger" is NEW faster
    out.update(test=f"brunner-munzel ({bm.method})", statistic=bm.statistic,
               df=bm.df, p_faster=bm.p_greater, p_slower=bm.p_less,
               p_two_sided_test=bm.p_two_sided,
               relative_effect={"value": bm.relative_effect,
                                "of": "P(NEW < BASE) + ½·P(NEW = BASE)"})
    return out


def two_sided(proto: dict[str, Any]) -> float | None:
    """The two-sided p-value: the test's own (R's definition) when it gives one, else twice
    the smaller one-sided p-value."""
    if proto.get("p_faster") is None:
        return None
    if proto.get("p_two_sided_test") is not None:
        return float(proto["p_two_sided_test"])
    return min(1.0, 2.0 * min(proto["p_faster"], proto["p_slower"]))


def decide(proto: dict[str, Any], confidence: float, p_adjusted: float | None = None) -> str:
    """faster / slower / no significant difference / inconclusive for one protocol."""
    if proto["status"] != "ok":
        return str(proto.get("verdict") or INCONCLUSIVE)
    p = two_sided(proto) if p_adjusted is None else p_adjusted
    if p is None or not p < 1.0 - confidence:
        return NO_DIFFERENCE
    return FASTER if proto["p_faster"] <= proto["p_slower"] else SLOWER


def choose_unit(base: Sample, new: Sample) -> tuple[np.ndarray, np.ndarray, str, str | None]:
    """The independent executions of each side, the unit's name, and why they cannot be
    compared (a side with fewer than 2 executions), or None."""
    unit = base.unit_name if base.unit_name == new.unit_name else \
        f"{base.unit_name} / {new.unit_name}"
    short = [(side, s) for side, s in (("BASE", base), ("NEW", new)) if s.executions.size < 2]
    for side, sample in short:
        if sample.per_execution is None:  # the values are the executions: too few is bad input
            raise SteadybenchError(f"{sample.source or side}: {sample.label}: needs at least 2 "
                                   f"values to compare, has {sample.executions.size}")
    if not short:
        return base.executions, new.executions, unit, None
    sides = " and ".join(f"{side} has {s.executions.size} execution"
                         + ("" if s.executions.size == 1 else "s")
                         + f" ({s.values.size} runs in one process)" for side, s in short)
    # interned: one text for the many rows that share it (10^6 benchmarks, issue 27 item 13)
    reason = sys.intern(f"{sides}: its run-to-run noise is unknown, so its runs are not tested "
                        "as independent values; measure several executions (steadybench run, "
                        f"default {PROCESSES}) or decide live with: steadybench ab BASE_FILE "
                        "NEW_FILE")
    return base.executions, new.executions, unit, reason


def _undecided(reason: str) -> dict[str, Any]:
    return {"status": "inconclusive", "verdict": ONE_EXECUTION, "test": None,
            "statistic": None, "df": None, "p_faster": None, "p_slower": None,
            "assumptions": {}, "reason": reason}


def _protocols(a: np.ndarray, b: np.ndarray, confidence: float, opts: CompareOptions,
               cache: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {"mean": mean_protocol(a, b, confidence, opts, cache),
            "median": median_protocol(a, b, confidence, opts, cache)}


def auto_level(a: np.ndarray, b: np.ndarray, opts: CompareOptions, protocol: str,
               cache: dict[str, Any]) -> float | None:
    """Highest level in 99%..50% (steps of 1%) at which ``protocol`` finds a difference."""
    fn = mean_protocol if protocol == "mean" else median_protocol
    for level in AUTO_LEVELS:
        if decide(fn(a, b, level, opts, cache), level) in (FASTER, SLOWER):
            return level
    return None


def compare_pair(base: Sample, new: Sample, opts: CompareOptions) -> dict[str, Any]:
    """Run both protocols on one matched pair's executions; the verdict is settled later by
    :func:`finish_verdicts` (after the correction for multiple benchmarks)."""
    a, b, unit_used, undecided = choose_unit(base, new)
    warnings: list[str] = []
    if base.unit != new.unit:
        warnings.append(f"units differ: BASE in {base.unit!r}, NEW in {new.unit!r}")
    cache: dict[str, Any] = {}
    row: dict[str, Any] = {
        "name": new.label if new.key == base.key else f"{base.label} → {new.label}",
        "benchmark": new.name, "implementation": new.implementation or new.name,
        "params": dict(new.params), "unit": new.unit, "test_unit": unit_used,
        "base_source": base.source, "new_source": new.source,
        "base": describe_unit(a if a.size else base.values),
        "new": describe_unit(b if b.size else new.values), "warnings": warnings,
        # each side's headline as its results file states it (steadybench results only)
        "base_estimate": base.estimate.to_dict() if base.estimate is not None else None,
        "new_estimate": new.estimate.to_dict() if new.estimate is not None else None,
        "threshold": opts.threshold,
    }
    noise = None
    if undecided is not None and opts.noise is not None and a.size and b.size:
        noise = opts.noise(new) or opts.noise(base)
    across = undecided is None and (opts.between_runs == "on" or (
        opts.between_runs == "auto" and base.one_invocation and new.one_invocation))
    # a model with its own test and interval (between runs, or known noise): the protocols on
    # the executions alone do not run
    modelled = across or noise is not None
    if across:
        _between_runs(row, base, new, a, b, opts)
    elif noise is not None:
        _known_noise(row, a, b, noise, opts)
        undecided = None
    elif undecided is not None:
        row.update(confidence_mode="fixed" if opts.confidence is not None else "auto",
                   confidence=opts.confidence,
                   protocol_confidence=dict.fromkeys(PROTOCOLS, opts.confidence),
                   mean_protocol=_undecided(undecided), median_protocol=_undecided(undecided))
    elif opts.confidence is None:
        levels = {p: auto_level(a, b, opts, p, cache) for p in PROTOCOLS}
        row["confidence_mode"] = "auto"
        row["protocol_confidence"] = levels
        row["confidence"] = levels[opts.verdict_by]
        level_for = {p: (levels[p] if levels[p] is not None else AUTO_LEVELS[-1])
                     for p in PROTOCOLS}
    else:
        row["confidence_mode"] = "fixed"
        row["confidence"] = opts.confidence
        row["protocol_confidence"] = dict.fromkeys(PROTOCOLS, opts.confidence)
        level_for = dict.fromkeys(PROTOCOLS, opts.confidence)
    if undecided is None and not modelled:
        row["mean_protocol"] = mean_protocol(a, b, level_for["mean"], opts, cache)
        row["median_protocol"] = median_protocol(a, b, level_for["median"], opts, cache)
    for p in PROTOCOLS:
        proto = row[f"{p}_protocol"]
        proto["p_two_sided"] = two_sided(proto)
    row["speedup"] = speedup(row["base"]["median"], row["new"]["median"])
    row["speedup_mean"] = speedup(row["base"]["mean"], row["new"]["mean"])
    if opts.show_min:
        row["speedup_min"] = speedup(row["base"]["min"], row["new"]["min"])
        row["speedup_min_note"] = ("min(BASE)/min(NEW): not statistically meaningful "
                                   "(003 §1.3); shown on request")
    if modelled:
        row["speedup_ci"] = row.pop("_noise_ci")
    else:
        row["speedup_ci"] = None
    if undecided is None and not modelled and opts.speedup_ci:
        row["speedup_ci"] = speedup_interval(a, b, level_for[opts.verdict_by])
    return row


def _one_level(row: dict[str, Any], opts: CompareOptions,
               decides: Callable[[float], bool]) -> float:
    """Record in ``row`` the one confidence level both protocols use, and return the level to
    compute at: the fixed ``--confidence``, or (auto) the first of :data:`AUTO_LEVELS` at which
    ``decides(level)`` holds (``None`` recorded when none does; the last level is used)."""
    if opts.confidence is None:
        level = next((lv for lv in AUTO_LEVELS if decides(lv)), None)
        row["confidence_mode"] = "auto"
        used = level if level is not None else AUTO_LEVELS[-1]
    else:
        level = used = opts.confidence
        row["confidence_mode"] = "fixed"
    row["confidence"] = level
    row["protocol_confidence"] = dict.fromkeys(PROTOCOLS, level)
    return used


def _between_runs(row: dict[str, Any], base: Sample, new: Sample, a: np.ndarray,
                  b: np.ndarray, opts: CompareOptions) -> None:
    """Results of separate invocations: both protocols become the test of the random-effect
    model (:mod:`steadybench.compare.between`), with the run-to-run spread from the runs on
    each side, this machine's earlier runs, or the stated floor; the interval is that of
    median(BASE)/median(NEW), the ratio printed."""
    from .between import DEFAULT, across_time, from_runs

    if base.runs is not None and new.runs is not None and min(base.runs.size,
                                                               new.runs.size) >= 2:
        at = from_runs(base.runs, new.runs)
    else:
        found = opts.run_noise(new) or opts.run_noise(base) if opts.run_noise else None
        at = across_time(a, b, found or DEFAULT)
    used = _one_level(row, opts, at.differs)
    low, high = at.interval(used)
    proto = {"status": "ok", "test": "t with between-run noise", "statistic": at.statistic,
             "df": at.df, "p_faster": at.p_faster, "p_slower": at.p_slower,
             "p_two_sided_test": at.p_two_sided,
             "assumptions": {"between_runs": at.to_dict()}, "reason": at.noise.describe()}
    busy = _busy_side(base, new)
    if busy is not None:  # a run on a contended machine is shifted far beyond the model
        proto.update(status="busy", verdict=BUSY, reason=busy)
    elif at.vetoed(used):  # shifts this large are common here between runs of the same code
        proto.update(status="heavy_tail", verdict=HEAVY_TAIL, reason=at.inconclusive_text())
    row["mean_protocol"] = dict(proto)
    row["median_protocol"] = dict(proto)
    row["run_noise"] = at.noise.to_dict()
    row["_noise_ci"] = {"low": low, "high": high, "confidence": used,
                        "achieved_confidence": used,
                        "method": "t with between-run noise (ratio of medians)",
                        "estimate": math.exp(at.difference)}
    row["test_unit"] = f"{row['test_unit']}, run as a random effect"


def _busy_side(base: Sample, new: Sample) -> str | None:
    """Why the comparison across time cannot decide because a side was measured on a
    contended machine (:mod:`steadybench.cpu_pressure`), or None."""
    from ..cpu_pressure import busy_text, is_busy

    sides = [(side, s.cpu_pressure) for side, s in (("BASE", base), ("NEW", new))
             if is_busy(s.cpu_pressure)]
    if not sides:
        return None
    said = "; ".join(f"while {side} was measured {busy_text(share)}"  # type: ignore[arg-type]
                     for side, share in sides)
    return (f"{said}: a run on a busy machine is shifted far beyond the variation between "
            "runs, so results taken at different times cannot be compared; measure both "
            "versions together: steadybench ab BASE NEW")


def _known_noise(row: dict[str, Any], a: np.ndarray, b: np.ndarray, noise: Any,
                 opts: CompareOptions) -> None:
    """A side has one execution, but the history knows the benchmark's run-to-run noise on
    this machine: both protocols become the t-test with that noise
    (:func:`steadybench.history.noise.known_noise_protocol`)."""
    from .known_noise import known_noise_protocol

    used = _one_level(row, opts, lambda lv: decide(known_noise_protocol(a, b, noise, lv), lv)
                      in (FASTER, SLOWER))
    proto = known_noise_protocol(a, b, noise, used)
    ci = proto.pop("ratio_ci")
    row["mean_protocol"] = dict(proto)
    row["median_protocol"] = dict(proto)
    row["_noise_ci"] = ci
    row["test_unit"] = f"{row['test_unit']} with {noise.describe()}"
    row["warnings"].append(noise.describe())


def speedup_interval(a: np.ndarray, b: np.ndarray, level: float) -> dict[str, Any] | None:
    """The distribution-free interval of the BASE/NEW ratio (:func:`~steadybench.stats.rank.
    ratio_interval`); None when undefined (non-positive times, constant samples)."""
    from ..stats.rank import ratio_interval

    try:
        ci = ratio_interval(a, b, level)
    except ValueError:
        return None
    if ci.low is None or ci.high is None or not (math.isfinite(ci.low)
                                                  and math.isfinite(ci.high)):
        return None
    return {"low": float(ci.low), "high": float(ci.high), "confidence": level,
            "achieved_confidence": ci.achieved_confidence, "method": ci.method,
            "estimate": ci.estimate}


def band_decision(ci: dict[str, Any] | None, threshold: float) -> str | None:
    """Where the ratio's interval lies against the band [1/(1+X), 1+X]: "outside-faster",
    "outside-slower", "inside", or "overlaps"; None without an interval."""
    if ci is None:
        return None
    upper = 1.0 + threshold
    lower = 1.0 / upper
    if ci["low"] > upper:
        return "outside-faster"
    if ci["high"] < lower:
        return "outside-slower"
    if threshold > 0 and ci["low"] >= lower and ci["high"] <= upper:
        return "inside"
    return "overlaps"


def adjusted_p_values(p_values: list[float | None], correction: str) -> list[float | None]:
    """The p-values adjusted for testing them all (``correction``), None where a row has no
    p-value (one protocol of every row, in order: :func:`finish_verdicts`)."""
    from ..stats.multiple import adjust

    tested = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    for i, padj in zip(tested, adjust([p_values[i] for i in tested], correction)):
        out[i] = padj
    return out


def finish_verdicts(rows: list[dict[str, Any]], opts: CompareOptions) -> None:
    """Apply the multiple-testing correction and settle each row's verdict in place."""
    correction = opts.correction if opts.confidence is not None else "none"
    adjusted = {p: adjusted_p_values([r[f"{p}_protocol"]["p_two_sided"] for r in rows],
                                     correction) for p in PROTOCOLS}
    for i, r in enumerate(rows):
        finish_row(r, opts, {p: adjusted[p][i] for p in PROTOCOLS})


def finish_row(r: dict[str, Any], opts: CompareOptions,
               p_adjusted: dict[str, float | None]) -> None:
    """Settle one row's verdict in place, given each protocol's adjusted p-value
    (:func:`adjusted_p_values`)."""
    correction = opts.correction if opts.confidence is not None else "none"
    for p in PROTOCOLS:
        proto = r[f"{p}_protocol"]
        proto["p_adjusted"] = p_adjusted[p]
        level = r["protocol_confidence"][p]
        if level is None:  # auto: not significant even at 50%
            proto["decision"] = INCONCLUSIVE if proto["status"] != "ok" else NO_DIFFERENCE
        else:
            proto["decision"] = decide(proto, level, proto["p_adjusted"])
        proto["correction"] = correction
        r[f"{p}_significant"] = proto["decision"] == FASTER
    proto = r[f"{opts.verdict_by}_protocol"]
    r["verdict_by"] = opts.verdict_by
    r["test"] = proto["test"] or "—"
    r["p_value"] = proto["p_two_sided"]
    r["p_adjusted"] = proto["p_adjusted"]
    verdict = proto["decision"]
    band = band_decision(r.get("speedup_ci"), opts.threshold)
    r["band"] = band
    if verdict in (FASTER, SLOWER) and opts.threshold > 0 and band not in (
            "outside-faster", "outside-slower"):
        r["warnings"].append(f"significantly {verdict}, but the interval of the ratio does "
                             f"not clear the ±{opts.threshold:.4g} threshold"
                             .replace(f"{opts.threshold:.4g}", f"{opts.threshold:.2%}"))
        verdict = NO_DIFFERENCE
    if opts.equivalence and band == "inside" and verdict not in (FASTER, SLOWER):
        verdict = f"unchanged within ±{opts.threshold:.2%}"
    if r["confidence_mode"] == "auto":
        r["confidence_note"] = (
            f"highest level in 50%..99% at which the {opts.verdict_by} test finds a "
            f"difference: {r['confidence']:.0%}" if r["confidence"] is not None
            else f"no difference found by the {opts.verdict_by} test even at 50%")
    if proto["status"] != "ok":
        r["warnings"].append(proto["reason"])
    if r.get("run_noise") and proto["status"] == "ok" and proto["decision"] not in (FASTER,
                                                                                    SLOWER):
        r["warnings"].append(_undecided_warning(r, proto,
                                                r["protocol_confidence"][opts.verdict_by]))
    r["verdict"] = verdict


def _undecided_warning(row: dict[str, Any], proto: dict[str, Any],
                       level: float | None) -> str:
    """Why a comparison across time did not decide, in words that match its numbers: the
    interval holds 1, or it excludes 1 on its own but the multiple-testing correction (or
    the test) does not call it (a report once said "[0.473, 0.943] holds no change")."""
    ci = row.get("speedup_ci") or {}
    low, high = ci.get("low", math.nan), ci.get("high", math.nan)
    interval = f"the interval of BASE/NEW [{low:.3f}, {high:.3f}]"
    p, p_adjusted = proto.get("p_two_sided"), proto.get("p_adjusted")
    if not (low > 1 or high < 1):
        why = (f"{interval} holds 1 (no change), given the variation within each run and "
               f"between runs ({row['run_noise']['text']}){_unseen(proto, level)}")
    elif (level is not None and p is not None and p_adjusted is not None
          and p <= 1 - level < p_adjusted):
        why = (f"{interval} excludes 1 on its own (p = {p:.3g}), but not after the "
               f"{proto.get('correction')} correction for the benchmarks compared (adjusted "
               f"p = {p_adjusted:.3g})")
    else:
        why = (f"{interval} excludes 1, but the test ({proto.get('test') or '—'}, "
               f"p = {p if p is None else format(p, '.3g')}) does not call a difference")
    return f"the data cannot decide: {why}; measure both versions together to decide: " \
        "steadybench ab BASE NEW"


def _unseen(proto: dict[str, Any], level: float | None) -> str:
    """``; runs like these find a change of 9.8 % or more 4 times in 5``: the minimum
    detectable change of a comparison across time (:func:`steadybench.compare.between.
    detectable_change`), or nothing when the test's figures are not there."""
    from .between import DETECT_POWER, detectable_change

    test = (proto.get("assumptions") or {}).get("between_runs") or {}
    se, df = test.get("se"), test.get("df")
    if not isinstance(se, float) or not isinstance(df, float) or not math.isfinite(se):
        return ""
    change = detectable_change(se, df, level if level is not None else 0.95)
    return f"; runs like these find a change of {change:.1%} or more {DETECT_POWER:.0%} " \
        "of the time"


def nan_to_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def gate_status(verdicts: Iterable[str], fail_on: str) -> int:
    """The exit status of a CI gate: 1 when ``fail_on`` is "slower" and some verdict is
    slower, or "change" and some verdict is slower or faster; else 0 (``compare``, ``history
    compare`` and ``history regressions`` share it)."""
    seen = set(verdicts)
    if fail_on == "slower" and SLOWER in seen:
        return 1
    if fail_on == "change" and seen & {SLOWER, FASTER}:
        return 1
    return 0
