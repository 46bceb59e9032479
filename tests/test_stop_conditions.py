"""Stop conditions and their combinators."""

from collections import deque

import pytest
from scipy import stats as sps

from steadybench.errors import ConfigurationError
from steadybench.runner import (
    And,
    CiHalfWidth,
    CovWindow,
    ElapsedTime,
    Not,
    OnError,
    Or,
    Runs,
    RunState,
    Xor,
    build_stop_condition,
)
from steadybench.stats import StreamingStats


def state_with(values, elapsed_s=0.0, window=20):
    st = RunState(window=deque(maxlen=window))
    for v in values:
        st.stream.push(v)
        st.window.append(v)
    st.runs = st.attempted = len(values)
    st.elapsed_ns = int(elapsed_s * 1e9)
    return st


def test_runs_and_elapsed():
    assert Runs(3).check(state_with([1, 1])) is None
    assert Runs(3).check(state_with([1, 1, 1])) == "3 runs done"
    assert ElapsedTime(2).check(state_with([], elapsed_s=1.9)) is None
    assert ElapsedTime(2).check(state_with([], elapsed_s=2.0))
    with pytest.raises(ConfigurationError):
        Runs(0)
    with pytest.raises(ConfigurationError):
        ElapsedTime(-1)


def test_cov_window_uses_only_the_last_w_runs():
    noisy_start = [100.0, 1.0, 50.0] + [10.0, 10.1, 9.9, 10.0]
    cond = CovWindow(0.02, window=4)
    assert cond.check(state_with(noisy_start[:6], window=4)) is None  # 1.0, 50, 10, 10.1 in window
    assert "CoV" in cond.check(state_with(noisy_start, window=4))
    assert cond.window_size() == 4
    assert CovWindow(0.02, 10).check(state_with([1.0] * 5)) is None  # window not full yet


def test_ci_half_width_matches_t_formula():
    values = [10.0, 10.2, 9.8, 10.1, 9.9, 10.0]
    s = StreamingStats().extend(values)
    half = sps.t.ppf(0.975, 5) * s.stdev / len(values) ** 0.5
    rel = half / s.mean
    assert CiHalfWidth(rel * 1.01).check(state_with(values))
    assert CiHalfWidth(rel * 0.99).check(state_with(values)) is None
    with pytest.raises(ConfigurationError):
        CiHalfWidth(0.01, confidence=1.0)


def test_combinators_and_operators():
    st = state_with([1.0] * 5, elapsed_s=10)
    yes, no = Runs(5), Runs(6)
    assert (yes & ElapsedTime(5)).check(st) and not (yes & no).check(st)
    assert (no | yes).check(st) == "5 runs done" and (no | no).check(st) is None
    assert (yes ^ no).check(st) and (yes ^ yes).check(st) is None
    assert (~no).check(st) and (~yes).check(st) is None
    assert isinstance(yes & no, And) and isinstance(yes | no, Or)
    assert isinstance(yes ^ no, Xor) and isinstance(~yes, Not)
    assert (CovWindow(0.1, 7) | Runs(3)).window_size() == 7


def test_on_error():
    st = state_with([1.0])
    st.failed, st.last_error = 2, "ValueError: x"
    assert "ValueError" in OnError(2).check(st)
    assert OnError(3).check(st) is None


def test_build_stop_condition_from_options():
    assert build_stop_condition(runs=7).check(state_with([1.0] * 7))
    assert build_stop_condition(runs=7).check(state_with([1.0] * 6)) is None
    timed = build_stop_condition(runs=100, max_time=1.0)
    assert timed.check(state_with([1.0], elapsed_s=1.0))
    target = build_stop_condition(target_cov=0.05, window=3, runs=4)
    assert target.check(state_with([1.0, 1.0, 1.0])) is None  # fewer than 4 runs
    assert target.check(state_with([1.0] * 4))
    default = build_stop_condition()
    assert default.check(state_with([1.0] * 9)) is None
    assert default.check(state_with([1.0] * 10))  # 10 runs and a zero-width CI
