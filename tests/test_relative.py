"""The plain-words relative summary (output/relative.py)."""

import math

from steadybench.model.estimate import Estimate
from steadybench.output.relative import Variant, relative_summary, summary_lines


def est(value, low=None, high=None, unit="s"):
    return Estimate(value=value, ci_low=low, ci_high=high, unit=unit)


def test_fastest_first_and_ratio_from_estimates():
    lines = summary_lines([Variant("concat", est(3.0, 2.9, 3.1)),
                           Variant("join", est(2.0, 1.9, 2.1))])
    assert lines == ["join is 1.50× faster than concat [1.38, 1.63]"]


def test_interval_from_executions_is_hodges_lehmann_of_ratios():
    slow = [2.0, 2.1, 2.2, 2.05, 2.15]
    fast = [1.0, 1.05, 1.1, 1.02, 1.08]
    (rel,) = relative_summary([Variant("a", est(2.1), slow), Variant("b", est(1.05), fast)])
    assert rel.fastest == "b" and rel.basis == "executions"
    ratios = sorted(s / f for s in slow for f in fast)
    assert rel.low <= ratios[len(ratios) // 2] <= rel.high
    # the printed ratio is the estimate the interval belongs to: the median of the 25
    # pairwise ratios (the Hodges-Lehmann estimate of the log shift, exponentiated)
    assert math.isclose(rel.ratio, ratios[len(ratios) // 2])


def test_ratio_is_always_inside_its_interval_and_the_executions_decide_the_side():
    """Under load a run printed "no clear difference between stdlib and sort_by_random_key:
    1.02× [0.67, 0.95]": the ratio of the two medians of execution medians said one side,
    the executions' interval (entirely below 1) the other."""
    slow_by_median = [1.0, 1.01, 1.02, 2.0, 2.01, 2.02, 2.03]    # median 2.0
    fast_by_median = [1.9, 1.91, 1.92, 1.93, 10.0, 10.1, 10.2]   # median 1.93
    a, b = Variant("a", est(2.0), slow_by_median), Variant("b", est(1.93), fast_by_median)
    (rel,) = relative_summary([a, b])
    ratios = sorted(x / y for x in fast_by_median for y in slow_by_median)
    hodges_lehmann = ratios[len(ratios) // 2]
    assert hodges_lehmann > 1  # the executions say a is faster, the case estimates say b
    assert rel.fastest == "a" and math.isclose(rel.ratio, hodges_lehmann)
    assert rel.low <= rel.ratio <= rel.high
    for variants in ([a, b], [b, a]):
        (r,) = relative_summary(variants)
        assert (r.fastest, r.other) == ("a", "b") and r.low <= r.ratio <= r.high


def test_unusable_or_mixed_units_give_no_summary():
    assert relative_summary([Variant("a", est(1.0)), Variant("b", Estimate.failed("x"))]) == []
    assert relative_summary([Variant("a", est(1.0)), Variant("b", est(2.0, unit="J"))]) == []
    (rel,) = relative_summary([Variant("a", est(1.0)), Variant("b", est(2.0))])
    assert rel.low is None and rel.text().startswith("a and b are 2.00× apart; no interval")


def test_interval_containing_one_is_no_clear_difference():
    (rel,) = relative_summary([Variant("a", est(1.05, 0.9, 1.2)),
                               Variant("b", est(1.0, 0.95, 1.05))])
    assert rel.clear is False
    assert rel.text() == "no clear difference between b and a: 1.05× [0.86, 1.26]"
