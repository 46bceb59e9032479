"""Issue 27 item 5: ``sb.compare_interleaved(a, b)`` measures two pieces of code in interleaved
rounds, so a machine that drifts between two ``measure()`` calls does not show as a difference.
(Not ``sb.compare``: that name is the ``steadybench.compare`` package.)"""

from __future__ import annotations

import pytest

import steadybench as sb
from steadybench.errors import ConfigurationError
from steadybench.testing import SimulatedClock


def _drifting(clock: SimulatedClock, base_ns: float, per_call: float):
    """Code whose cost grows with every call of any code on this clock (a machine heating
    up): each call costs ``base_ns`` × (1 + ``per_call`` × calls so far)."""
    calls = {"n": 0}

    def make(scale: float):
        def work() -> None:
            calls["n"] += 1
            clock.advance(scale * base_ns * (1 + per_call * calls["n"]))
        return work

    return make


def test_separate_measures_see_the_drift_and_compare_does_not():
    clock = SimulatedClock(seed=3)
    make = _drifting(clock, 10_000, 1e-3)
    f, g = make(1.0), make(1.0)  # the same code
    separate = sb.measure(g, "linefit", clock, runs=40).value / \
        sb.measure(f, "linefit", clock, runs=40).value
    assert separate < 0.9 or separate > 1.1  # the drift between the two calls shows
    result = sb.compare_interleaved(f, g, rounds=20, runs=10, seed=1, clock=clock)
    assert result.ci_low <= 1.0 <= result.ci_high and not result.significant
    assert abs(result.ratio - 1) < abs(separate - 1) / 3
    assert result.rounds == 20 and set(result.order) <= {"ab", "ba"} and len(set(result.order)) == 2


def test_a_real_difference_is_found():
    clock = SimulatedClock(seed=5, jitter_ns=50)
    result = sb.compare_interleaved(clock.workload(10_000), clock.workload(20_000), rounds=10,
                                    runs=10, seed=2, clock=clock)
    assert result.significant and result.ci_low <= 2.0 <= result.ci_high
    assert "b takes 2.0" in result.describe()


def test_the_name_is_not_shadowed_by_a_subpackage():
    import steadybench.compare  # noqa: F401 - the CLI's compare package, imported first

    assert callable(sb.compare_interleaved)


def test_rounds_are_checked():
    with pytest.raises(ConfigurationError, match="rounds"):
        sb.compare_interleaved(lambda: None, lambda: None, rounds=1)
