"""Issue 27 item 2: ``iters`` and ``sweep`` failed "singular" on large counts.

A program whose BATCHTIME is small against its run time (start-up outside the timed region)
doubled its count up to 10¹²; the fit of BATCHTIME on ``[iters, 1]`` then judged the two
columns dependent ("the system is singular (rank 1 < 2 unknowns)"), with spikes or without,
and ``sweep --sizes 100,1000,10000 --report`` failed the same way (and its report could not
draw a histogram of per-iteration times equal up to rounding). Now the fit works on columns
scaled by powers of two, the count is bounded by what the budget allows by the program's own
BATCHTIME, and one line says when BATCHTIME and the program's run time disagree.
"""

from __future__ import annotations

import stat

import numpy as np
import pytest

from steadybench.cli import main
from steadybench.output.results_io import load_results
from steadybench.programs.commands import Command
from steadybench.programs.iters import (
    ItersOptions,
    batchtime_agreement,
    finish_iters_case,
    fit_iters,
    next_iters,
    sweep_iters,
)
from steadybench.programs.process import ProcessRun
from steadybench.stats.regression import robust_fit
from steadybench.testing import SimulatedClock


class StartUpProgram:
    """A protocol program on a simulated clock whose run is ``startup`` seconds of start-up
    (outside the timed region) plus BATCHTIME = ``per_iter``·iters, times ``spike`` on every
    ``every``-th run; it prints ``shown``·BATCHTIME (a wrong clock when ``shown`` ≠ 1)."""

    def __init__(self, per_iter: float, startup: float, spike: float = 1.0, every: int = 0,
                 shown: float = 1.0, noise: float = 0.0) -> None:
        self.clock = SimulatedClock()
        self.per_iter, self.startup, self.spike, self.every = per_iter, startup, spike, every
        self.shown, self.noise = shown, noise
        self.counts: list[int] = []
        self.rng = np.random.default_rng(3)
        self.timeout = 60.0

    def resolve(self, argv):
        return list(argv)

    def run(self, argv, timeout=None):
        iters = int(argv[1])
        self.counts.append(iters)
        batch = self.per_iter * iters * (1 + self.noise * self.rng.standard_normal())
        if self.every and len(self.counts) % self.every == 0:
            batch *= self.spike
        t0 = self.clock()
        self.clock.advance((batch + self.startup) * 1e9)
        return ProcessRun(wall_ns=self.clock() - t0, user_time=batch, sys_time=0.0,
                          max_rss=None, exit_code=0, signal=None, timed_out=False,
                          stdout=f"BATCHTIME: {batch * self.shown!r}\n", stderr_tail="")


def sweep(prog: StartUpProgram, **options):
    opts = ItersOptions(**options)
    return finish_iters_case(sweep_iters(Command.from_line("prog"), prog, opts), opts)


@pytest.mark.parametrize("every", [0, 7])
def test_counts_up_to_ten_to_the_twelve_fit_with_or_without_spikes(every):
    # 50 ms of start-up, 1e-15 s per iteration: the count doubles to max_iters (10^12)
    prog = StartUpProgram(per_iter=1e-15, startup=0.05, spike=5.0, every=every, noise=0.01)
    case = sweep(prog, max_time=3.0)
    assert max(prog.counts) == 10**12 and len(prog.counts) >= 50
    assert not case.errors, case.errors  # was "fit failed: ... singular (rank 1 < 2 ...)"
    assert case.estimate.value == pytest.approx(1e-15, rel=0.02)
    assert case.estimate.ci_low <= 1e-15 <= case.estimate.ci_high
    assert any("BATCHTIME is " in w and "outside the timed region" in w for w in case.warnings)


def test_scaled_fit_equals_the_exact_solution_of_the_unscaled_system():
    x = np.array([2.0 ** k for k in range(41)])
    y = 3e-15 * x + 2e-6
    sol = robust_fit(np.column_stack([x, np.ones_like(x)]), y, names=("slope", "intercept"))
    assert sol.values[0] == pytest.approx(3e-15, rel=1e-9)
    assert sol.values[1] == pytest.approx(2e-6, rel=1e-6)
    fit = fit_iters(x, y * (1 + 1e-3 * np.sin(np.arange(x.size))))
    assert fit["slope"] == pytest.approx(3e-15, rel=1e-3)


def test_the_count_stays_within_what_the_budget_allows_by_batchtime():
    # 1 ms per iteration, no start-up: ×1.2 growth would overshoot a 1 s budget by 20 %
    prog = StartUpProgram(per_iter=1e-3, startup=0.0)
    case = sweep(prog, max_time=1.0)
    spent = case.extra["time_spent"]
    assert 1.0 <= spent <= 1.0 + 2e-3  # the last count fits what was left (was 1.202 s)
    opts = ItersOptions()
    assert next_iters(100, 0.1, opts, budget_left=0.5) == 121  # ×1.2 + 1 fits
    assert next_iters(100, 0.1, opts, budget_left=0.105) == 105
    assert next_iters(100, 0.1, opts, budget_left=0.0001) == 1
    assert next_iters(100, 0.1, opts, budget_left=-1.0) == 101  # spent: distinct counts
    # over the budget for min_points: every point has its own count, so a line still fits
    over = StartUpProgram(per_iter=0.1, startup=0.0)
    case = sweep(over, max_time=0.01, min_points=5)
    assert over.counts == [1, 2, 3, 4, 5] and case.estimate.value == pytest.approx(0.1)


def test_batchtime_longer_than_the_whole_run_is_said():
    prog = StartUpProgram(per_iter=1e-4, startup=1e-3, shown=10.0)
    case = sweep(prog, max_time=0.2)
    line = batchtime_agreement(case)
    assert line is not None and "longer than the program's whole run" in line
    assert line in case.warnings
    assert batchtime_agreement(sweep(StartUpProgram(per_iter=1e-4, startup=1e-4),
                                     max_time=0.2)) is None


def test_sweep_with_large_counts_writes_its_report(tmp_path, capsys):
    prog = tmp_path / "tiny.sh"
    prog.write_text("#!/bin/sh\n"
                    "exec awk -v n=\"$1\" 'BEGIN { printf \"BATCHTIME: %.17g\\n\", n * 1e-15 }'\n")
    prog.chmod(prog.stat().st_mode | stat.S_IXUSR)
    out, report = tmp_path / "r.json", tmp_path / "r.html"
    # 1 doubles to 2^39 (5.5e11) in 40 points and to max_iters (1e12) at the 41st, as long
    # as the time budget is not spent: the default 1 s of wall time for 44 runs of sh and awk
    # was spent by the 40th beside two CPU hogs (issue 27), after which the count grows by one.
    # A budget that 44 runs cannot spend: the schedule, not the machine's load, sets the counts.
    code = main(["sweep", "--sizes", "100,1000,10000", "--min-points", "44", "--max-points", "44",
                 "--max-time", "3600", "--report", str(report), "--json", str(out), "--",
                 str(prog), "{iters}", "{size}"])
    err = capsys.readouterr().err
    assert code == 0, err
    results = load_results(out)
    assert [c.params["size"] for c in results.cases] == [100, 1000, 10000]
    for case in results.cases:
        assert not case.errors
        assert max(case.values("iters")) == 1e12
        assert case.estimate.value == pytest.approx(1e-15, rel=1e-6)
    assert report.stat().st_size > 0 and "internal error" not in err
