"""Suite statistics: proportion intervals, benchmarks needed, corrections, overall gain."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.compare.suite import overall_gain, suite_weights
from steadybench.stats.multiple import adjust, benjamini_hochberg, holm
from steadybench.stats.proportion import (
    clopper_pearson,
    proportion_interval,
    trials_needed,
    wilson_cc,
)


def test_wilson_cc_matches_prop_test_example_4_1():
    ci = wilson_cc(17, 30, 0.90)  # R prop.test(17, 30, conf.level=0.90)
    assert ci.low == pytest.approx(0.4027157, abs=1e-7)
    assert ci.high == pytest.approx(0.7184049, abs=1e-7)
    # at 50% the paper prints [49.84%, 64.23%]; Newcombe's formula (and R) give 48.84%, 64.24%:
    # the paper's lower bound has a typo in its first digits.
    ci50 = wilson_cc(17, 30, 0.50)
    assert ci50.high == pytest.approx(0.6423, abs=1e-4)
    assert ci50.low == pytest.approx(0.4884, abs=1e-4)


def test_wilson_cc_against_newcombe_formula():
    # Newcombe (1998) method 4, written out independently
    x, n, conf = 7, 40, 0.95
    p, q, z = x / n, 1 - x / n, sps.norm.ppf(0.975)
    low = (2 * n * p + z**2 - 1 - z * math.sqrt(z**2 - 2 - 1 / n + 4 * p * (n * q + 1))) / (
        2 * (n + z**2))
    high = (2 * n * p + z**2 + 1 + z * math.sqrt(z**2 + 2 - 1 / n + 4 * p * (n * q - 1))) / (
        2 * (n + z**2))
    ci = wilson_cc(x, n, conf)
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-12)
    assert wilson_cc(0, 10).low == 0.0 and wilson_cc(10, 10).high == 1.0


def test_clopper_pearson_and_choice():
    ref = sps.binomtest(3, 20).proportion_ci(0.95, method="exact")
    ci = clopper_pearson(3, 20, 0.95)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high))
    chosen = proportion_interval(3, 20, 0.95)
    assert chosen.method == "clopper-pearson" and "< 10" in chosen.reason
    assert proportion_interval(17, 30, 0.9).method == "wilson-cc"


def test_trials_needed_example_4_2():
    assert trials_needed(17 / 30, 0.05, 0.95) == 378
    assert trials_needed(0.0, 0.05, 0.95) == math.ceil(1.959963984540054**2 * 0.25 / 0.0025)


def test_holm_and_bh():
    p = [0.01, 0.04, 0.03, 0.02, 0.05]
    # R: p.adjust(c(.01,.04,.03,.02,.05), "holm") = .05 .09 .09 .08 .09
    assert holm(p) == pytest.approx([0.05, 0.09, 0.09, 0.08, 0.09])
    rng = np.random.default_rng(1)
    q = rng.uniform(0, 0.2, 30)
    assert benjamini_hochberg(q) == pytest.approx(sps.false_discovery_control(q))
    assert adjust(q, "none") == pytest.approx(q)
    with pytest.raises(ValueError):
        adjust(q, "bonferroni-ish")


def test_overall_gain_example_3_1():
    base, new = [3.0, 3600.0], [1.0, 3428.0]
    # equal weights: G = 1 - (1 + 3428)/(3 + 3600) = 4.82%
    assert overall_gain(base, new, suite_weights(base, "equal")) == pytest.approx(
        1 - 3429 / 3603)
    assert math.floor(overall_gain(base, new, suite_weights(base, "equal")) * 10000) / 100 == 4.82
    # fraction weights W = t/Σt: G = 4.78% (the paper truncates to 4.77%)
    g = overall_gain(base, new, suite_weights(base, "fraction"))
    assert g == pytest.approx(1 - (3 * 1 + 3600 * 3428) / (3 * 3 + 3600 * 3600))
    assert math.floor(g * 10000) / 100 == 4.77
    w = suite_weights(base, "custom", [1.0, None])
    assert w == [0.5, 0.5]


def test_cli_prints_the_documented_gain_and_the_suite_confidence(tmp_path, capsys):
    """003 Example 3.1 through the command line: the same G as docs/comparison.md states,
    and the suite's confidence in the footer of every output."""
    from steadybench.cli import main

    for name, value in (("b1", 3.0), ("b2", 3600.0), ("n1", 1.0), ("n2", 3428.0)):
        (tmp_path / f"{name}.txt").write_text(f"{value}\n" * 5)
    suite = tmp_path / "suite.csv"
    suite.write_text("Name,Sample1,Sample2,ConfLevel,Coef\nP1,b1.txt,n1.txt,0.9,1\n"
                     "P2,b2.txt,n2.txt,0.95,1\n")
    assert main(["compare", "--suite", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "G = 4.83%" in out and "Suite confidence: 90%" in out
    assert main(["compare", "--suite", str(suite), "--weights", "fraction", "--markdown",
                 "-"]) == 0
    out = capsys.readouterr().out
    assert "G = 4.78%" in out and "Suite confidence: 90%" in out
    docs = (Path(__file__).parents[1] / "docs" / "comparison.md").read_text()
    assert "G = 4.83% (equal; the paper truncates to 4.82%) and 4.78% (fraction" in docs
