"""Verdicts on counts: "B executes 3.1 % more instructions than A (exact: +512 per call)".

A count has no sampling noise: two invocations on the same machine, interpreter and valgrind
give the same number. What can move it without a change of code is the layout (the hash seed and
the environment size; K layouts show how much) and the line fit's departure from a straight line
(its interval). So a difference is called a change of code when it exceeds

    max(threshold, layout spread of A + layout spread of B + fit slack of A + of B)

all relative to A's count, where a side's layout spread is the range of its layouts' counts and
its fit slack the largest residual of its line divided by the calls between its first and last
points (how far the slope would move if that point lay on the line; zero on a straight line).
The fit's Student-t interval is not used: with three points it has one degree of freedom, and
its width describes a curve that is the same in every invocation, not noise.
The user's ``--threshold`` is the practical threshold, as for time. More counts than A beyond
it is the verdict ``slower`` (so the CI gates' ``--fail-on slower`` works on counts), fewer is
``faster``; the sentence says "executes more/fewer", never "slower", and once that counts are
not time (:data:`~.backend.NOT_TIME`).

Counts are comparable only under the same measure, valgrind, interpreter, layouts and cache
geometry: a different measure is refused, the others are warned about (:func:`check_identities`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import ConfigurationError
from .backend import COUNT_MEASURES, NOT_TIME, identity_differences

#: verdict words, shared with the time protocol so that the gates read both
MORE, FEWER, SAME = "slower", "faster", "no change beyond the threshold"


@dataclass(frozen=True)
class CountSide:
    """One side's count of one case."""

    value: float
    low: float
    high: float
    layouts: tuple[float, ...]
    per: str
    fit_slack: float = 0.0

    @property
    def layout_spread(self) -> float:
        return (max(self.layouts) - min(self.layouts)) if len(self.layouts) > 1 else 0.0



@dataclass(frozen=True)
class CountVerdict:
    """The comparison of one case's counts."""

    name: str
    unit: str
    base: float
    new: float
    change: float
    difference: float
    layout_part: float
    fit_part: float
    allowed: float
    verdict: str
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CountComparison:
    rows: tuple[CountVerdict, ...]
    warnings: tuple[str, ...] = ()
    note: str = NOT_TIME
    unmatched: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "counts", "benchmarks": [r.to_dict() for r in self.rows],
                "warnings": list(self.warnings), "unmatched": list(self.unmatched),
                "note": self.note}


def side_of(estimate: Any) -> CountSide:
    """A side from a case's :class:`~steadybench.model.estimate.Estimate` of a count."""
    layouts = estimate.fields.get("execution_values") or [estimate.value]
    low = estimate.ci_low if estimate.ci_low is not None else estimate.value
    high = estimate.ci_high if estimate.ci_high is not None else estimate.value
    return CountSide(float(estimate.value), float(low), float(high),
                     tuple(float(v) for v in layouts), str(estimate.fields.get("per", "call")),
                     float(estimate.fields.get("fit_slack") or 0.0))


def judge(name: str, unit: str, base: CountSide, new: CountSide,
          threshold: float = 0.0) -> CountVerdict:
    """The verdict on one case (module docstring)."""
    difference = new.value - base.value
    change = difference / base.value
    layout_part = (base.layout_spread + new.layout_spread) / base.value
    fit_part = (base.fit_slack + new.fit_slack) / base.value
    allowed = max(threshold, layout_part + fit_part)
    verdict = SAME if abs(change) <= allowed else (MORE if change > 0 else FEWER)
    more = "more" if difference > 0 else "fewer"
    exact = f"{difference:+,.0f}" if abs(difference) >= 10 else f"{difference:+,.2f}"
    if verdict == SAME:
        sentence = (f"{name}: B executes the same {unit} as A within {allowed:.2%} "
                    f"({change:+.3%}, exact: {exact} per {base.per})")
    else:
        sentence = (f"{name}: B executes {abs(change):.1%} {more} {unit} than A "
                    f"(exact: {exact} per {base.per})")
    sentence += (f"; layout spread {layout_part:.3%}, fit {fit_part:.3%}, threshold "
                 f"{threshold:.2%}")
    return CountVerdict(name, unit, base.value, new.value, change, difference, layout_part,
                        fit_part, allowed, verdict, sentence)


def check_identities(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None,
                     name: str) -> list[str]:
    """Warnings for counts made under different conditions; a ConfigurationError for a
    different measure (instructions against cycles)."""
    if base and new and base.get("measure") != new.get("measure"):
        raise ConfigurationError(f"{name}: A counts {base.get('measure')} and B "
                                 f"{new.get('measure')}; compare the same measure")
    return [f"{name}: counts made under different conditions ({d}): the difference may not "
            "be the code's" for d in identity_differences(base, new)]


def compare_count_samples(base_samples: Sequence[Any], new_samples: Sequence[Any],
                          base_results: Any, new_results: Any,
                          threshold: float = 0.0) -> CountComparison:
    """Compare the cases two results files have in common (``compare.readers.Sample`` lists
    and their Results, whose cases carry the counts' identity)."""
    def identities(results: Any) -> dict[tuple[str, str, str], Any]:
        if results is None:
            return {}
        return {c.key: (c.extra.get("counts") or {}).get("identity") for c in results.cases}

    ids_a, ids_b = identities(base_results), identities(new_results)
    by_key = {s.key: s for s in base_samples}
    rows, warnings, unmatched = [], [], []
    for sample in new_samples:
        other = by_key.pop(sample.key, None)
        if other is None:
            unmatched.append(f"{sample.label}: only in B")
            continue
        units = {other.unit, sample.unit}
        if not units <= set(COUNT_MEASURES) or len(units) != 1:
            raise ConfigurationError(f"{sample.label}: A is in {other.unit} and B in "
                                     f"{sample.unit}; counts compare only with the same count")
        if other.estimate is None or not other.estimate.ok or sample.estimate is None \
                or not sample.estimate.ok:
            unmatched.append(f"{sample.label}: no count on one side")
            continue
        warnings += check_identities(ids_a.get(other.key), ids_b.get(sample.key), sample.label)
        rows.append(judge(sample.label, sample.unit, side_of(other.estimate),
                          side_of(sample.estimate), threshold))
    unmatched += [f"{s.label}: only in A" for s in by_key.values()]
    return CountComparison(tuple(rows), tuple(warnings), NOT_TIME, tuple(unmatched))


def is_count_comparison(*sample_lists: Sequence[Any]) -> bool:
    """True when any sample is a count (then both sides must be)."""
    return any(s.unit in COUNT_MEASURES for samples in sample_lists for s in samples)


def render(comparison: CountComparison) -> list[str]:
    """The lines the console prints: one sentence per case, the warnings, the note once."""
    lines = [row.sentence for row in comparison.rows]
    lines += [f"warning: {w}" for w in comparison.warnings]
    lines += [f"note: {u}" for u in comparison.unmatched]
    lines.append(f"note: {comparison.note}")
    return lines
