"""plan: runs needed for a CI width or a power, checked against independent formulas."""

import json

import numpy as np
import pytest
from scipy import stats as sps

from steadybench.cli import main
from steadybench.compare.plan import plan, runs_for_mean_ci, runs_for_t_power, t_power


def test_t_power_known_value():
    # textbook: d = 0.5, α = 0.05 two-sided, power 0.8 → 64 per group (63.77 exactly)
    assert runs_for_t_power(0.5, 0.8, 0.05) == 64
    assert t_power(64, 0.5, 0.05) == pytest.approx(0.8015, abs=1e-3)


def test_mean_ci_runs_meets_and_is_minimal():
    n = runs_for_mean_ci(100.0, 2.0, 0.01, 0.95)
    half = lambda k: sps.t.ppf(0.975, k - 1) * 2.0 / np.sqrt(k)  # noqa: E731
    assert half(n) <= 1.0 < half(n - 1)


def test_plan_outputs(tmp_path, capsys):
    rng = np.random.default_rng(4)
    pilot = rng.normal(1.0, 0.02, 40)
    p = plan(pilot, ci_width=0.005, detect=0.05, power=0.9)
    assert p["ci"]["runs_mean"] > 2 and p["ci"]["runs_median"] > p["ci"]["runs_mean"] * 0.8
    assert p["detect"]["runs_per_side_t"] <= p["detect"]["runs_per_side_rank"] + 5
    path = tmp_path / "pilot.txt"
    path.write_text("\n".join(map(str, pilot)))
    assert main(["plan", str(path), "--ci-width", "0.5%", "--detect", "5%", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["plans"][0]["ci"]["runs_mean"] == p["ci"]["runs_mean"]
    const = plan([1.0] * 5, ci_width=0.01)
    assert const["ci"]["runs_mean"] == 2 and "no variation" in const["notes"][0]


def test_superiority_matches_all_pairs():
    from steadybench.compare.plan import superiority

    rng = np.random.default_rng(7)
    x = np.round(rng.lognormal(0, 0.1, 150), 3)  # rounded: ties included
    for delta in (0.0, 0.01, 0.2):
        d = x[:, None] + delta - x[None, :]
        off = ~np.eye(x.size, dtype=bool)
        assert superiority(x, delta) == pytest.approx(((d > 0) + 0.5 * (d == 0))[off].mean())


def test_tiny_changes_are_planned_without_a_linear_search():
    """--detect 0.1% used to search n one by one (35 s at 1%, no answer at 0.1%)."""
    rng = np.random.default_rng(8)
    pilot = rng.lognormal(0, 0.1, 1000)
    p = plan(pilot, detect=0.001, ci_width=0.001)
    n_t = p["detect"]["runs_per_side_t"]
    effect = p["detect"]["effect_size"]
    assert t_power(n_t, effect, 0.05) >= 0.9 > t_power(n_t - 1, effect, 0.05)
    n = p["ci"]["runs_mean"]
    assert 10_000 < n < 100_000


def test_power_never_nan_where_the_noncentral_t_fails():
    """scipy's noncentral t gives NaN for a large noncentrality below 10⁵ degrees of freedom
    (n = 46,352, effect 0.1); the bisection took NaN for "not enough power" (46,352 runs for a
    1% change instead of about 2,100)."""
    assert t_power(46_352, 0.1, 0.05) == pytest.approx(1.0)
    n = runs_for_t_power(0.1, 0.9, 0.05)
    assert 2000 < n < 2200
    assert t_power(n, 0.1, 0.05) >= 0.9 > t_power(n - 1, 0.1, 0.05)
