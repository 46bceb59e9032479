"""Relative answers in plain words: "join is 1.52× faster than concat [1.49, 1.55]".

Every place that shows more than one variant (``run`` groups, ``exec`` with several commands,
parameter scans, ``compare``, ``ab`` and the report) ends with the same summary, built here:
the fastest variant first, then one line per other variant saying how many times faster the
fastest is, with an interval.

The interval of the ratio comes from the best evidence available, in this order:

1. per-execution values on both sides (≥ 2 each): the Hodges–Lehmann interval of the ratio of
   times (:func:`steadybench.stats.rank.ratio_interval`), which treats independent executions as
   the observations (``DESIGN.md``, "The measurement hierarchy"; source ``003`` §2);
2. otherwise both estimates' own intervals, combined conservatively: [low_other / high_fastest,
   high_other / low_fastest], which covers the ratio whenever both intervals cover their values
   (a Bonferroni-style bound: its level is at least 1 − α_1 − α_2);
3. otherwise no interval.

A ratio below 1 is never printed; speedups below 1 are said as "N× slower"
(:func:`steadybench.output.format.factor_text`). This module is light: numpy and scipy are
imported only when per-execution values are given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..model.estimate import Estimate


@dataclass(frozen=True)
class Variant:
    """One named variant to compare: its estimate and, when known, its per-execution values."""

    name: str
    estimate: Estimate
    executions: Sequence[float] | None = None


@dataclass(frozen=True)
class Relation:
    """How much faster ``fastest`` is than ``other``: ``ratio`` = time(other) / time(fastest),
    so always ≥ 1 (up to rounding), with its interval when there is one."""

    fastest: str
    other: str
    ratio: float
    low: float | None
    high: float | None
    basis: str
    #: the estimates' unit: a count (instructions, cycles) is said as "executes fewer", never
    #: "faster" (counts are not time)
    unit: str = "s"

    @property
    def clear(self) -> bool | None:
        """True when the interval lies above 1 (the fastest is faster at its confidence),
        False when it contains 1, None when there is no interval."""
        if self.low is None or self.high is None:
            return None
        return self.low > 1

    def text(self) -> str:
        """The plain-words line, e.g. "join is 1.520× faster than concat [1.490, 1.550]"; when
        the interval contains 1, "no clear difference between concat and join: 1.052×
        [0.990, 1.110]"."""
        from .format import COUNT_UNITS, factor_text, ratio_text

        if self.unit in COUNT_UNITS:  # exact counts: no sampling interval is needed
            interval = ("" if self.low is None or self.high is None
                        else f" [{self.low:.3f}, {self.high:.3f}]")
            return (f"{self.fastest} executes {self.ratio:.3f}× fewer {self.unit} than "
                    f"{self.other}{interval}")
        if self.clear is False:
            return (f"no clear difference between {self.fastest} and {self.other}: "
                    f"{ratio_text(self.ratio, self.low, self.high)}")
        if self.clear is None:  # no interval: no winner is named (issue 28, item 3)
            return (f"{self.fastest} and {self.other} are {ratio_text(self.ratio)} apart; no "
                    "interval to tell whether that is a difference (fewer than two executions "
                    "each, and no interval of their own)")
        factor = factor_text(self.ratio, self.low, self.high)
        words, _, interval = factor.partition(" [")
        return f"{self.fastest} is {words} than {self.other} [{interval}"


def _usable(variant: Variant) -> bool:
    est = variant.estimate
    return est is not None and est.ok and est.value is not None and est.value > 0


def _executions(variant: Variant) -> list[float] | None:
    values = [float(v) for v in (variant.executions or ()) if v is not None]
    values = [v for v in values if math.isfinite(v) and v > 0]
    return values if len(values) >= 2 else None


def _interval(other: Variant, fastest: Variant, confidence: float
              ) -> tuple[float | None, float | None, float | None, str]:
    """(low, high, point, basis) of time(other) / time(fastest); ``point`` is the estimate the
    interval belongs to when it is not the ratio of the two estimates (the Hodges–Lehmann
    ratio of the executions), else None."""
    xo, xf = _executions(other), _executions(fastest)
    if xo is not None and xf is not None:
        from ..stats.rank import ratio_interval

        ri = ratio_interval(xo, xf, confidence=confidence)
        return ri.low, ri.high, ri.estimate, "executions"
    eo, ef = other.estimate, fastest.estimate
    if (eo.has_ci and ef.has_ci and eo.ci_low is not None and ef.ci_high is not None
            and eo.ci_high is not None and ef.ci_low is not None
            and eo.ci_low > 0 and ef.ci_low > 0):
        return eo.ci_low / ef.ci_high, eo.ci_high / ef.ci_low, None, "estimate intervals"
    return None, None, None, "none"


def _relation(a: Variant, b: Variant, confidence: float) -> Relation:
    """How much faster the faster of ``a`` and ``b`` is than the other.

    With per-execution values the printed ratio is the Hodges–Lehmann ratio, the estimate
    whose interval is printed beside it, and it decides which side is called faster. The
    ratio of the two case estimates (medians of execution medians) can lie outside that
    interval, even on the other side of 1: under load a run showed "no clear difference:
    1.02× [0.67, 0.95]"."""
    fast, slow = (a, b) if float(a.estimate.value) <= float(b.estimate.value) else (b, a)  # type: ignore[arg-type]
    ratio = float(slow.estimate.value) / float(fast.estimate.value)  # type: ignore[arg-type]
    low, high, point, basis = _interval(slow, fast, confidence)
    if point is not None:
        ratio = point
    if ratio < 1 and low is not None and high is not None:  # the executions say the other way
        fast, slow = slow, fast
        ratio, low, high = 1 / ratio, 1 / high, 1 / low
    return Relation(fastest=fast.name, other=slow.name, ratio=ratio, low=low, high=high,
                    basis=basis, unit=fast.estimate.unit)


def relative_summary(variants: Sequence[Variant], confidence: float = 0.95,
                     reference: str | None = None, by_time: bool = True) -> list[Relation]:
    """The relations of the fastest variant to every other one, fastest first.

    With ``reference`` (hyperfine's ``--reference``), every other variant is compared with
    the variant of that name instead, each line saying which of the two is faster. With
    ``by_time`` False (hyperfine's ``--sort command``) the lines follow the order of
    ``variants`` instead of their times.

    Variants without a usable estimate (no value, or not positive) are left out; with fewer
    than two usable variants the summary is empty. Variants in different units are not
    compared (the summary is empty): a ratio of seconds to joules means nothing.
    """
    usable = [v for v in variants if _usable(v)]
    if len(usable) < 2 or len({v.estimate.unit for v in usable}) > 1:
        return []
    ordered = (sorted(usable, key=lambda v: float(v.estimate.value))  # type: ignore[arg-type]
               if by_time else usable)
    base = next((v for v in usable if v.name == reference), None) if reference else None
    if base is None:
        base = min(usable, key=lambda v: float(v.estimate.value))  # type: ignore[arg-type]
    return [_relation(base, other, confidence) for other in ordered if other is not base]


def summary_lines(variants: Sequence[Variant], confidence: float = 0.95,
                  reference: str | None = None, by_time: bool = True) -> list[str]:
    """:func:`relative_summary` as text lines, one per other variant."""
    return [r.text() for r in relative_summary(variants, confidence, reference, by_time)]
