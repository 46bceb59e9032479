"""Run-to-run noise from history, the test it allows, and change points: checked against
independently computed references (numpy's pooled variance, scipy's Student t-test, R-style
Wilcoxon via scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from steadybench.history.noise import MIN_DF, Noise, known_noise_protocol, noise_from_points
from steadybench.history.regressions import find_changes
from steadybench.history.store import Point


def point(i: int, execs: list[float], commit: str | None = None, dirty: bool = False) -> Point:
    return Point(record_id=i, created=f"2024-01-{i + 1:02d}", commit=commit or f"{i:040x}",
                 branch="main", dirty=dirty, name=None, machine="m", label="b", unit="s",
                 value=float(np.mean(execs)), ci_low=None, ci_high=None, level="executions",
                 executions=tuple(execs))


def test_noise_is_the_pooled_spread_of_log_times() -> None:
    rng = np.random.default_rng(1)
    groups = [np.exp(rng.normal(math.log(m), 0.03, size=k)) for m, k in
              ((1.0, 5), (1.2, 4), (0.9, 6))]
    pts = [point(i, list(g)) for i, g in enumerate(groups)]
    noise = noise_from_points(pts)
    logs = [np.log(g) for g in groups]
    pooled = sum(((lg - lg.mean()) ** 2).sum() for lg in logs) / sum(len(lg) - 1 for lg in logs)
    assert noise is not None
    assert noise.df == 5 + 4 + 6 - 3
    assert noise.sigma == pytest.approx(math.sqrt(pooled), rel=1e-12)


def test_single_executions_count_only_when_one_clean_commit_was_measured_again() -> None:
    same = "c" * 40
    pts = [point(0, [1.00], same), point(1, [1.02], same), point(2, [0.99], same),
           point(3, [1.5]), point(4, [1.01], same, dirty=True)]
    noise = noise_from_points(pts)
    assert noise is None  # 2 degrees of freedom: below MIN_DF
    more = pts + [point(5 + i, [1.0 + 0.01 * i], same) for i in range(3)]
    noise = noise_from_points(more)
    assert noise is not None and noise.df == 5 >= MIN_DF
    ref = np.log([1.00, 1.02, 0.99, 1.0, 1.01, 1.02])
    assert noise.sigma == pytest.approx(ref.std(ddof=1), rel=1e-12)


def test_known_noise_test_equals_students_pooled_t_when_the_noise_is_these_samples() -> None:
    rng = np.random.default_rng(7)
    a = np.exp(rng.normal(0.0, 0.05, 6))
    b = np.exp(rng.normal(-0.04, 0.05, 5))
    la, lb = np.log(a), np.log(b)
    pooled = (((la - la.mean()) ** 2).sum() + ((lb - lb.mean()) ** 2).sum()) / (6 + 5 - 2)
    noise = Noise("b", "m", math.sqrt(pooled), 9, 2, 2)
    proto = known_noise_protocol(a, b, noise, 0.95)
    ref = stats.ttest_ind(la, lb, equal_var=True)
    assert proto["statistic"] == pytest.approx(ref.statistic, rel=1e-10)
    assert proto["p_two_sided_test"] == pytest.approx(ref.pvalue, rel=1e-10)
    ci = ref.confidence_interval(0.95)
    assert proto["ratio_ci"]["low"] == pytest.approx(math.exp(ci.low), rel=1e-10)
    assert proto["ratio_ci"]["high"] == pytest.approx(math.exp(ci.high), rel=1e-10)


def test_a_step_of_twenty_percent_is_found_at_its_commit() -> None:
    rng = np.random.default_rng(3)
    pts = [point(i, list(np.exp(rng.normal(math.log(1.0 if i < 7 else 1.2), 0.02, 5))))
           for i in range(12)]
    analysis = find_changes(pts, "b", "m")
    assert len(analysis.changes) == 1
    change = analysis.changes[0]
    assert change.index == 7 and change.after_commit == pts[7].commit
    assert change.before_commit == pts[6].commit
    assert change.direction == "slower"
    assert change.magnitude == pytest.approx(0.2, abs=0.02)
    # the magnitude is the detrended difference of the records' mean log-medians, computed
    # here directly from the records
    y = np.array([np.median(np.log(p.executions)) for p in pts])
    t = np.arange(12)
    d = np.mean(y[7:] - analysis.trend * t[7:]) - np.mean(y[:7] - analysis.trend * t[:7])
    assert change.magnitude == pytest.approx(math.expm1(d), rel=1e-9)
    assert (change.n_before, change.n_after) == (7, 5)  # records, not executions
    assert change.confidence > 0.999 and change.p_value < 1e-3


def test_three_records_with_the_last_slower_name_the_last() -> None:
    rng = np.random.default_rng(4)
    pts = [point(i, list(np.exp(rng.normal(math.log(m), 0.01, 4))))
           for i, m in enumerate((1.0, 1.0, 1.2))]
    changes = find_changes(pts, "b", "m").changes
    assert [c.after_record for c in changes] == [2]


@pytest.mark.parametrize("seed", range(10))
def test_no_change_in_unchanged_code(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    # run-to-run noise plus drift between records of the same size
    pts = [point(i, list(np.exp(rng.normal(rng.normal(0, 0.01), 0.01, 5)))) for i in range(20)]
    assert find_changes(pts, "b", "m", min_change=0.05).changes == []


def test_too_short_or_noise_unknown_series_say_why() -> None:
    assert "at least 3" in (find_changes([point(0, [1.0, 1.1])]).note or "")
    single = [point(i, [1.0 + 0.1 * i]) for i in range(4)]
    assert "noise unknown" in (find_changes(single).note or "")
