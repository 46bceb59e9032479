"""Measurement methods against a simulated clock: the accuracy pattern of Moreno & Fischmeister.

SimulatedClock(read_cost_ns=8_500) makes the systematic error ε = 8.5 µs; the workload takes
100 µs. direct is off by ε, batch by ε/N, linefit and differential recover 100 µs within their
CIs, initsplit recovers T_e, T_i and ε.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import steadybench as sb
from steadybench.errors import ConfigurationError, MeasurementError
from steadybench.methods import (
    MAX_UNROLL,
    METHOD_NAMES,
    BatchMethod,
    InitSplitMethod,
    LineFitMethod,
    StatementImplementation,
    fit_points,
    make_method,
    trimmed_mean_ci,
)
from steadybench.methods.unroll import build_timed_body
from steadybench.model.results import Results
from steadybench.testing import SimulatedClock, time_function

WORK_NS = 100_000
EPS_NS = 8_500
WORK = WORK_NS / 1e9
EPS = EPS_NS / 1e9


def _measure(method, runs=60, clock=None, **options):
    clock = clock or SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, seed=4)
    work = clock.workload(WORK_NS)
    if method == "usertimed":  # the code times itself: a time function of the loop count
        work = time_function(work, clock)
    return sb.measure(work, method=method, clock=clock, runs=runs, **options)


def test_direct_is_off_by_epsilon():
    est = _measure("direct")
    assert est.value == pytest.approx(WORK + EPS, rel=2e-3)
    assert not est.ci_low <= WORK <= est.ci_high


def test_measure_returns_a_measurement_of_the_case_estimate():
    est = _measure("linefit", runs=30)
    assert isinstance(est, sb.Measurement) and isinstance(est, sb.Estimate)
    assert est.estimate == est.case.estimate and type(est.estimate) is sb.Estimate
    assert (est.value, est.ci_low, est.ci_high) == (
        est.case.estimate.value, est.case.estimate.ci_low, est.case.estimate.ci_high)
    assert est.method == "linefit" and est.unit == "s" and est.n_runs == 30
    assert est["overhead"] == est.fields["overhead"] == est.figure("overhead")
    assert est["value"] == est.value and est["ci_low"] == est.ci_low
    with pytest.raises(KeyError):
        est["no such figure"]
    data = est.to_dict()
    assert data["value"] == est.value and len(data["x"]) == len(data["y"]) == 30
    assert data["fields"]["overhead"] == est["overhead"] and "case" not in data


def test_batch_is_off_by_epsilon_over_n():
    est = _measure("batch")
    n = est["executions"]
    assert n >= 50
    assert est.value == pytest.approx(WORK + EPS / n, rel=1e-4)
    assert est.value - WORK == pytest.approx(EPS / n, rel=0.05)
    assert est["bias_bound"] == pytest.approx(EPS / n, rel=0.05)
    fixed = _measure("batch", executions=4)
    assert fixed.value == pytest.approx(WORK + EPS / 4, rel=1e-3)


def test_linefit_recovers_work_and_overhead():
    est = _measure("linefit")
    assert est.ci_low <= WORK <= est.ci_high
    assert est.value == pytest.approx(WORK, rel=1e-3)
    assert est["overhead_ci"][0] <= EPS <= est["overhead_ci"][1]
    assert est["r2"] > 0.999
    assert est["points"] == 60 and est["dropped"] == 0
    fit = est.case.extra["fit"]
    assert fit["kind"] == "linefit" and fit["x_label"] == "executions"
    assert sorted(set(fit["x"])) == [float(k) for k in range(1, 21)] and len(fit["y"]) == 60
    assert fit["loglog"]["power"] == pytest.approx(1.0, abs=0.1)
    assert set(fit) >= {"slope", "intercept", "slope_ci", "confidence", "r2", "msd", "dropped"}


def test_differential_recovers_work():
    est = _measure("differential", runs=200)
    assert est.ci_low <= WORK <= est.ci_high
    assert est.value == pytest.approx(WORK, rel=2e-3)
    assert est["median_ci"][0] <= WORK <= est["median_ci"][1]
    assert est["differences"] == 200


def test_initsplit_recovers_te_ti_and_epsilon():
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, seed=2)
    est = sb.measure(clock.workload(WORK_NS), method="initsplit", clock=clock, runs=80,
                     init=clock.workload(30_000))
    assert est.ci_low <= WORK <= est.ci_high
    lo, hi = est["T_i_ci"]
    assert lo <= 30e-6 <= hi
    lo, hi = est["epsilon_ci"]
    assert lo <= EPS <= hi
    assert est["T_e"] == pytest.approx(WORK, rel=0.01)
    system = est.case.extra["system"]
    # the default schedule varies the extra initialisations: round 2 runs F twice, init 4 times
    assert system["kind"] == "initsplit" and [2.0, 4.0, 1.0] in system["rows"]


def test_initsplit_paper_schedule_still_recovers_te():
    """``schedule="paper"`` (002 §5: M_1 = N_1 = 1, M_k = N_k + 1) is kept as an option."""
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, seed=2)
    est = sb.measure(clock.workload(WORK_NS), method="initsplit", clock=clock, runs=80,
                     init=clock.workload(30_000), schedule="paper")
    assert est.ci_low <= WORK <= est.ci_high
    assert [2.0, 3.0, 1.0] in est.case.extra["system"]["rows"]


def test_spikes_are_dropped_by_robust_refit():
    # an interrupt of 500 µs before 3 % of the reads: it lengthens the sample it ends
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, spike_prob=0.03,
                           spike_ns=500_000, seed=11)
    est = sb.measure(clock.workload(WORK_NS), method="linefit", clock=clock, runs=100)
    fit = est.case.extra["fit"]
    y = np.asarray(fit["y"])
    x = np.asarray(fit["x"])
    resid = y - (WORK * x + EPS)
    spiky = set(np.flatnonzero(np.abs(resid) > 200e-6).tolist())
    assert len(spiky) >= 2 and spiky <= set(fit["dropped"])
    assert est["dropped"] == len(fit["dropped"])
    assert est.ci_low <= WORK <= est.ci_high
    assert fit["straight"] and fit["converged"]


def test_spikes_bias_the_fit_without_refit():
    def run(threshold):
        clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, spike_prob=0.03,
                               spike_ns=500_000, seed=11)
        return sb.measure(clock.workload(WORK_NS), method="linefit", clock=clock, runs=100,
                          threshold=threshold)

    robust, plain = run(6.0), run(float("inf"))
    assert plain["msd"] > 100 * robust["msd"]
    assert abs(robust.value - WORK) < abs(plain.value - WORK) or \
        plain.ci_high - plain.ci_low > 10 * (robust.ci_high - robust.ci_low)


def test_linefit_calibrates_base_batch_for_fast_code():
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, seed=3)
    est = sb.measure(clock.workload(50), method="linefit", clock=clock, runs=40)
    assert est["base_batch"] >= 0.95 * 10 * EPS_NS / 50  # calibrated: about 1700
    # one seed: the 95 % interval (half-width 0.01 % here) may miss the truth by a little; the
    # estimate is within 0.05 % of it and within three half-widths (the interval's coverage
    # is checked by simulation elsewhere)
    half = (est.ci_high - est.ci_low) / 2
    assert est.value == pytest.approx(50e-9, rel=5e-4)
    assert abs(est.value - 50e-9) <= 3 * half


def test_statement_string_is_unrolled():
    clock = SimulatedClock(read_cost_ns=EPS_NS)
    ns = {"work": clock.workload(WORK_NS)}
    est = sb.measure("work()", method="linefit", clock=clock, globals=ns, runs=20, base_batch=1)
    assert est.value == pytest.approx(WORK, rel=1e-9)
    assert est["overhead"] == pytest.approx(EPS, rel=1e-6)
    with pytest.raises(ConfigurationError, match="does not compile"):
        sb.measure("x = = 1", method="linefit", clock=clock, name="broken")
    with pytest.raises(ConfigurationError, match="'broken'"):
        StatementImplementation("def (", name="broken")


def test_unrolled_body_counts_calls_and_loops_beyond_limit():
    calls = {"f": 0, "i": 0}

    def f():
        calls["f"] += 1

    def i():
        calls["i"] += 1

    body = build_timed_body(7, 8)
    assert body(f, i, lambda: 0) == 0
    assert calls == {"f": 7, "i": 8}
    calls.update(f=0, i=0)
    body = build_timed_body(2 * MAX_UNROLL + 5)
    body(f, i, lambda: 0)
    assert calls["f"] == 2 * MAX_UNROLL + 5
    with pytest.raises(ConfigurationError):
        build_timed_body(MAX_UNROLL + 1, MAX_UNROLL + 1)


def test_results_round_trip_json():
    for method in METHOD_NAMES:
        kwargs = {"init": lambda: None} if method == "initsplit" else {}
        est = _measure(method, runs=30, **kwargs)
        results = Results(cases=[est.case])
        data = json.loads(json.dumps(results.to_dict()))
        back = Results.from_dict(data)
        assert back.cases[0].estimate == est.case.estimate
        assert back.cases[0].estimate.value == pytest.approx(est.value)
        assert back.cases[0].method == method


def test_make_method_options_and_errors():
    m = make_method("linefit", points="10", base_batch="auto", threshold="inf")
    assert isinstance(m, LineFitMethod) and m.points == 10 and m.fixed_batch is None
    assert make_method("batch", executions="5").executions == 5
    with pytest.raises(ConfigurationError, match="unknown method"):
        make_method("nope")
    with pytest.raises(ConfigurationError, match="no option 'bogus'"):
        make_method("linefit", bogus=1)
    with pytest.raises(ConfigurationError, match="'points'.*at least 3"):
        make_method("linefit", points=2)
    with pytest.raises(ConfigurationError, match="'executions'"):
        BatchMethod(executions=-1)
    with pytest.raises(ConfigurationError, match="'trim'"):
        make_method("differential", trim=0.7)
    with pytest.raises(ConfigurationError, match="'threshold'"):
        make_method("linefit", threshold=0.5)
    with pytest.raises(ConfigurationError, match="'points'.*integer"):
        make_method("linefit", points="many")


def test_initsplit_schedule_checks():
    with pytest.raises(ConfigurationError, match="singular"):
        InitSplitMethod(schedule=[(k, k + 1) for k in range(1, 8)])
    with pytest.raises(ConfigurationError, match="more than 3"):
        InitSplitMethod(schedule=[(1, 1), (2, 3), (3, 5)])
    with pytest.raises(ConfigurationError, match="N ≤ M"):
        InitSplitMethod(schedule=[(1, 1), (2, 1), (3, 5), (4, 4)])
    with pytest.raises(ConfigurationError, match="'rounds'"):
        InitSplitMethod(rounds=3)
    ok = InitSplitMethod(schedule=[(1, 1), (2, 3), (3, 3), (4, 6), (5, 5)])
    assert ok.inits[4] == 6


def test_callable_that_raises_is_a_clear_error():
    def boom(*loops):  # usertimed passes the loop count
        raise RuntimeError("kaput")

    for method in METHOD_NAMES:
        with pytest.raises(MeasurementError, match="boomer.*kaput"):
            sb.measure(boom, method=method, clock=SimulatedClock(read_cost_ns=10), runs=5,
                       name="boomer")


def test_too_few_points_and_non_positive_slope():
    clock = SimulatedClock(read_cost_ns=EPS_NS)
    with pytest.raises(MeasurementError, match="at least 3 points"):
        sb.measure(clock.workload(WORK_NS), method="linefit", clock=clock, runs=2, warmup=0,
                   name="short")
    with pytest.raises(MeasurementError, match="not positive"):
        fit_points("linefit", [1, 2, 3, 4], [4e-6, 3e-6, 2e-6, 1e-6], 0.95)
    # code the clock cannot see: calibration refuses instead of looping for ever
    with pytest.raises(MeasurementError, match="nothing.*no measurable time"):
        sb.measure(lambda: None, method="linefit", clock=SimulatedClock(read_cost_ns=EPS_NS),
                   runs=20, name="nothing")


def test_trimmed_mean_ci_matches_scipy():
    from scipy import stats as sps
    from scipy.stats import mstats

    rng = np.random.default_rng(0)
    x = rng.standard_t(3, 57)
    mean, se, lo, hi = trimmed_mean_ci(x, 0.1, 0.9)
    assert mean == pytest.approx(sps.trim_mean(x, 0.1))
    assert se == pytest.approx(float(mstats.trimmed_stde(x, limits=(0.1, 0.1))), rel=1e-6)
    g = int(0.1 * 57)
    t = sps.t.ppf(0.95, 57 - 2 * g - 1)
    assert hi - mean == pytest.approx(t * se)


def test_manager_path_uses_method(tmp_path):
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100)
    runner = sb.Runner(sb.Runs(40), clock=clock, sleep=clock.sleep,
                       method=make_method("linefit"))
    bench = sb.Benchmark("work").add_configuration(
        runner, sb.CallableImplementation(clock.workload(WORK_NS), name="work"))
    results = sb.Manager(benchmarks=[bench]).run()
    case = results.cases[0]
    assert case.method == "linefit"
    assert case.estimate.ci_low <= WORK <= case.estimate.ci_high
    assert case.stats["mean"] > WORK  # per-sample wall_time still carries ε/k


# ---------------------------------------------------------------------------- issue 14
def test_initsplit_recovers_te_ti_epsilon_with_interrupts():
    """Done-when of issue 14: known T_e, T_i and ε on the simulated clock with spikes (5 % of
    the reads preceded by a 50–500 µs interrupt), each within its interval."""
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=100, spike_prob=0.05,
                           spike_ns=(50_000, 500_000), seed=5)
    est = sb.measure(clock.workload(WORK_NS), method="initsplit", clock=clock, runs=100,
                     init=clock.workload(30_000))
    assert clock.spikes > 5
    assert est.ci_low <= WORK <= est.ci_high
    assert est["T_i_ci"][0] <= 30e-6 <= est["T_i_ci"][1]
    assert est["epsilon_ci"][0] <= EPS <= est["epsilon_ci"][1]
    assert est.value == pytest.approx(WORK, rel=0.01)
    assert est["T_i"] == pytest.approx(30e-6, rel=0.05)
    assert est["dropped"] >= 3
    system = est.case.extra["system"]
    assert set(system["dropped"]) and system["straight"]


def test_initsplit_plain_least_squares_fails_where_the_robust_fit_does_not():
    clock_args = dict(read_cost_ns=EPS_NS, jitter_ns=100, spike_prob=0.05,
                      spike_ns=(50_000, 500_000), seed=5)

    def run(threshold):
        clock = SimulatedClock(**clock_args)
        return sb.measure(clock.workload(WORK_NS), method="initsplit", clock=clock, runs=100,
                          init=clock.workload(30_000), threshold=threshold)

    robust = run(6.0)
    try:
        plain = run(float("inf"))
        plain_error = abs(plain["T_i"] - 30e-6)
    except MeasurementError:  # "not positive": what issue 14 saw on real code
        plain_error = float("inf")
    assert plain_error > 10 * abs(robust["T_i"] - 30e-6)


def test_warmup_never_takes_the_identifying_round():
    # fewer runs than rounds, and warm-up: with the paper's schedule the round N = M = 1 (the
    # only one without an extra initialisation) is still measured first
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=50, seed=6)
    est = sb.measure(clock.workload(WORK_NS), method="initsplit", clock=clock, runs=8,
                     warmup=5, init=clock.workload(30_000), schedule="paper")
    rows = est.case.extra["system"]["rows"]
    assert rows[0] == [1.0, 1.0, 1.0] and len(rows) == 8
    assert est["T_i_ci"][0] <= 30e-6 <= est["T_i_ci"][1]
    warm = [x for x, s in zip(est.case.metrics["executions"], est.case.status) if s == "warmup"]
    assert warm == [20.0, 19.0, 18.0, 17.0, 16.0]  # from the far end of the schedule
    # linefit: every sweep starts at k = 1 whatever the warm-up
    lf = sb.measure(clock.workload(WORK_NS), method="linefit", clock=clock, runs=40,
                    warmup=7, base_batch=1)
    assert lf.x[:3] == [1.0, 2.0, 3.0] and lf.x[20:22] == [1.0, 2.0]


def test_in_process_interval_says_it_is_within_one_execution():
    est = _measure("linefit")
    assert est.level == "runs" and not est.independent
    assert est["interval_scope"].startswith("within one execution only")
    assert est["ci_basis"]  # which spread made the interval


def test_linefit_interval_includes_sweep_to_sweep_variation():
    # the work per execution drifts by 6 % over the measurement: the residuals of one pooled
    # fit would give a narrow interval around the average; the sweeps' spread widens it and
    # the fit says the points drift
    clock = SimulatedClock(read_cost_ns=EPS_NS, jitter_ns=50, seed=8)
    calls = [0]

    def drifting():
        calls[0] += 1
        clock.advance(WORK_NS * (1 + 0.06 * min(calls[0] / 2_100, 1.0)))

    est = sb.measure(drifting, method="linefit", clock=clock, runs=200, base_batch=1)
    fit = est.case.extra["fit"]
    assert len(fit["sweep_slopes"]) == 10
    assert "sweeps" in est["ci_basis"] or "other readings" in est["ci_basis"]
    assert est.ci_high - est.ci_low > fit["slope_ci_fit"][1] - fit["slope_ci_fit"][0]
    assert any("drifted" in w for w in est.case.warnings) and not fit["straight"]
    # the interval reaches the slopes of the first and the second half (about +1.5 % and
    # +4.5 %), where the residuals of the pooled fit gave a tenth of that width
    assert est.ci_low <= WORK * 1.02 and est.ci_high >= WORK * 1.045


def test_figures_across_executions_feed_the_estimate():
    """With ≥ 2 executions, T_i and ε get the interval across executions (Kalibera & Jones),
    as the value does; with one, the method's own interval stands and says it is within one
    execution."""
    from steadybench.methods.base import build_estimate
    from steadybench.model.results import CaseResult
    from steadybench.stats.summary import across_executions

    te = [100.0, 101.0, 99.5, 100.5, 100.2, 99.8, 100.9]
    ti = [30.0, 31.0, 29.0, 30.5, 30.2, 29.7, 30.8]
    case = CaseResult("b", "i", processes=[
        {"value": a, "figures": {"T_i": b, "epsilon": 8.5}} for a, b in zip(te, ti)])
    est = build_estimate(case, {"value": 100.0, "ci_low": 99.99, "ci_high": 100.01,
                                "confidence": 0.95, "T_i": 30.0, "T_i_ci": [29.99, 30.01]},
                         "initsplit")
    ref_te, ref_ti = across_executions(te, 0.95), across_executions(ti, 0.95)
    assert est.level == "executions" and est.n_executions == 7
    assert (est.value, est.ci_low, est.ci_high) == (ref_te.centre, ref_te.low, ref_te.high)
    assert est.figure("T_i") == ref_ti.centre
    assert est.figure("T_i_ci") == [ref_ti.low, ref_ti.high]
    assert est.figure("T_i_executions") == ti and est.figure("epsilon") == 8.5
    assert est.figure("interval_scope") == "across 7 independent executions"


def test_initsplit_in_worker_processes_reports_figures_per_execution():
    import time

    est = sb.measure("sum(range(200))", method="initsplit", init=time.monotonic, runs=40,
                     processes=2)
    assert est.level == "executions" and est.n_executions == 2
    assert len(est["T_i_executions"]) == 2 and len(est["T_i_ci"]) == 2
    assert all("T_i" in p.figures for p in est.case.processes)


def _unstable_warnings(values: list[float]) -> list[str]:
    from steadybench.methods.base import build_estimate, warn_if_unstable
    from steadybench.model.results import CaseResult

    case = CaseResult("b", "i", processes=[{"value": v} for v in values])
    case.estimate = build_estimate(case, {"statistic": "median", "confidence": 0.95}, "auto")
    warn_if_unstable(case)
    return case.warnings


def test_one_slow_execution_does_not_call_a_median_unstable():
    """Issue 10's "may be unstable": 24 executions within ±1 % and one 50 % slower (a busy
    moment of a shared VM) give an SD-based CoV of about 10 %, yet the median of executions
    does not move; the warning measures the spread the way the headline is made (robust CoV)."""
    values = [6.0 * (1 + 0.01 * ((i * 7) % 5 - 2) / 2) for i in range(24)] + [9.0]
    assert _unstable_warnings(values) == []
    spread = [6.0 * (1 + 0.3 * ((i * 7) % 5 - 2) / 2) for i in range(25)]  # ±30 %: unstable
    (text,) = _unstable_warnings(spread)
    assert text.startswith("may be unstable: the 25 executions differ by")
    assert "robust CoV" in text


def test_an_interval_reaching_zero_is_flagged():
    """The demo once printed a CI of [−49.01 µs, 542 µs] with no warning (issue 10)."""
    from steadybench.methods.base import build_estimate, warn_if_unstable
    from steadybench.model.results import CaseResult

    case = CaseResult("b", "i")
    case.estimate = build_estimate(case, {"value": 57.6e-6, "ci_low": -49.01e-6,
                                          "ci_high": 542e-6, "confidence": 0.95}, "direct")
    warn_if_unstable(case)
    assert case.warnings == ["may be unstable: the interval reaches zero or below: use a quieter "
                             "machine (steadybench system tune, --preset managed), more "
                             "processes, or longer runs"]
