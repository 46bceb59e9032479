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


# ---------------------------------------------------------------- issue 15, item 6
def feed(cond, values, window=64):
    """Check ``cond`` after every value, as the run loop does; return the first reason."""
    st = RunState(window=deque(maxlen=max(1, cond.window_size())))
    for v in values:
        st.stream.push(v)
        st.window.append(v)
        st.runs = st.attempted = st.runs + 1
        reason = cond.check(st)
        if reason:
            return st.runs, reason
    return None


def test_max_failures_is_honestly_named_and_on_error_is_its_old_name():
    from steadybench.registry import stop_conditions
    from steadybench.runner import MaxFailures

    assert OnError is MaxFailures
    assert "ErrorStopCondition" not in (MaxFailures.__doc__ or "").split("not*")[0]
    assert type(stop_conditions.create("on_error")) is MaxFailures
    assert type(stop_conditions.create("max_failures")) is MaxFailures


def test_cov_after_warmup_discards_the_first_values():
    import numpy as np

    from steadybench.runner import CovAfterWarmup

    warm = [5.0, 3.0, 2.0]
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    values = warm + steady
    # reference: CoV with the sample standard deviation after dropping the warm-up values
    ref = np.std(steady, ddof=1) / np.mean(steady)
    stopped = feed(CovAfterWarmup(ref * 1.001, discard=3, min_runs=6), values)
    assert stopped is not None and stopped[0] == len(values)
    assert feed(CovAfterWarmup(ref * 0.999, discard=3, min_runs=6), values) is None
    # without discarding, the warm-up values keep the CoV far above the threshold
    assert feed(CovAfterWarmup(ref * 1.001), values) is None
    # discard=0 reads the runner's statistics directly
    whole = np.std(values, ddof=1) / np.mean(values)
    assert feed(CovAfterWarmup(whole * 1.001, min_runs=9), values)[0] == len(values)


def test_ci_width_window_is_the_whole_interval_over_the_last_runs():
    import numpy as np

    from steadybench.runner import CiWidthWindow

    values = [50.0, 1.0] + [10.0, 10.2, 9.8, 10.1, 9.9]
    last = values[-5:]
    rel = 2 * sps.t.ppf(0.975, 4) * np.std(last, ddof=1) / np.sqrt(5) / np.mean(last)
    assert feed(CiWidthWindow(rel * 1.001, window=5), values)[0] == len(values)
    assert feed(CiWidthWindow(rel * 0.999, window=5), values) is None
    assert CiWidthWindow(0.5, window=5).window_size() == 5
    # pickled for a worker process with its quantile: checking needs no scipy there
    import pickle

    again = pickle.loads(pickle.dumps(CiWidthWindow(rel * 1.001, window=5)))
    assert again._t == pytest.approx(sps.t.ppf(0.975, 4))


def test_median_iqr_stable_matches_numpy_and_waits_for_a_drift_to_settle():
    import numpy as np

    from steadybench.runner import MedianIqrStable

    rng = np.random.default_rng(7)
    # a steady series settles; one that drifts upwards (Fig. 16b) never does
    steady = rng.normal(10, 0.05, 400).tolist()
    got = feed(MedianIqrStable(0.01, step=10, checks=5), steady)
    assert got is not None and got[0] % 10 == 0 and got[0] >= 50
    drifting = [10 + 0.05 * i for i in range(400)]
    assert feed(MedianIqrStable(0.01, step=10, checks=5), drifting) is None
    cond = MedianIqrStable(0.01, step=10, checks=5)
    feed(cond, steady[:100])
    n, med, iqr = cond.points[-1]
    assert med == pytest.approx(np.median(steady[:n]))
    assert iqr == pytest.approx(np.subtract(*np.percentile(steady[:n], [75, 25])))
    # R's default quantile (type 7) is numpy's default: the IQR of 1..10 is 4.5
    ten = MedianIqrStable(0.01, step=10, checks=2)
    feed(ten, [float(v) for v in range(1, 11)])
    assert ten.points == [(10, 5.5, 4.5)]
    # a long run is judged at checkpoints 1 % of its length apart, not at every 10th run
    long = MedianIqrStable(1e-9, step=10, checks=5)
    feed(long, rng.normal(10, 1, 30_000).tolist())
    assert len(long.points) < 500 and long.points[-1][0] - long.points[-2][0] >= 290


def test_hard_time_limit_is_never_shorter_than_asked():
    from steadybench.runner import Runner
    from steadybench.runner.stop import describe_limits, effective_time_limit

    two_hours = Runs(10) | ElapsedTime(7200)
    assert effective_time_limit(two_hours, 600) == 7200
    assert effective_time_limit(Runs(10), 600) == 600
    assert effective_time_limit(~ElapsedTime(30), 600) == 600
    assert Runner(two_hours).time_limit == 7200
    text = describe_limits(two_hours, 600, 1000)
    assert "7200 s" in text and "raised from 600 s" in text


def test_a_two_hour_run_is_not_cut_at_the_default_limit():
    from steadybench.model.implementation import CallableImplementation
    from steadybench.model.parameters import Parameters
    from steadybench.runner import Runner
    from steadybench.testing import SimulatedClock

    clock = SimulatedClock()
    impl = CallableImplementation(clock.workload(1e9), "one second")
    runner = Runner(ElapsedTime(7200), clock=clock, sleep=clock.sleep)
    case = runner.execute(impl, Parameters())
    assert case.stop_reason == "7200 s elapsed"
    assert case.extra["hard_limits"]["time_s"] == 7200
    assert not any("hard time limit" in w for w in case.warnings)


def test_stop_condition_from_the_command_line():
    from steadybench.runner import CovAfterWarmup, MedianIqrStable
    from steadybench.runner.stop import parse_stop_condition

    cond = parse_stop_condition("cov_after_warmup:threshold=0.02,discard=10")
    assert isinstance(cond, CovAfterWarmup) and cond.threshold == 0.02 and cond.discard == 10
    assert isinstance(parse_stop_condition("median_iqr_stable"), MedianIqrStable)
    for bad, words in (("cov_after_warmup:threshold=abc", "must be a number"),
                       ("cov_after_warmup:threshold", "NAME:OPTION=VALUE"),
                       ("median_iqr_stable:step=2.5", "must be an integer"),
                       ("nope", "unknown stop condition")):
        with pytest.raises(ConfigurationError, match=words):
            parse_stop_condition(bad)
