"""Comparing two samples with the Speedup-Test protocol (``003`` §2, Fig. 1), in both directions.

For each matched benchmark two protocols run on the test unit (runs, or per-process estimates
when both sides hold ≥ 2 independent processes):

* **mean protocol** — with < 30 values on a side, Shapiro–Wilk normality first (rejected →
  "inconclusive: needs ≥ 30 runs", or a bootstrap test with ``small_sample="bootstrap"``); then
  Student's t-test when an F-test keeps equal variances, Welch's otherwise;
* **median protocol** — with < 30 values on a side, a Kolmogorov–Smirnov check of the shift
  model on median-centred samples first (same rule); then Wilcoxon–Mann–Whitney.

**Both directions.** The reference tool asks one question ("is NEW faster?") at level 1 − C.
steadybench asks two ("faster?" and "slower?"), so to keep the chance of calling identical
programs different at most 1 − C it decides with the two-sided p-value 2·min(p_faster,
p_slower) < 1 − C, i.e. each one-sided test at (1 − C)/2. The one-sided p-values and the
reference tool's one-sided bound are reported as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigurationError, SteadybenchError
from ..stats.bootstrap import bca_ratio_ci, bootstrap_test
from ..stats.speedup import (
    SMALL_SAMPLE,
    is_constant,
    mean_test,
    normality_check,
    rank_test,
    shift_check,
    speedup,
    tost,
    variance_test,
)
from .choices import SMALL_SAMPLE_MODES
from .readers import Sample

FASTER = "faster"
SLOWER = "slower"
NO_DIFFERENCE = "no significant difference"
INCONCLUSIVE = "inconclusive: needs ≥ 30 runs"

#: levels tried by ``--confidence auto``, highest first (the reference tool's 50%..99% range)
AUTO_LEVELS = tuple(round(0.99 - 0.01 * i, 2) for i in range(50))

PROTOCOLS = ("median", "mean")


@dataclass
class CompareOptions:
    """How a comparison is made; see ``docs/comparison.md``."""

    #: declared confidence level in (0, 1); None means ``auto``
    confidence: float | None = 0.95
    small_sample: str = "inconclusive"
    #: ±fraction for a two-one-sided equivalence test (e.g. 0.02), or None
    equivalence: float | None = None
    #: which protocol gives the verdict
    verdict_by: str = "median"
    show_min: bool = False
    correction: str = "holm"
    resamples: int = 2000
    seed: int = 0
    #: compute the BCa interval of the speedup (off in simulations, for speed)
    speedup_ci: bool = True

    def check(self) -> None:
        if self.confidence is not None and not 0 < self.confidence < 1:
            raise ConfigurationError(
                f"confidence must be between 0 and 1 (exclusive), got {self.confidence}")
        if self.small_sample not in SMALL_SAMPLE_MODES:
            raise ConfigurationError(f"small-sample mode must be one of {SMALL_SAMPLE_MODES}")
        if self.verdict_by not in PROTOCOLS:
            raise ConfigurationError(f"verdict protocol must be one of {PROTOCOLS}")
        if self.equivalence is not None:
            if not 0 < self.equivalence < 1:
                raise ConfigurationError(
                    f"equivalence margin must be between 0% and 100%, got {self.equivalence}")
            if self.confidence is None:
                raise ConfigurationError("--equivalence needs a fixed --confidence, not auto")
        if self.resamples < 100:
            raise ConfigurationError(f"bootstrap resamples must be at least 100, "
                                     f"got {self.resamples}")


def describe_unit(values: np.ndarray) -> dict[str, float | None]:
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "median": float(np.median(values)),
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
    if a.size < SMALL_SAMPLE or b.size < SMALL_SAMPLE:
        na, nb = normality_check(a, confidence), normality_check(b, confidence)
        out["assumptions"]["normality"] = {"base": na, "new": nb}
        bad = [(side, chk) for side, chk in (("BASE", na), ("NEW", nb))
               if chk["rejected"] or chk["rejected"] is None]
        if bad:
            why = "; ".join(
                f"{side}: {'normality rejected (Shapiro–Wilk p = ' + format(chk['pvalue'], '.3g') + ')' if chk['rejected'] else chk['note']}"  # noqa: E501
                for side, chk in bad)
            return _small_sample_fallback("mean", why, a, b, opts, cache, out)
    var = variance_test(a, b, confidence)
    out["assumptions"]["variance"] = var
    mt = mean_test(a, b, equal_var=not var["rejected"])
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
    """A small sample whose assumption was rejected (``003`` Fig. 1): a bootstrap test of
    ``stat`` with ``--small-sample bootstrap``, else "inconclusive: needs ≥ 30 runs"."""
    if opts.small_sample == "bootstrap":
        key = f"boot-{stat}"
        if key not in cache:
            cache[key] = bootstrap_test(a, b, stat, max(opts.resamples, 2000), opts.seed)
        boot = cache[key]
        out.update(test=f"bootstrap ({stat})", statistic=boot["statistic"], df=None,
                   p_faster=boot["p_faster"], p_slower=boot["p_slower"],
                   reason=f"{why}; bootstrap test used")
        return out
    out.update(test=None, status="inconclusive", statistic=None, df=None,
               p_faster=None, p_slower=None, reason=f"{why}: needs ≥ 30 runs")
    return out


def median_protocol(a: np.ndarray, b: np.ndarray, confidence: float,
                    opts: CompareOptions, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """The median branch: shift check, then Wilcoxon–Mann–Whitney."""
    cache = {} if cache is None else cache
    if is_constant(a) and is_constant(b):
        return _exact(a, b)
    out: dict[str, Any] = {"status": "ok", "assumptions": {}, "reason": ""}
    shift = shift_check(a, b, confidence)
    out["assumptions"]["shift"] = shift
    if shift["rejected"]:
        if a.size < SMALL_SAMPLE or b.size < SMALL_SAMPLE:
            why = (f"shift assumption rejected (Kolmogorov–Smirnov on median-centred samples, "
                   f"p = {shift['pvalue']:.3g})")
            return _small_sample_fallback("median", why, a, b, opts, cache, out)
        out["reason"] = ("the two distributions differ in shape (Kolmogorov–Smirnov on "
                         "median-centred samples): the rank test compares P(BASE > NEW) with ½, "
                         "not the medians")
    if "rank" not in cache:
        cache["rank"] = rank_test(a, b)
    rt = cache["rank"]
    out.update(test="wilcoxon-mann-whitney", statistic=rt.statistic, df=None,
               p_faster=rt.p_faster, p_slower=rt.p_slower)
    return out


def two_sided(proto: dict[str, Any]) -> float | None:
    if proto.get("p_faster") is None:
        return None
    return min(1.0, 2.0 * min(proto["p_faster"], proto["p_slower"]))


def decide(proto: dict[str, Any], confidence: float, p_adjusted: float | None = None) -> str:
    """faster / slower / no significant difference / inconclusive for one protocol."""
    if proto["status"] != "ok":
        return INCONCLUSIVE
    p = two_sided(proto) if p_adjusted is None else p_adjusted
    if p is None or not p < 1.0 - confidence:
        return NO_DIFFERENCE
    return FASTER if proto["p_faster"] <= proto["p_slower"] else SLOWER


def choose_unit(base: Sample, new: Sample) -> tuple[np.ndarray, np.ndarray, str, list[str]]:
    """Per-process estimates when both sides have ≥ 2, else the runs (with a warning when one
    side has processes): runs of one process are not independent (``003`` §2, item 3)."""
    warnings: list[str] = []
    if len(base.processes) >= 2 and len(new.processes) >= 2:
        return (np.asarray(base.processes, dtype=float), np.asarray(new.processes, dtype=float),
                "processes", warnings)
    if len(base.processes) >= 2 or len(new.processes) >= 2:
        warnings.append("per-process estimates on one side only: runs used as the test unit "
                        "(runs of one process may not be independent)")
    return base.values, new.values, "runs", warnings


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
    """Run both protocols on one matched pair; the verdict is settled later by
    :func:`finish_verdicts` (after the correction for multiple benchmarks)."""
    a, b, unit_used, warnings = choose_unit(base, new)
    for side, arr, sample in (("BASE", a, base), ("NEW", b, new)):
        if arr.size < 2:
            raise SteadybenchError(f"{sample.source or side}: {sample.label}: needs at least 2 "
                                   f"samples to compare, has {arr.size}")
    if base.unit != new.unit:
        warnings.append(f"units differ: BASE in {base.unit!r}, NEW in {new.unit!r}")
    cache: dict[str, Any] = {}
    row: dict[str, Any] = {
        "name": new.label if new.key == base.key else f"{base.label} → {new.label}",
        "benchmark": new.name, "implementation": new.implementation or new.name,
        "params": dict(new.params), "unit": new.unit, "test_unit": unit_used,
        "base_source": base.source, "new_source": new.source,
        "base": describe_unit(a), "new": describe_unit(b), "warnings": warnings,
        # each side's headline as its results file states it (steadybench results only)
        "base_estimate": base.estimate.to_dict() if base.estimate is not None else None,
        "new_estimate": new.estimate.to_dict() if new.estimate is not None else None,
    }
    if opts.confidence is None:
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
    row["mean_protocol"] = mean_protocol(a, b, level_for["mean"], opts, cache)
    row["median_protocol"] = median_protocol(a, b, level_for["median"], opts, cache)
    for p in PROTOCOLS:
        proto = row[f"{p}_protocol"]
        proto["p_two_sided"] = two_sided(proto)
        if proto.get("reason") and proto["status"] == "ok" and p == "median" \
                and proto["assumptions"].get("shift", {}).get("rejected"):
            warnings.append(proto["reason"])
    row["speedup"] = speedup(row["base"]["median"], row["new"]["median"])
    row["speedup_mean"] = speedup(row["base"]["mean"], row["new"]["mean"])
    if opts.show_min:
        row["speedup_min"] = speedup(row["base"]["min"], row["new"]["min"])
        row["speedup_min_note"] = ("min(BASE)/min(NEW): not statistically meaningful "
                                   "(003 §1.3); shown on request")
    ci_level = level_for[opts.verdict_by]
    row["speedup_ci"] = (bca_ratio_ci(a, b, ci_level, "median", opts.resamples, opts.seed)
                         if opts.speedup_ci else None)
    if opts.equivalence is not None and opts.confidence is not None:
        centre = row["base"][opts.verdict_by]
        eq = tost(a, b, opts.equivalence * centre, kind=opts.verdict_by,
                  equal_var=not row["mean_protocol"]["assumptions"].get("variance", {})
                  .get("rejected", True))
        eq["margin_fraction"] = opts.equivalence
        eq["equivalent"] = bool(eq["pvalue"] < 1.0 - opts.confidence)
        row["equivalence"] = eq
    else:
        row["equivalence"] = None
    return row


def finish_verdicts(rows: list[dict[str, Any]], opts: CompareOptions) -> None:
    """Apply the multiple-testing correction and settle each row's verdict in place."""
    from ..stats.multiple import adjust

    correction = opts.correction if opts.confidence is not None else "none"
    for p in PROTOCOLS:
        tested = [r for r in rows if r[f"{p}_protocol"]["p_two_sided"] is not None]
        adjusted = adjust([r[f"{p}_protocol"]["p_two_sided"] for r in tested], correction)
        for r in rows:
            r[f"{p}_protocol"]["p_adjusted"] = None
        for r, padj in zip(tested, adjusted):
            r[f"{p}_protocol"]["p_adjusted"] = padj
        for r in rows:
            proto = r[f"{p}_protocol"]
            level = r["protocol_confidence"][p]
            if level is None:  # auto: not significant even at 50%
                proto["decision"] = INCONCLUSIVE if proto["status"] != "ok" else NO_DIFFERENCE
            else:
                proto["decision"] = decide(proto, level, proto["p_adjusted"])
            proto["correction"] = correction
            r[f"{p}_significant"] = proto["decision"] == FASTER
    for r in rows:
        proto = r[f"{opts.verdict_by}_protocol"]
        r["verdict_by"] = opts.verdict_by
        r["test"] = proto["test"] or "—"
        r["p_value"] = proto["p_two_sided"]
        r["p_adjusted"] = proto["p_adjusted"]
        verdict = proto["decision"]
        eq = r.get("equivalence")
        if eq and eq["equivalent"]:
            margin = eq["margin_fraction"]
            if verdict in (FASTER, SLOWER):
                r["warnings"].append(f"significantly {verdict}, but by less than ±{margin:.4g}%"
                                     .replace(f"{margin:.4g}%", f"{margin * 100:.4g}%"))
            verdict = f"unchanged within ±{margin * 100:.4g}%"
        if r["confidence_mode"] == "auto":
            r["confidence_note"] = (
                f"highest level in 50%..99% at which the {opts.verdict_by} test finds a "
                f"difference: {r['confidence']:.0%}" if r["confidence"] is not None
                else f"no difference found by the {opts.verdict_by} test even at 50%")
        if proto["status"] != "ok":
            r["warnings"].append(proto["reason"])
        r["verdict"] = verdict


def nan_to_none(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value
