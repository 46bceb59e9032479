"""The heavy-tail guard of comparisons across time (steadybench.compare.between.HeavyTail).

A verdict the t-test calls at level α becomes *inconclusive* when at least 3 of the earlier
levels' consecutive differences are as large as the observed difference and their share is
above α. Simulated histories: runs of 25 executions (σ 0.02 of ln time within a run) shifted
by a run effect (σ 0.01), the history's levels their ln(median)s.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from steadybench.compare.between import (
    DEFAULT,
    MIN_RUNS,
    TAIL_MIN_COUNT,
    HeavyTail,
    across_time,
    from_levels,
    heavy_tail,
)
from steadybench.compare.protocol import (
    HEAVY_TAIL,
    SLOWER,
    CompareOptions,
    compare_pair,
    finish_verdicts,
)
from steadybench.compare.readers import Sample
from steadybench.model.results import CaseResult, Results
from steadybench.output.results_io import write_results
from steadybench.testing import guard_tally, run_level, simulated_run

_run, _level = simulated_run, run_level


def _heavy_levels(seed: int = 25, m: int = 40) -> list[float]:
    """``m`` run levels of which 30 % are shifted +30 % (a slow burst of the host)."""
    rng = np.random.default_rng(seed)
    slow = rng.random(m) < 0.30
    return [_level(_run(rng, math.log(1.3) if s else 0.0)) for s in slow]


def test_the_guard_vetoes_a_verdict_on_a_heavy_tailed_machine():
    levels = _heavy_levels()
    noise = from_levels(levels)
    assert noise is not None and noise.source == "history"
    # the biweight gives the slow runs little weight: σ is the quiet runs' spread
    assert noise.sigma < 0.03
    rng = np.random.default_rng(1)
    base, new = _run(rng), _run(rng, math.log(1.3))  # one run of identical code in a burst
    at = across_time(base, new, noise)
    assert at.differs(0.95)  # the t-test alone calls it
    diffs = np.diff(levels)
    assert at.tail == HeavyTail(int(np.sum(np.abs(diffs) >= abs(at.difference))),
                                len(levels) - 1, float(diffs[np.argmax(np.abs(diffs))]))
    assert at.tail.count >= TAIL_MIN_COUNT and at.tail.share > 0.05
    assert at.vetoed(0.95)
    text = at.inconclusive_text()
    assert text.startswith(f"inconclusive: {at.tail.count} of {len(levels) - 1} consecutive "
                           "earlier runs on this machine differed as much (up to +")
    assert text.endswith("); decide with `steadybench ab`")


def test_the_guard_does_not_veto_on_normal_levels_of_the_same_robust_spread():
    heavy = from_levels(_heavy_levels())
    rng = np.random.default_rng(2)
    raw = rng.normal(0, 1, 40)
    from steadybench.compare.between import robust_spread

    levels = list(raw * heavy.sigma / robust_spread(raw))
    normal = from_levels(levels)
    assert normal.sigma == pytest.approx(heavy.sigma, rel=1e-9)
    base, new = _run(rng), _run(rng, 0.12)  # 13 %: beyond this σ, within the burst
    plain = across_time(base, new, normal)
    assert plain.differs(0.95) and not plain.vetoed(0.95)
    assert plain.tail.count < TAIL_MIN_COUNT
    assert across_time(base, new, heavy).vetoed(0.95)  # the same pair, the heavy machine


def test_on_normal_levels_the_guard_costs_little():
    """The figures at 2,000 histories a cell are ``benchmarks/guard_cost.py``'s (20 levels:
    identical code called different 5.15 % without the guard and 5.10 % with it, a 3 % change
    found 45.75 % and 45.55 %); this test runs 1,000 and bounds what the guard may take."""
    rng = np.random.default_rng(7)
    for effect, most_lost in ((0.0, 0.0), (0.03, 0.03)):
        t = guard_tally(rng, 20, 1000, effect=effect)
        assert t.vetoed / t.trials <= most_lost + 0.01
        if effect == 0.0:
            assert t.called / t.trials < 0.08
        else:
            assert (t.called - t.vetoed) / t.trials > 0.35


def test_a_step_among_the_earlier_levels_does_not_veto_later_verdicts():
    """A real +20 % step at a random place among 12 or 20 earlier levels, then a 5 % change:
    the step spoils one consecutive difference, fewer than :data:`TAIL_MIN_COUNT`, so the
    guard vetoes only when normal shifts are as large too (``benchmarks/guard_cost.py``:
    0.2 % at 12 and at 20 levels); a rule on the share alone (c/(m − 1) > 5 %) would veto
    every one of them."""
    rng = np.random.default_rng(11)
    for m in (12, 20):
        t = guard_tally(rng, m, 300, effect=0.05, step=math.log(1.2))
        assert t.called / t.trials > 0.7
        assert t.vetoed / t.trials < 0.1
        assert t.share_alone == t.called  # what the minimum count is for


def test_the_guard_needs_earlier_runs_and_the_json_carries_it():
    rng = np.random.default_rng(3)
    base, new = _run(rng), _run(rng, 0.3)
    assert across_time(base, new, DEFAULT).tail is None  # the floor: no earlier runs
    assert heavy_tail(0.3, DEFAULT) is None
    assert from_levels(_heavy_levels(m=MIN_RUNS - 1)) is None
    at = across_time(base, new, from_levels(_heavy_levels()))
    out = json.loads(json.dumps(at.to_dict()))
    tail = out["heavy_tail"]
    assert (tail["count"], tail["total"], tail["largest"]) == (at.tail.count, 39,
                                                               at.tail.largest)
    assert tail["share"] == pytest.approx(at.tail.count / 39)
    assert tail["text"] in at.inconclusive_text()
    assert "shifts" not in out["noise"]  # the levels are in the store, not every comparison


def _sample(values: np.ndarray) -> Sample:
    return Sample("f", np.array([]), per_execution=values, unit_name="executions",
                  one_invocation=True)


def test_compare_calls_a_vetoed_difference_inconclusive_and_names_ab():
    rng = np.random.default_rng(4)
    base, new = _sample(_run(rng)), _sample(_run(rng, math.log(1.3)))
    heavy = from_levels(_heavy_levels())
    opts = CompareOptions(run_noise=lambda sample: heavy)
    row = compare_pair(base, new, opts)
    finish_verdicts([row], opts)
    assert row["verdict"] == HEAVY_TAIL
    proto = row["median_protocol"]
    assert proto["status"] == "heavy_tail"
    assert proto["assumptions"]["between_runs"]["heavy_tail"]["count"] >= TAIL_MIN_COUNT
    (why,) = [w for w in row["warnings"] if w.startswith("inconclusive: ")]
    assert "consecutive earlier runs on this machine differed as much" in why
    assert why.endswith("decide with `steadybench ab`")
    floor = CompareOptions()  # no earlier runs: the guard does not apply
    row = compare_pair(base, new, floor)
    finish_verdicts([row], floor)
    assert row["verdict"] == SLOWER


def _results(values: np.ndarray) -> Results:
    res = Results()
    case = CaseResult("loop", "loop")
    for v in values:
        case.add_run("ok", {"wall_time": float(v)})
    case.processes = [{"value": float(v), "n": 10} for v in values]
    res.cases.append(case)
    return res


def test_the_change_line_and_compare_cli_on_a_heavy_tailed_kept_store(tmp_path, monkeypatch,
                                                                      capsys):
    from steadybench.cli import main
    from steadybench.history import last_run

    monkeypatch.setenv(last_run.DIR_VARIABLE, str(tmp_path / "baselines"))
    rng = np.random.default_rng(25)
    for slow in rng.random(30) < 0.30:  # 30 kept runs, 30 % of them in a +30 % burst
        last_run.report_and_keep(_results(_run(rng, math.log(1.3) if slow else 0.0)),
                                 {"save_baseline": "pairA"})
    base = _results(_run(rng))
    last_run.report_and_keep(base, {"save_baseline": "pairA"})
    new = _results(_run(rng, math.log(1.3)))  # identical code, in a burst
    lines = last_run.report_and_keep(new, {"baseline": "pairA"})
    (line,) = [x for x in lines if x.strip().startswith("loop: +")]
    assert "inconclusive: " in line and "of 30 consecutive earlier runs on this machine " \
        "differed as much (up to +" in line and "decide with `steadybench ab`" in line
    assert "slower" not in line
    write_results(base, tmp_path / "a.json")
    write_results(new, tmp_path / "b.json")
    capsys.readouterr()
    main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json",
          str(tmp_path / "c.json")])
    row = json.loads((tmp_path / "c.json").read_text())["benchmarks"][0]
    assert row["verdict"] == HEAVY_TAIL
    assert row["run_noise"]["source"] == "history"
    shown = capsys.readouterr().out
    assert "consecutive earlier runs on this machine differed as much" in shown
